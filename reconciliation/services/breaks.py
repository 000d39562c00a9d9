"""The breaks' work (docs/reconciliation.md, "Breaks"): a break assigned, and the resolutions
staff make.

Two resolutions book the bank's money on the mirrored account (`rail_settlement`, whose
entries are the statement's ledger lines), each asked by one staff user and approved by another
(the back office's four eyes: `backoffice.services.staff_changes`), carried out here:

- `credit`: a `bank_only` break of money in (amount > 0): the money from the mirrored account
  (money in debits it) to the institution's `rail_suspense` account of its currency, where it
  waits to be placed, as an inbound credit for no account does;
- `fee`: a `bank_only` break of money out or an `amount_mismatch` below 0 (the bank took more
  than the ledger says): |amount| out of the mirrored account (credited) to `fees`.

Each posting is value-dated to the statement line's value date (`Journal.value_at`, the start
of the day in the institution's time zone: never after the posting, so a line dated later is
refused until its day), and its ledger line is added to the line's match (`MatchedLedgerLine`,
a new `ReconciliationMatch` when the line has none): a later run never sees it alone. The break
is resolved (`resolution`, `resolved_on` the value date) with `reconciliation_break.resolved`,
all in one transaction, under the account's reconciliation lock (a run's too: a run resolving
the same break waits, or is waited for) and the break's row lock (`locks.lock_break`): a second
or stale approval finds it resolved and posts nothing (409).

`break_place`: a credit booked to suspense placed on a customer account of the institution
(four eyes too), through the inbound credits' posting path
(`payments.services.inbound.suspense_place`: suspense -> the account, its statement line), in a
journal of kind `reconciliation`. The break is resolved already (its difference stands no more:
the bank's money is in the books): its `resolution` goes `booked_to_suspense ->
placed_on_account`, under the break's row lock, so its money is placed once (a second or stale
approval is 409 and posts nothing); `reconciliation_break.placed`.

`break_resolve_without_money`: one staff user, for a break whose amount is 0 only: a
resolution that books nothing leaves any difference standing, and the proof would no longer
count it.
"""

from datetime import date, datetime, time
from zoneinfo import ZoneInfo

from django.db import transaction
from django.utils import timezone

from accounts.models import Account, Journal
from accounts.posting import credit, debit, journal_new, post
from accounts.services.accounts import internal_account
from core.exceptions import BusinessRuleViolation, InvalidStateTransition
from core.operations import Outcome, changed
from events.services import emit_for
from institutions.calendar import local_date
from payments.services.inbound import suspense_place

from ..locks import lock_break, lock_reconciliation
from ..models import (
    OPEN_STATES,
    BankStatement,
    MatchedLedgerLine,
    MatchedStatementLine,
    ReconciliationBreak,
    ReconciliationMatch,
)

Kind = ReconciliationBreak.Kind
State = ReconciliationBreak.State

CREDIT, FEE = "credit", "fee"
# The break's `resolution` for each way it is resolved (a run's own is "matched").
RESOLUTIONS = {
    CREDIT: "booked_to_suspense",
    FEE: "booked_bank_fee",
}
NO_MONEY = "no_difference"
# A credit booked to suspense, placed on a customer account since (`break_place`).
PLACED = "placed_on_account"


def bookable(brk: ReconciliationBreak, how: str) -> None:
    """422 unless `brk` is a break `how` books: still open, of the kind and sign it takes."""
    if brk.state not in OPEN_STATES:
        raise InvalidStateTransition(
            f"The break is {brk.state} already.", from_state=brk.state, to_state=State.RESOLVED
        )
    if how == CREDIT:
        right = brk.kind == Kind.BANK_ONLY and brk.amount > 0
        wanted = "a bank-only break of money in (amount above 0)"
    elif how == FEE:
        right = brk.kind in (Kind.BANK_ONLY, Kind.AMOUNT_MISMATCH) and brk.amount < 0
        wanted = "a bank-only or amount-mismatch break the bank took money on (amount below 0)"
    else:
        raise ValueError(f"Not a booking of a break: {how!r}")
    if not right or brk.statement_id is None:
        raise BusinessRuleViolation(
            f"Only {wanted} can be booked so; this one is {brk.kind} of {brk.amount}.",
            details={"break_id": brk.pk, "kind": brk.kind, "amount": brk.amount},
        )


def _lines(brk: ReconciliationBreak):
    """The statement lines the break concerns: its own, or its match's."""
    if brk.statement_line_id is not None:
        return [brk.statement_line]
    matched = brk.match.statement_lines.select_related("statement_line")
    return [item.statement_line for item in matched]


def value_date(brk: ReconciliationBreak) -> date:
    """The date the bank's money counts from: the latest of its lines' value dates."""
    days = [line.value_date or line.booking_date for line in _lines(brk)]
    days = [day for day in days if day is not None]
    return (
        max(days)
        if days
        else brk.statement.period_end or local_date(brk.institution, timezone.now())
    )


def _match_of(brk: ReconciliationBreak, line) -> ReconciliationMatch:
    """The match the new ledger line joins: the break's, the line's, or a new one of the line
    (its run the break's)."""
    if brk.match_id is not None:  # an amount mismatch: what it lacked is booked now
        match = brk.match
        match.difference -= brk.amount
        match.save(update_fields=["difference"])
        return match
    found = MatchedStatementLine.objects.filter(statement_line=line).select_related("match").first()
    if found is not None:
        return found.match
    match = ReconciliationMatch.objects.create(
        institution_id=brk.institution_id, run_id=brk.run_id, how=ReconciliationMatch.How.BOOKED
    )
    MatchedStatementLine.objects.create(statement_line=line, match=match)
    return match


def break_book(*, brk: ReconciliationBreak, how: str) -> Outcome[ReconciliationBreak]:
    """Book the break's money (`how`: CREDIT or FEE, module docstring) and resolve it, in one
    transaction; the actor is the operation's (the approving staff user). 409 once resolved;
    422 for a break of another kind or sign, or whose line's value date is after today."""
    with transaction.atomic(savepoint=False):
        # The account's reconciliation lock first, as a run takes it before it resolves breaks:
        # a run and a booking of the same break follow one another (the break's statement and
        # its account never change).
        accounts = BankStatement.objects.filter(breaks=brk.pk).values_list("account_id", flat=True)
        for account_id in accounts:
            lock_reconciliation(account_id)
        brk = lock_break(brk.pk)
        bookable(brk, how)
        statement = brk.statement
        institution = brk.institution
        day = value_date(brk)
        if day > local_date(institution, timezone.now()):
            raise BusinessRuleViolation(
                f"The line's value date {day} is after today: book it from that day on.",
                details={"break_id": brk.pk, "value_date": day.isoformat()},
            )
        amount = abs(brk.amount)
        code = Account.InternalCode.RAIL_SUSPENSE if how == CREDIT else Account.InternalCode.FEES
        other = internal_account(institution=institution, code=code, currency=brk.currency)
        mirrored = statement.account_id
        if how == CREDIT:  # money in debits the mirrored account
            moves = [debit(mirrored, amount, check=""), credit(other.pk, amount, check="")]
            what = "bank-only credit booked to suspense"
        else:
            moves = [credit(mirrored, amount, check=""), debit(other.pk, amount, check="")]
            what = "bank fee booked"
        journal = journal_new(
            institution_id=institution.pk,
            kind=Journal.Kind.RECONCILIATION,
            description=f"{what} (break {brk.pk})",
        )
        journal.value_at = datetime.combine(day, time.min, ZoneInfo(institution.time_zone))
        post(institution_id=institution.pk, currency=brk.currency, moves=moves, journal=journal)
        entry = journal.entries.get(account_id=mirrored)
        lines = _lines(brk)
        MatchedLedgerLine.objects.create(entry=entry, match=_match_of(brk, lines[0]))
        _resolve(brk, RESOLUTIONS[how], day, journal_id=journal.pk)
    return changed(brk, State.OPEN)


def placeable(brk: ReconciliationBreak) -> None:
    """409 unless the break's credit waits in suspense: resolved `booked_to_suspense`, not
    placed yet."""
    if brk.state != State.RESOLVED or brk.resolution != RESOLUTIONS[CREDIT]:
        placed = brk.resolution == PLACED
        raise InvalidStateTransition(
            "Its credit is placed on an account already."
            if placed
            else "Only a bank-only credit booked to suspense is placed on an account; this "
            f"break is {brk.state}{f' ({brk.resolution})' if brk.resolution else ''}.",
            from_state=brk.resolution or brk.state,
            to_state=PLACED,
        )


def break_place(*, brk: ReconciliationBreak, account: Account) -> Outcome[ReconciliationBreak]:
    """Place a break's credit booked to suspense on `account`, a customer account of its
    institution (module docstring), as the operation's actor (the approving staff user). 409
    unless it waits in suspense (placed already: nothing twice); 400 when the account cannot
    take it (another institution's, another currency, not a customer's, not active)."""
    with transaction.atomic(savepoint=False):
        brk = lock_break(brk.pk)
        placeable(brk)
        line = brk.statement_line
        journal = journal_new(
            institution_id=brk.institution_id,
            kind=Journal.Kind.RECONCILIATION,
            description=f"bank-only credit placed from suspense (break {brk.pk})",
        )
        account = suspense_place(
            institution=brk.institution,
            account=account,
            amount=brk.amount,
            currency=brk.currency,
            journal=journal,
            description=_described(line),
        )
        brk.resolution, brk.updated_at = PLACED, timezone.now()
        brk.save(update_fields=["resolution", "updated_at"])
        emit_for(
            brk,
            "reconciliation_break.placed",
            data={"break_id": brk.pk, "account_id": account.pk, "journal_id": journal.pk},
        )
    return changed(brk, RESOLUTIONS[CREDIT])


def _described(line) -> str:
    """The customer's statement line of a placed credit: who sent it and what for, as the
    bank's statement says (never an account number: the statement keeps none)."""
    if line is None:
        return "Credit received"
    sender = line.counterparty_name.strip() or "the bank"
    about = (line.remittance or line.end_to_end_id or line.bank_reference).strip()
    return (f"Credit from {sender}: {about}" if about else f"Credit from {sender}")[:500]


def break_resolve_without_money(*, brk: ReconciliationBreak) -> Outcome[ReconciliationBreak]:
    """Resolve a break whose amount is 0 (no difference stands), by one staff user: the
    reason is the action's (the admin history). 422 for any other amount: its money must be
    booked, or the break stays; 409 once resolved."""
    with transaction.atomic(savepoint=False):
        brk = lock_break(brk.pk)
        if brk.state not in OPEN_STATES:
            raise InvalidStateTransition(
                f"The break is {brk.state} already.", from_state=brk.state, to_state=State.RESOLVED
            )
        if brk.amount != 0:
            raise BusinessRuleViolation(
                "Only a break of amount 0 is resolved without money: this one's difference "
                "stands until its money is booked.",
                details={"break_id": brk.pk, "amount": brk.amount},
            )
        _resolve(brk, NO_MONEY, local_date(brk.institution, timezone.now()))
    return changed(brk, State.OPEN)


def _resolve(brk: ReconciliationBreak, resolution: str, day: date, journal_id=None) -> None:
    now = timezone.now()
    brk.state, brk.resolution, brk.resolved_on = State.RESOLVED, resolution, day
    brk.resolved_at = brk.updated_at = now
    brk.save(update_fields=["state", "resolution", "resolved_at", "resolved_on", "updated_at"])
    emit_for(
        brk,
        "reconciliation_break.resolved",
        data={"break_id": brk.pk, "resolution": resolution, "journal_id": journal_id},
    )


def break_mark_assigned(brk: ReconciliationBreak, assignee) -> None:
    """A break's case assigned (`backoffice.case_kinds`): `open -> assigned` when someone works
    it, back to `open` when nobody does; a resolved break stays resolved. The case's event
    (`reconciliation_break.assigned`) says it."""
    with transaction.atomic(savepoint=False):
        brk = lock_break(brk.pk)
        if brk.state == State.RESOLVED:
            return
        state = State.OPEN if assignee is None else State.ASSIGNED
        if brk.state != state:
            brk.state, brk.updated_at = state, timezone.now()
            brk.save(update_fields=["state", "updated_at"])
