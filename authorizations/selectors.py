"""Reads of authorizations and returns, scoped to one institution (another institution's id is
the same 404 as an unknown one). Each comes with the id of its statement line."""

from django.db.models import OuterRef, Q, Subquery

from accounts.models import Transaction
from core.selectors import get_of_institution
from institutions.models import Institution

from .models import Authorization, CardReturn

# An authorization's status is its hold's (`Authorization.status`).
_STATUS_FILTER = {
    Authorization.Status.DECLINED: Q(decision=Authorization.Decision.DECLINED),
    Authorization.Status.PENDING: Q(hold__status="active"),
    Authorization.Status.PRESENTED: Q(hold__status="captured"),
    Authorization.Status.REVERSED: Q(hold__status="released"),
    Authorization.Status.EXPIRED: Q(hold__status="expired"),
}


def _authorizations():
    line = Transaction.objects.filter(authorization=OuterRef("pk")).values("pk")[:1]
    return Authorization.objects.select_related("hold").annotate(transaction_id=Subquery(line))


def authorization_list(
    *, institution: Institution, card_id: str | None = None, status: str | None = None
):
    authorizations = _authorizations().filter(institution=institution)
    if card_id:
        authorizations = authorizations.filter(card_id=card_id)
    if status:
        authorizations = authorizations.filter(_STATUS_FILTER[status])
    return authorizations


def authorization_get(*, institution: Institution, authorization_id: str) -> Authorization:
    return get_of_institution(
        _authorizations(),
        institution=institution,
        id=authorization_id,
        missing="No card authorization with this id.",
    )


def card_return_get(*, institution: Institution, return_id: str) -> CardReturn:
    line = Transaction.objects.filter(card_return=OuterRef("pk")).values("pk")[:1]
    return get_of_institution(
        CardReturn.objects.annotate(transaction_id=Subquery(line)),
        institution=institution,
        id=return_id,
        missing="No card return with this id.",
    )
