"""What staff do to monitoring: resolve alerts (docs/monitoring.md)."""

from backoffice.actions.base import Confirmation, Reason, StaffAction
from monitoring.models import MonitoringAlert
from monitoring.services import alert_resolve
from monitoring.services.alerts import MAX_NOTE_LENGTH

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
)
