"""What staff do to monitoring: switch rules on and off, resolve alerts (docs/monitoring.md)."""

from backoffice.actions.base import Confirmation, Reason, StaffAction, enable_actions
from backoffice.actions.cases import case_actions
from monitoring.models import MonitoringAlert, MonitoringRule
from monitoring.services import alert_resolve, monitoring_rule_update
from monitoring.services.alerts import MAX_NOTE_LENGTH

# On the press: a rule's switch changes no customer's money (docs/back-office.md).
enable_rules, disable_rules = enable_actions(
    model=MonitoringRule,
    service=monitoring_rule_update,
    noun="rule",
    names=("enable_rules", "disable_rules"),
    labels=("Enable selected rules", "Disable selected rules (they stop hitting)"),
    arguments=lambda rule, enabled: {"rule": rule, "changes": {"enabled": enabled}},
)

resolve_alerts = StaffAction(
    name="resolve_alerts",
    label="Resolve selected alerts (asks for a note)",
    model=MonitoringAlert,
    # An alert resolved meanwhile is refused by the service.
    service=alert_resolve,
    arguments=lambda alert, asked: {"alert": alert, "user": asked.user, "note": asked.reason},
    reason=Reason(
        name="note",
        max_length=MAX_NOTE_LENGTH,
        help_text="Why the alert is resolved (what was checked, what was decided). Kept on "
        "each alert, shown to the institution through the API and written in the admin history.",
    ),
    confirmation=Confirmation(
        template="admin/monitoring/monitoringalert/resolve_confirmation.html",
        title="Resolve alerts",
        submit="Resolve {n} alert(s)",
    ),
    history=lambda outcome, asked: f"Resolved (admin action “Resolve”; note: “{asked.reason}”).",
    done="Resolved {n} alert(s).",
    already="Already resolved, left as they were: {ids}.",
    applies=lambda alert, user: alert.status == MonitoringAlert.Status.OPEN,
)

# Case work: a note, an assignment (`backoffice.actions.cases`; docs/back-office.md, "Case work").
note_alerts, take_alerts, assign_alerts = case_actions(model=MonitoringAlert, noun="alert")
