"""Loads and unloads: money into or out of an account, against the institution's funding
account."""

from django.db import transaction

from core.actors import Actor
from core.rows import new_row
from events.services import event_for

from ..models import Account, Adjustment, Journal, StatementLine
from ..posting import credit, debit, journal_new, post
from ..statement_lines import Line, statement_lines_new
from .accounts import internal_account


def adjustment_create(
    *,
    account: Account,
    direction: str,
    amount: int,
    currency: str,
    description: str = "",
    actor: Actor,
) -> Adjustment:
    """Load (`credit`) or unload (`debit`) `amount` minor units.

    A credit needs an account that is not closed; a debit an active account with the funds
    (422 `account_not_active`, `insufficient_funds`); the currency must be the account's (422
    `currency_mismatch`). Writes the journal, a `CashInc`/`CashDec` statement line, and emits
    `adjustment.posted`.
    """
    with transaction.atomic(savepoint=False):
        funding = internal_account(
            institution=account.institution,
            code=Account.InternalCode.FUNDING,
            currency=account.currency,
        )
        if direction == Adjustment.Direction.CREDIT:
            # The customer's account first: its checks (and their refusals) come first.
            moves = [credit(account.pk, amount), debit(funding.pk, amount, check="")]
            line_type = StatementLine.Type.CASH_INC
        else:
            moves = [debit(account.pk, amount), credit(funding.pk, amount, check="")]
            line_type = StatementLine.Type.CASH_DEC
        journal = journal_new(
            institution_id=account.institution_id,
            kind=Journal.Kind.ADJUSTMENT,
            description=description,
        )
        adjustment = new_row(
            Adjustment,
            institution=account.institution,
            account=account,
            direction=direction,
            amount=amount,
            currency=currency,
            description=description,
            journal=journal,
            **actor.stamp("created_by"),
        )
        post(
            institution_id=account.institution_id,
            currency=currency,
            moves=moves,
            journal=journal,
            rows=[adjustment],
            lines=statement_lines_new(
                lines=[Line(account, line_type, amount, description)],
                currency=currency,
                journal=journal,
                adjustment=adjustment,
            ),
            events=[
                event_for(
                    adjustment,
                    "adjustment.posted",
                    data={
                        "account_id": account.pk,
                        "direction": direction,
                        "amount": amount,
                        "currency": currency,
                    },
                )
            ],
        )
    return adjustment
