"""Reads of monitoring rules and alerts, always scoped to one institution: another
institution's object answers the same 404 as an unknown id."""

from core.exceptions import NotFound
from institutions.models import Institution

from .models import MonitoringAlert, MonitoringRule


def monitoring_rule_list(*, institution: Institution):
    return MonitoringRule.objects.filter(institution=institution)


def monitoring_rule_get(*, institution: Institution, rule_id: str) -> MonitoringRule:
    rule = MonitoringRule.objects.filter(institution=institution, id=rule_id).first()
    if rule is None:
        raise NotFound("No monitoring rule with this id.")
    return rule


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
    alert = (
        MonitoringAlert.objects.select_related("rule")
        .filter(institution=institution, id=alert_id)
        .first()
    )
    if alert is None:
        raise NotFound("No monitoring alert with this id.")
    return alert
