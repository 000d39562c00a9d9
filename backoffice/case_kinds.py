"""What may be a case (docs/back-office.md, "Case work"), declared once: the model, the event
types of a note and of an assignment, and which of its rows are still open (the "mine" queue
counts those). Read by the case services (`backoffice.services.cases`), the pages
(`backoffice.admin.cases`) and the dashboard.

The reconciliation breaks, when they land, become cases with one entry here, their two event
types (events/types.py) and `case_actions` and `CaseWork` in their admin: no table or column of
their own (`backoffice.models.Case` is keyed by the row's content type and id)."""

from dataclasses import dataclass

from django.db.models import Q

from disputes.models import Dispute
from monitoring.models import MonitoringAlert


@dataclass(frozen=True)
class CaseKind:
    """A model whose rows may be cases: the event types of a note and of an assignment (thin:
    the note's id, the assignees' ids; never the note's text, which stays in the back office),
    and `open`, its rows still to be worked on."""

    note_added: str
    assigned: str
    open: Q


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
}
