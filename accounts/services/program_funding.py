"""Just-in-time funding (docs/decisioning.md, "Just-in-time funding"): the money a card program
puts at the bank (its **funding account**, one internal account per institution and currency,
`Account.InternalCode.PROGRAM_FUNDING`) moves to a cardholder's account the moment the program
approves a payment, and back when the payment no longer needs it (released, reduced, refunded).

The funding account is the program's money, not the institution's: it may not go below zero but
by the `overdraft_limit` the institution grants the program (`program_funding_set_limit`; a
CHECK, `account_program_funding_nonneg`), so a program that approves more than it has put up is
refused (`ProgramFundsShort`), never silently lent the bank's money. The program's money comes
in and goes out as a customer's load and unload do (`adjustment_create` on the funding account,
against the institution's `funding` account: `POST /program-funding-accounts/adjustments`).

Each move is one balanced journal (`Journal.Kind.PROGRAM_FUNDING`) with the cardholder's
statement line (`CashInc` "Funded by the card program", `CashDec` "Returned to the card
program"), linked to the authorization it is for; the caller holds its transaction and the
account locks (`post` takes them in id order).
"""

from django.db import transaction
from django.utils import timezone

from core.exceptions import BusinessRuleViolation, ValidationFailed
from core.money import MAX_AMOUNT
from events.services import emit_for
from institutions.models import Institution

from ..locks import lock_accounts
from ..models import Account, Journal, StatementLine
from ..posting import FORCED, credit, debit, journal_new, post
from ..statement_lines import Line, statement_lines_new
from .accounts import internal_account

FUNDED = "Funded by the card program"
RETURNED = "Returned to the card program"


class ProgramFundsShort(Exception):  # noqa: N818 (reads as what happened)
    """The program's funding account has less available than a payment it approved."""

    def __init__(self, *, available: int, amount: int):
        self.available = available
        self.amount = amount
        super().__init__(f"program funding: {available} available, {amount} needed")


def program_funding_account(*, institution: Institution, currency: str) -> Account:
    """The institution's program funding account in `currency`, made on first use."""
    return internal_account(
        institution=institution, code=Account.InternalCode.PROGRAM_FUNDING, currency=currency
    )


def program_fund(*, account: Account, amount: int, authorization) -> Journal:
    """Move `amount` from the program's funding account in `account`'s currency to `account`
    (a cardholder's), for `authorization`, in the caller's transaction. The cardholder's
    account is locked, then the funding account (the last lock of every path that moves
    program money: one funding account serves every card of the program, so nothing waits
    for another lock while holding it), then its balance is read: `ProgramFundsShort` when it
    has less available than `amount` (nothing written)."""
    funding = program_funding_account(institution=account.institution, currency=account.currency)
    lock_accounts([account.pk])
    available = lock_accounts([funding.pk])[funding.pk].available
    if available < amount:
        raise ProgramFundsShort(available=available, amount=amount)
    return _move(
        moves=[debit(funding.pk, amount, check=""), credit(account.pk, amount, check="")],
        account=account,
        amount=amount,
        line_type=StatementLine.Type.CASH_INC,
        description=FUNDED,
        authorization=authorization,
    )


def program_defund(*, account: Account, amount: int, authorization) -> Journal:
    """Move `amount` back from `account` to the program's funding account: what the program
    funded for `authorization` and the payment no longer needs (its hold released or reduced, a
    refund). Never refused by the account's state: the money is the program's (a frozen or
    closing account gives it back too); PostgreSQL's CHECKs still hold every floor. The
    cardholder's account first, then the funding account, as `program_fund` locks them."""
    funding = program_funding_account(institution=account.institution, currency=account.currency)
    lock_accounts([account.pk])
    lock_accounts([funding.pk])
    return _move(
        # FORCED: taken whatever the account's state (frozen too), as the network's messages
        # are; a closed account holds nothing of the program's (it closed at zero).
        moves=[debit(account.pk, amount, check=FORCED), credit(funding.pk, amount, check="")],
        account=account,
        amount=amount,
        line_type=StatementLine.Type.CASH_DEC,
        description=RETURNED,
        authorization=authorization,
    )


def _move(*, moves, account, amount, line_type, description, authorization) -> Journal:
    journal = journal_new(
        institution_id=account.institution_id,
        kind=Journal.Kind.PROGRAM_FUNDING,
        description=description,
    )
    post(
        institution_id=account.institution_id,
        currency=account.currency,
        moves=moves,
        journal=journal,
        lines=statement_lines_new(
            lines=[Line(account, line_type, amount, description, card=authorization.card)],
            currency=account.currency,
            journal=journal,
            authorization=authorization,
        ),
    )
    return journal


def program_funding_set_limit(*, account: Account, limit: int) -> Account:
    """How far below zero the institution lets the program's funding account go (its
    `overdraft_limit`, minor units; 0: not at all). 400 for a limit that is not one; 422 when
    the account is not a program funding account, or the new limit leaves it below zero
    (PostgreSQL's CHECK would refuse it: the program owes more than that already). Emits
    `account.overdraft_limit_changed`, as a customer account's limit does; the same limit
    again changes nothing."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 0 <= limit <= MAX_AMOUNT:
        raise ValidationFailed(details={"overdraft_limit": f"An integer from 0 to {MAX_AMOUNT}."})
    with transaction.atomic(savepoint=False):
        account = lock_accounts([account.pk])[account.pk]
        if account.internal_code != Account.InternalCode.PROGRAM_FUNDING:
            raise BusinessRuleViolation(
                "Only a program funding account takes a limit here.",
                details={"account_id": account.pk},
            )
        if account.posted - account.pending + limit < 0:
            raise BusinessRuleViolation(
                "The program's funding account is below zero by more than that limit.",
                details={"posted": account.posted, "overdraft_limit": limit},
            )
        previous = account.overdraft_limit
        if limit == previous:
            return account
        account.overdraft_limit = limit
        account.updated_at = timezone.now()
        account.save(update_fields=["overdraft_limit", "updated_at"])
        account.refresh_from_db(fields=["available"])
        emit_for(account, "account.overdraft_limit_changed", data={"from": previous, "to": limit})
    return account
