"""Reads of monitoring rules and alerts, always scoped to one institution: another
institution's object answers the same 404 as an unknown id."""

from core.selectors import get_of_institution
from institutions.models import Institution

from .models import MonitoringAlert, MonitoringRule


def monitoring_rule_list(*, institution: Institution):
    return MonitoringRule.objects.filter(institution=institution)


def monitoring_rule_get(*, institution: Institution, rule_id: str) -> MonitoringRule:
    return get_of_institution(
        MonitoringRule,
        institution=institution,
        id=rule_id,
        missing="No monitoring rule with this id.",
    )


def alert_list(
    *,
    institution: Institution,
    status: str | None = None,
    card_id: str | None = None,
    rule_id: str | None = None,
):
    alerts = MonitoringAlert.objects.filter(institution=institution)
    if status:
        alerts = alerts.filter(status=status)
    if card_id:
        alerts = alerts.filter(card_id=card_id)
    if rule_id:
        alerts = alerts.filter(rule_id=rule_id)
    return alerts.select_related("rule")


def alert_get(*, institution: Institution, alert_id: str) -> MonitoringAlert:
    return get_of_institution(
        MonitoringAlert.objects.select_related("rule"),
        institution=institution,
        id=alert_id,
        missing="No monitoring alert with this id.",
    )
