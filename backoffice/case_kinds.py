"""What may be a case (docs/back-office.md, "Case work"), declared once: the model, the event
types of a note and of an assignment, and which of its rows are still open (the "mine" queue
counts those). Read by the case services (`backoffice.services.cases`), the pages
(`backoffice.admin.cases`) and the dashboard.

The reconciliation breaks are cases with one entry here, their two event types
(events/types.py) and `case_actions` and `CaseWork` in their admin: no table or column of their
own (`backoffice.models.Case` is keyed by the row's content type and id). A break's state
follows its assignment (`open -> assigned`, back to `open` when nobody works it): its kind's
`on_assign`, called in the assignment's transaction."""

from collections.abc import Callable
from dataclasses import dataclass

from django.db.models import Q

from disputes.models import Dispute
from monitoring.models import MonitoringAlert
from reconciliation.models import OPEN_STATES, ReconciliationBreak
from reconciliation.services.breaks import break_mark_assigned


@dataclass(frozen=True)
class CaseKind:
    """A model whose rows may be cases: the event types of a note and of an assignment (thin:
    the note's id, the assignees' ids; never the note's text, which stays in the back office),
    and `open`, its rows still to be worked on; `on_assign(row, assignee)`, what the row's own
    app does when its case is assigned (None: nothing)."""

    note_added: str
    assigned: str
    open: Q
    on_assign: Callable | None = None


CASE_KINDS = {
    Dispute: CaseKind(
        note_added="dispute.note_added",
        assigned="dispute.assigned",
        open=~Q(status=Dispute.Status.CLOSED),
    ),
    MonitoringAlert: CaseKind(
        note_added="monitoring.alert_note_added",
        assigned="monitoring.alert_assigned",
        open=Q(status=MonitoringAlert.Status.OPEN),
    ),
    ReconciliationBreak: CaseKind(
        note_added="reconciliation_break.note_added",
        assigned="reconciliation_break.assigned",
        open=Q(state__in=OPEN_STATES),
        on_assign=break_mark_assigned,
    ),
}
