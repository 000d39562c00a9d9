"""Reads of disputes, scoped to one institution (another institution's id is the same 404 as
an unknown one), each with its steps (the dispute's history, oldest first) and its deadlines;
and the disputes due, for the back office's queue."""

from django.db.models import Exists, OuterRef, Prefetch

from core.selectors import get_of_institution
from institutions.models import Institution

from .models import Dispute, DisputeDeadline, DisputeStep


def _disputes():
    return Dispute.objects.prefetch_related(
        Prefetch("steps", queryset=DisputeStep.objects.order_by("id")),
        Prefetch("deadlines", queryset=DisputeDeadline.objects.order_by("due_on", "name")),
    )


def dispute_list(
    *,
    institution: Institution,
    status: str | None = None,
    card_id: str | None = None,
    account_id: str | None = None,
    authorization_id: str | None = None,
    due_by=None,
):
    """`due_by` (a date): only those with a deadline not met due on or before it (the disputes
    due: a work queue)."""
    disputes = _disputes().filter(institution=institution)
    if due_by is not None:
        due = DisputeDeadline.objects.filter(
            dispute=OuterRef("pk"), met_at__isnull=True, due_on__lte=due_by
        )
        disputes = disputes.filter(Exists(due))
    for name, value in (
        ("status", status),
        ("card_id", card_id),
        ("account_id", account_id),
        ("authorization_id", authorization_id),
    ):
        if value:
            disputes = disputes.filter(**{name: value})
    return disputes


def dispute_get(*, institution: Institution, dispute_id: str) -> Dispute:
    return get_of_institution(
        _disputes(), institution=institution, id=dispute_id, missing="No dispute with this id."
    )


def due_dispute_ids():
    """The ids of the disputes due (a subquery): the dashboard's queue and its list."""
    return (
        DisputeDeadline.objects.filter(met_at__isnull=True)
        .exclude(approaching_at__isnull=True, missed_at__isnull=True)
        .values("dispute_id")
    )
