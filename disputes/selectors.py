"""Reads of disputes, scoped to one institution (another institution's id is the same 404 as
an unknown one), each with its steps (the dispute's history, oldest first)."""

from django.db.models import Prefetch

from core.selectors import get_of_institution
from institutions.models import Institution

from .models import Dispute, DisputeStep


def _disputes():
    return Dispute.objects.prefetch_related(
        Prefetch("steps", queryset=DisputeStep.objects.order_by("id"))
    )


def dispute_list(
    *,
    institution: Institution,
    status: str | None = None,
    card_id: str | None = None,
    account_id: str | None = None,
    authorization_id: str | None = None,
):
    disputes = _disputes().filter(institution=institution)
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
