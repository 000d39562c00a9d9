"""Reads of statement lines. Date bounds become id bounds (`core.ids.bound`): every listing is
one range scan of an (account, ..., id) index, as fast at a million lines as at ten thousand."""

from datetime import datetime

from accounts.models.statement import POSITION, StatementLine
from core.ids import bound
from core.selectors import get_of_institution
from institutions.models import Institution

PREFIX = "txn"


def transaction_list(
    *,
    account=None,
    card=None,
    from_time: datetime | None = None,
    to_time: datetime | None = None,
    type: str | None = None,
    settlement_status: str | None = None,
):
    """The lines of `account` or of `card`, with `position` (see
    `accounts.models.statement.POSITION`) to page on."""
    if (account is None) == (card is None):
        raise ValueError("give an account or a card")
    owner = {"account": account} if account is not None else {"card": card}
    # The holds of a page in one more query (a line's `status` reads its hold): the page's own
    # query stays the single index range scan that bench/listing.py measured.
    lines = (
        StatementLine.objects.filter(**owner).prefetch_related("hold").annotate(position=POSITION)
    )
    if from_time is not None:
        lines = lines.filter(position__gte=bound(PREFIX, from_time, upper=False))
    if to_time is not None:
        lines = lines.filter(position__lte=bound(PREFIX, to_time, upper=True))
    if type:
        lines = lines.filter(type=type)
    if settlement_status:
        lines = lines.filter(settlement_status=settlement_status)
    return lines


def transaction_get(*, institution: Institution, transaction_id: str) -> StatementLine:
    return get_of_institution(
        StatementLine.objects.select_related("hold"),
        institution=institution,
        id=transaction_id,
        missing="No transaction with this id.",
    )
