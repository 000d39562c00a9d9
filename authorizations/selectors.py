"""Reads of authorizations and returns, scoped to one institution (another institution's id is
the same 404 as an unknown one). Each comes with the id of its statement line."""

from django.db.models import OuterRef, Subquery

from accounts.models import Hold, StatementLine
from core.selectors import get_of_institution
from institutions.models import Institution

from .models import Authorization, AuthorizationIncrement, CardReturn

# An approved authorization's status is its hold's (`Authorization.status`).
_HOLD_STATUS = {status: hold for hold, status in Authorization._STATUS_OF_HOLD.items()}


def _authorizations():
    line = StatementLine.objects.filter(authorization=OuterRef("pk")).values("pk")[:1]
    return Authorization.objects.select_related("hold").annotate(transaction_id=Subquery(line))


def authorization_list(
    *, institution: Institution, card_id: str | None = None, status: str | None = None
):
    authorizations = _authorizations().filter(institution=institution)
    if card_id:
        authorizations = authorizations.filter(card_id=card_id)
    if status == Authorization.Status.DECLINED:
        authorizations = authorizations.filter(decision=Authorization.Decision.DECLINED)
    elif status == Authorization.Status.AWAITING_PROGRAM:
        authorizations = authorizations.filter(decision=Authorization.Decision.AWAITING_PROGRAM)
    elif status:
        # Spelled out as the holds' partial index is (hold_card_auth_status_idx), so that a rare
        # status is found there rather than among the institution's every authorization.
        authorizations = authorizations.filter(
            hold__institution=institution,
            hold__purpose=Hold.Purpose.CARD_AUTHORIZATION,
            hold__status=_HOLD_STATUS[status],
            # Not one the program declined (its hold released) or is deciding (held).
            decision=Authorization.Decision.APPROVED,
        )
    return authorizations


def authorization_get(*, institution: Institution, authorization_id: str) -> Authorization:
    return get_of_institution(
        _authorizations(),
        institution=institution,
        id=authorization_id,
        missing="No card authorization with this id.",
    )


def authorization_increment_list(*, authorization: Authorization):
    """Its increments, newest first (the authorization already read in its institution)."""
    return AuthorizationIncrement.objects.filter(authorization=authorization).order_by("-id")


def authorization_increment_get(
    *, institution: Institution, increment_id: str
) -> AuthorizationIncrement:
    return get_of_institution(
        AuthorizationIncrement.objects.select_related("authorization"),
        institution=institution,
        id=increment_id,
        missing="No authorization increment with this id.",
    )


def card_return_get(*, institution: Institution, return_id: str) -> CardReturn:
    line = StatementLine.objects.filter(card_return=OuterRef("pk")).values("pk")[:1]
    return get_of_institution(
        CardReturn.objects.annotate(transaction_id=Subquery(line)),
        institution=institution,
        id=return_id,
        missing="No card return with this id.",
    )
