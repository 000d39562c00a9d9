"""`/monitoring-alerts`: the hits of the institution's rules, newest first. Read-only: staff
review and resolve alerts in the back office (docs/design.md section 8)."""

from drf_spectacular.utils import OpenApiParameter

from api.schema import both, document
from api.views import TXView

from ..models import MonitoringAlert
from ..selectors import alert_get, alert_list
from .serializers import MonitoringAlertOut, MonitoringAlertQuery


class MonitoringAlertListView(TXView):
    @document(
        name="MonitoringAlert",
        resources=both(MonitoringAlertOut),
        many=True,
        parameters=[
            OpenApiParameter(
                "status", str, enum=MonitoringAlert.Status.values, description="Only these."
            ),
            OpenApiParameter("cardId", str, description="Only the alerts of this card."),
            OpenApiParameter("ruleId", str, description="Only the alerts of this rule."),
        ],
        summary="List monitoring alerts, newest first",
        description="One alert per rule hit, for rules with action `alert` and `decline` "
        "alike. Alerts are resolved by the back office; `resolvedAt` and `resolutionNote` say "
        "when and why.",
        operation_id="monitoring_alerts_list",
        tags=["Monitoring"],
    )
    def get(self, request):
        query = self.parse_query(MonitoringAlertQuery)
        alerts = alert_list(
            institution=self.institution,
            status=query.get("status"),
            card_id=query.get("cardId"),
            rule_id=query.get("ruleId"),
        )
        return self.respond_list(alerts, MonitoringAlertOut)


class MonitoringAlertDetailView(TXView):
    @document(
        name="MonitoringAlert",
        resources=both(MonitoringAlertOut),
        summary="Retrieve a monitoring alert",
        operation_id="monitoring_alerts_retrieve",
        tags=["Monitoring"],
    )
    def get(self, request, alertId):  # noqa: N803 (path parameters are camelCase)
        alert = alert_get(institution=self.institution, alert_id=alertId)
        return self.respond(MonitoringAlertOut(alert).data)
