"""The row locks of monitoring (docs/design.md section 2): a rule or an alert changed by staff,
each alone (docs/money.md, "Locking"). The row only, not the institution or rule read with it."""

from .models import MonitoringAlert, MonitoringRule


def lock_rule(rule_id) -> MonitoringRule:
    """The rule, its row locked until the transaction ends, with its institution."""
    return (
        MonitoringRule.objects.select_for_update(of=("self",))
        .select_related("institution")
        .get(pk=rule_id)
    )


def lock_alert(alert_id) -> MonitoringAlert:
    """The alert, its row locked until the transaction ends, with its institution and rule."""
    return (
        MonitoringAlert.objects.select_for_update(of=("self",))
        .select_related("institution", "rule")
        .get(pk=alert_id)
    )
