"""Statement lines written: built by the services that move money (`statement_lines_new`) and
written with their posting (`accounts.posting.post`) or on their own (`statement_lines_record`),
in the operation's transaction."""

from dataclasses import dataclass
from datetime import datetime

from core.rows import new_row

from ..models import Account, Adjustment, Hold, Journal, StatementLine


@dataclass(frozen=True)
class Line:
    account: Account
    type: str
    amount: int
    description: str = ""
    settlement_status: str = StatementLine.SettlementStatus.PRESENTMENT
    card: object | None = None  # cards.Card: the card the money moved through, if any


def statement_lines_new(
    *,
    lines: list[Line],
    currency: str,
    journal: Journal | None = None,
    hold: Hold | None = None,
    transfer=None,
    adjustment: Adjustment | None = None,
    authorization=None,
    card_return=None,
    merchant: dict | None = None,
    merchant_amount: int | None = None,
    merchant_currency: str | None = None,
    created_at: datetime | None = None,
) -> list[StatementLine]:
    """One statement line per customer account (internal accounts have no statement), not yet
    written: `accounts.posting.post` writes them with the posting (or `statement_lines_record`
    on its own). `merchant_amount`/`merchant_currency`: a card payment's in a currency other
    than the account's (docs/card-transactions.md, "Foreign currency"). `created_at`: the
    posting's instant (default: now, for each line)."""
    stamp = {} if created_at is None else {"created_at": created_at}
    return [
        new_row(
            StatementLine,
            institution_id=line.account.institution_id,
            account=line.account,
            type=line.type,
            settlement_status=line.settlement_status,
            amount=line.amount,
            currency=currency,
            description=line.description[:500],
            journal=journal,
            hold=hold,
            transfer=transfer,
            adjustment=adjustment,
            authorization=authorization,
            card_return=card_return,
            merchant=merchant,
            merchant_amount=merchant_amount,
            merchant_currency=merchant_currency,
            card=line.card,
            **stamp,
        )
        for line in lines
        if not line.account.is_internal
    ]


def statement_lines_record(**arguments) -> list[StatementLine]:
    """Write `statement_lines_new(...)` now (a line that records no posting of its own)."""
    return StatementLine.objects.bulk_create(statement_lines_new(**arguments))
