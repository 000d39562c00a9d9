from django.urls import path

from .apis.alerts import MonitoringAlertDetailView, MonitoringAlertListView
from .apis.rules import MonitoringRuleDetailView, MonitoringRuleListView

urlpatterns = [
    path("monitoring-rules", MonitoringRuleListView.as_view(), name="monitoring-rules"),
    path(
        "monitoring-rules/<str:ruleId>",
        MonitoringRuleDetailView.as_view(),
        name="monitoring-rule",
    ),
    path("monitoring-alerts", MonitoringAlertListView.as_view(), name="monitoring-alerts"),
    path(
        "monitoring-alerts/<str:alertId>",
        MonitoringAlertDetailView.as_view(),
        name="monitoring-alert",
    ),
]
