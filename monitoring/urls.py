from django.urls import path

from .apis.alerts import MonitoringAlertDetailView, MonitoringAlertListView
from .apis.rules import MonitoringRuleDetailView, MonitoringRuleListView

urlpatterns = [
    path("monitoring-rules", MonitoringRuleListView.as_view(), name="monitoring-rules"),
    path(
        "monitoring-rules/<id:ruleId>",
        MonitoringRuleDetailView.as_view(),
        name="monitoring-rule",
    ),
    path("monitoring-alerts", MonitoringAlertListView.as_view(), name="monitoring-alerts"),
    path(
        "monitoring-alerts/<id:alertId>",
        MonitoringAlertDetailView.as_view(),
        name="monitoring-alert",
    ),
]
