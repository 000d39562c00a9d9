"""Loads and unloads: money into or out of an account, against the institution's funding
account."""

from django.db import transaction

from core.actors import Actor
from events.services import emit_for

from ..locks import lock_accounts
from ..models import Account, Adjustment, Journal, Transaction
from ..posting import CREDIT, DEBIT, Leg, post_journal
from ..rules import check_can_credit, check_can_debit, check_currency
from ..statement_lines import Line, statement_lines_record
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
        locked = lock_accounts([account.pk, funding.pk])
        account, funding = locked[account.pk], locked[funding.pk]
        check_currency(account, currency)
        if direction == Adjustment.Direction.CREDIT:
            check_can_credit(account)
            legs = [Leg(funding, DEBIT, amount), Leg(account, CREDIT, amount)]
            line_type = Transaction.Type.CASH_INC
        else:
            check_can_debit(account, amount)
            legs = [Leg(account, DEBIT, amount), Leg(funding, CREDIT, amount)]
            line_type = Transaction.Type.CASH_DEC
        journal = post_journal(
            institution=account.institution,
            kind=Journal.Kind.ADJUSTMENT,
            currency=currency,
            legs=legs,
            description=description,
        )
        adjustment = Adjustment.objects.create(
            institution=account.institution,
            account=account,
            direction=direction,
            amount=amount,
            currency=currency,
            description=description,
            journal=journal,
            **actor.stamp("created_by"),
        )
        statement_lines_record(
            lines=[Line(account, line_type, amount, description)],
            currency=currency,
            journal=journal,
            adjustment=adjustment,
        )
        emit_for(
            adjustment,
            "adjustment.posted",
            data={
                "accountId": account.pk,
                "direction": direction,
                "amount": amount,
                "currency": currency,
            },
        )
    return adjustment
