"""Inbound entries: other banks' credits and debits to the institution's accounts, read from
the sponsor bank's files (docs/payments.md, "Inbound entries").

An entry is **received** with its file (`inbound_entry_receive`, in the file's transaction):
recorded with the account its DFI account number names (a customer account of the
institution), the number sealed. On its **settlement date** (the payments job,
`inbound_entries_settle`), in the institution's calendar, it is applied, or answered:

| the account | a credit (money in) | a debit (money out) |
|---|---|---|
| none has the number | to suspense, for staff to apply or return | returned R03 |
| closed | returned R02 | returned R02 |
| frozen | returned R16 | returned R16 |
| not in USD (ACH moves USD only) | returned R20 | returned R20 |
| a stop payment of the customer's matches it | applied | returned R08 |
| short of the amount available | applied | returned R01 |
| otherwise | applied: `rail_settlement` -> account | applied: account -> `rail_settlement` |

The rows are checked in their order: a stopped debit of a frozen account is R16, a stopped
debit the account could not cover R08. A stop matches a debit (not a prenote) to its account
from its originator (the batch header's Company Identification), of its amount when it names
one, while it is active and unexpired at the settlement (`payments.services.stop_payments`).
A prenote (zero, no money) is applied or returned by the same rules, stops and funds aside. A
return goes back in TX's next file (`payments.services.cutoff`), inside the rail's
2-banking-day window: the job runs every minute and the next cut-off is the same or the next
business day.

A SEPA direct debit the clearing presented (`inbound_debits`) waits `received` for its
settlement date too, and the same job's step settles it by its own rules (a pacs.004, not a
file: `inbound_debits.collections_settle`).

A prenote for no account is returned at once (R03: nothing to hold). A credit in suspense is
money that arrived for no account: its money waits in the rail's
suspense account until staff apply it to an account (`inbound_entry_apply`) or return it
(`inbound_entry_return`).
"""

from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.locks import lock_accounts
from accounts.models import Account, Journal, StatementLine
from accounts.posting import credit, debit, journal_new, post
from accounts.statement_lines import Line, statement_lines_new
from core.exceptions import InvalidStateTransition, ValidationFailed
from core.locks import lock_free_batch
from core.operations import Outcome, changed
from events.services import emit_for
from institutions.calendar import local_date

from ..locks import lock_inbound_entry
from ..models import ACH_RAILS, AchProfile, InboundEntry, RailFile
from ..nacha.batch_header import BatchHeader
from ..nacha.codes import TRANSACTION_CODES, return_reason
from ..nacha.file import Entry
from .external_accounts import USD
from .settlement import rail_account, rail_post
from .stop_payments import stop_payment_matching

Status = InboundEntry.Status
Code = Account.InternalCode

# Why an entry is returned, by the account's state (the table above).
NO_ACCOUNT, CLOSED, FROZEN, NOT_USD, STOPPED, SHORT = "R03", "R02", "R16", "R20", "R08", "R01"
SEPA_NOT_RETURNED = (
    "A SEPA credit in suspense is applied to an account by staff; its return is not built."
)


def inbound_entry_receive(
    *, profile: AchProfile, rail_file: RailFile, header: BatchHeader, entry: Entry
) -> InboundEntry | None:
    """Record one live entry or prenote of `rail_file` (module docstring), in the caller's
    transaction; None when the same entry (its ODFI, trace number and settlement date) came
    in an earlier file: applied once."""
    detail = entry.detail
    kind = TRANSACTION_CODES[detail.transaction_code]
    institution = profile.institution
    number = detail.dfi_account_number.strip()
    inbound = InboundEntry(
        institution=institution,
        file=rail_file,
        rail=rail_file.rail,
        direction=(
            InboundEntry.Direction.CREDIT
            if kind.direction == "credit"
            else InboundEntry.Direction.DEBIT
        ),
        amount=detail.amount,
        currency=USD,
        prenote=kind.kind == "prenote",
        transaction_code=detail.transaction_code,
        sec_code=header.standard_entry_class_code,
        trace_number=detail.trace_number,
        odfi_identification=header.odfi_identification,
        company_name=header.company_name,
        company_id=header.company_identification,
        company_entry_description=header.company_entry_description,
        receiver_name=detail.receiver_name,
        identification_number=detail.identification_number,
        account=_account_named(profile, detail.routing_number, number),
        settlement_date=header.effective_entry_date,
        status=Status.RECEIVED,
    )
    for field, value in inbound.sealed_account_number(number).items():
        setattr(inbound, field, value)
    try:
        with transaction.atomic():
            inbound.save(force_insert=True)
    except IntegrityError:  # the same entry, from an earlier file: applied once
        return None
    emit_inbound(inbound, "inbound_entry.received")
    return inbound


def _account_named(profile: AchProfile, routing_number: str, number: str) -> Account | None:
    """The institution's customer account with this number at its receiving routing number."""
    if routing_number != profile.receiving_routing_number:
        return None
    return Account.objects.filter(
        institution=profile.institution, kind=Account.Kind.CUSTOMER, account_number=number
    ).first()


def inbound_entries_settle(
    *,
    now: datetime | None = None,
    batch_size: int = 200,
    rails: Iterable[str] = ACH_RAILS,
    settle: Callable[..., object] | None = None,
) -> int:
    """Apply or answer every received entry of `rails` whose settlement date has come in its
    institution's calendar, each by `settle(inbound=, at=)` under its row lock (by default
    `inbound_entry_settle`, the module docstring's; the SEPA direct debits pass theirs,
    `inbound_debits.collections_settle`); return how many. Rows others hold are skipped: safe
    from several processes at once."""
    settle = settle or inbound_entry_settle
    now = now or timezone.now()
    # No zone is more than a day ahead of UTC: the bound narrows the rows, each entry's
    # institution's calendar decides.
    latest = now.astimezone(UTC).date() + timedelta(days=1)
    done, after = 0, ""
    while True:
        with transaction.atomic():
            batch = lock_free_batch(
                InboundEntry.objects.filter(
                    status=Status.RECEIVED,
                    rail__in=list(rails),
                    settlement_date__lte=latest,
                    pk__gt=after,
                ).select_related("institution", "account"),
                batch_size,
            )
            due = [e for e in batch if e.settlement_date <= local_date(e.institution, now)]
            for inbound in due:
                settle(inbound=inbound, at=now)
        done += len(due)
        if len(batch) < batch_size:
            return done
        after = batch[-1].pk


def inbound_entry_settle(*, inbound: InboundEntry, at: datetime) -> InboundEntry:
    """Apply one received entry, or mark it for return (module docstring), in the caller's
    transaction."""
    account = lock_accounts([inbound.account_id])[inbound.account_id] if inbound.account else None
    refusal = _refusal(inbound, account, at=at)
    if refusal == NO_ACCOUNT and inbound.direction == InboundEntry.Direction.CREDIT:
        if inbound.prenote:  # no money to hold: the originator is told at once
            _to_return(inbound, refusal, at=at)
            return inbound
        inbound_to_suspense(inbound, at=at)
    elif refusal:
        _to_return(inbound, refusal, at=at)
    else:
        inbound_apply(inbound, account, at=at)
    return inbound


def _refusal(inbound: InboundEntry, account: Account | None, *, at: datetime) -> str:
    """Why the entry cannot be applied (the module docstring's rows, in their order); "" when
    it can. A debit a stop payment returns names the stop (`inbound.stop_payment`)."""
    if account is None:
        return NO_ACCOUNT
    if account.status == Account.Status.CLOSED:
        return CLOSED
    if account.status == Account.Status.FROZEN:
        return FROZEN
    if account.currency != inbound.currency:
        return NOT_USD
    if inbound.direction != InboundEntry.Direction.DEBIT or inbound.prenote:
        return ""
    stop = stop_payment_matching(
        account_id=account.pk, company_id=inbound.company_id, amount=inbound.amount, at=at
    )
    if stop is not None:
        inbound.stop_payment = stop
        return STOPPED
    if account.available < inbound.amount:
        return SHORT
    return ""


def inbound_apply(inbound: InboundEntry, account: Account, *, at: datetime) -> None:
    """The entry's money to or from `account` (locked by the caller): `applied`."""
    if not inbound.prenote:
        journal = _journal(inbound, "received")
        if inbound.direction == InboundEntry.Direction.CREDIT:
            moves = [
                credit(account.pk, inbound.amount),
                _internal(inbound, Code.RAIL_SETTLEMENT, -1),
            ]
            kind = StatementLine.Type.CASH_INC
        else:
            moves = [debit(account.pk, inbound.amount), _internal(inbound, Code.RAIL_SETTLEMENT, 1)]
            kind = StatementLine.Type.CASH_DEC
        rail_post(
            inbound=inbound,
            institution_id=inbound.institution_id,
            currency=inbound.currency,
            moves=moves,
            journal=journal,
            lines=statement_lines_new(
                lines=[Line(account, kind, inbound.amount, _line(inbound))],
                currency=inbound.currency,
                journal=journal,
            ),
        )
    inbound.account = account
    inbound_move(inbound, Status.APPLIED, "inbound_entry.applied", at=at, applied_at=at)


def inbound_to_suspense(inbound: InboundEntry, *, at: datetime, **fields) -> None:
    """A credit no account takes: its money from the rail's settlement account to its suspense
    account, for staff (`fields`: what else the entry keeps, a SEPA credit's return code)."""
    _post(inbound, Code.RAIL_SETTLEMENT, Code.RAIL_SUSPENSE, "to suspense")
    inbound_move(inbound, Status.SUSPENSE, "inbound_entry.held_in_suspense", at=at, **fields)


def _to_return(inbound: InboundEntry, code: str, *, at: datetime) -> None:
    reason = return_reason(code)
    inbound.return_code = code
    inbound.return_reason = reason.normalized
    inbound_move(inbound, Status.RETURNING, "inbound_entry.returning", at=at)


def inbound_move(
    inbound: InboundEntry,
    status: str,
    event: str,
    *,
    at: datetime,
    actor=None,
    event_data: dict | None = None,
    **fields,
) -> None:
    """The entry moved to `status` with `fields`, its `event` (with `event_data`) by `actor`
    (None: the current)."""
    inbound.status = status
    inbound.updated_at = at
    for field, value in fields.items():
        setattr(inbound, field, value)
    inbound.save()
    emit_inbound(inbound, event, actor, **(event_data or {}))


def _internal(inbound: InboundEntry, code: str, sign: int):
    """The rail account's side of a posting: `sign` 1 credits it, -1 debits it."""
    account = rail_account(inbound.institution, code, inbound.currency)
    if sign > 0:
        return credit(account.pk, inbound.amount, check="")
    return debit(account.pk, inbound.amount, check="")


def _post(inbound: InboundEntry, source: str, target: str, what: str) -> None:
    rail_post(
        inbound=inbound,
        institution_id=inbound.institution_id,
        currency=inbound.currency,
        moves=[_internal(inbound, source, -1), _internal(inbound, target, 1)],
        journal=_journal(inbound, f"received, {what}"),
    )


def _rail_name(inbound: InboundEntry) -> str:
    return "ACH" if inbound.rail in ACH_RAILS else "SEPA"


def _journal(inbound: InboundEntry, description: str) -> Journal:
    return journal_new(
        institution_id=inbound.institution_id,
        kind=Journal.Kind.INBOUND_ENTRY,
        description=f"{_rail_name(inbound)} {description} {inbound.pk}",
    )


def _line(inbound: InboundEntry) -> str:
    side = "from" if inbound.direction == InboundEntry.Direction.CREDIT else "to"
    about = (
        inbound.company_entry_description if inbound.rail in ACH_RAILS else inbound.remittance_info
    )
    return f"{_rail_name(inbound)} {side} {inbound.company_name.strip()}: {about}"


def emit_inbound(inbound: InboundEntry, event: str, actor=None, **extra) -> None:
    """The entry's event (`extra`: what else it carries), the actor's (None: the current)."""
    data = {
        "inbound_entry_id": inbound.pk,
        "account_id": inbound.account_id,
        "direction": inbound.direction,
        "amount": inbound.amount,
        "currency": inbound.currency,
        "prenote": inbound.prenote,
        "company_name": inbound.company_name,
        "status": inbound.status,
    }
    if inbound.rail not in ACH_RAILS:
        data["rail"] = inbound.rail
        data["end_to_end_id"] = inbound.end_to_end_id
    if inbound.return_code:
        data["return_code"] = inbound.return_code
    if inbound.stop_payment_id:
        data["stop_payment_id"] = inbound.stop_payment_id
    emit_for(inbound, event, data={**data, **extra}, actor=actor)


# --- staff: the suspense queue ----------------------------------------------------------------
def inbound_entry_apply(*, inbound: InboundEntry, account: Account) -> Outcome[InboundEntry]:
    """A credit in suspense applied to `account` of its institution (staff, four eyes: the
    back office's declared action): the money from suspense to the account
    (`suspense_place`). 409 unless in suspense; 400 when the account cannot take it."""
    with transaction.atomic(savepoint=False):
        inbound = _locked(inbound.pk, Status.APPLIED)
        account = suspense_place(
            institution=inbound.institution,
            account=account,
            amount=inbound.amount,
            currency=inbound.currency,
            journal=_journal(inbound, "received, applied from suspense"),
            description=_line(inbound),
            inbound=inbound,
        )
        inbound.account = account
        now = timezone.now()
        # A SEPA credit's would-be return reason is moot once it is applied.
        inbound_move(
            inbound,
            Status.APPLIED,
            "inbound_entry.applied",
            at=now,
            applied_at=now,
            return_code="",
            return_reason="",
        )
    return changed(inbound, Status.SUSPENSE)


def suspense_place(
    *,
    institution,
    account: Account,
    amount: int,
    currency: str,
    journal: Journal,
    description: str,
    inbound: InboundEntry | None = None,
) -> Account:
    """Money waiting in the institution's `rail_suspense` account placed on `account` (staff,
    four eyes), in the caller's transaction: suspense -> the account, with the account's
    statement line (cash in, `description`); the account, locked. 400 when the account cannot
    take it: not a customer account of the institution in `currency`, or not active. The
    journal is the inbound entry's (`inbound`, kept as its `RailJournal`), or, with none, a
    reconciliation break's credit booked to suspense (docs/reconciliation.md, "The breaks'
    work")."""
    if (
        account.institution_id != institution.pk
        or account.currency != currency
        or account.kind != Account.Kind.CUSTOMER
    ):
        raise ValidationFailed(
            details={
                "account_id": f"A customer account of the institution in {currency}: the money's "
                "currency."
            }
        )
    account = lock_accounts([account.pk])[account.pk]
    if account.status != Account.Status.ACTIVE:
        raise ValidationFailed(details={"account_id": "The account is not active."})
    suspense = rail_account(institution, Code.RAIL_SUSPENSE, currency)
    posting = {
        "institution_id": institution.pk,
        "currency": currency,
        "moves": [credit(account.pk, amount), debit(suspense.pk, amount, check="")],
        "journal": journal,
        "lines": statement_lines_new(
            lines=[Line(account, StatementLine.Type.CASH_INC, amount, description)],
            currency=currency,
            journal=journal,
        ),
    }
    if inbound is not None:
        rail_post(inbound=inbound, **posting)
    else:
        post(**posting)
    return account


def inbound_entry_return(*, inbound: InboundEntry, code: str = NO_ACCOUNT) -> Outcome[InboundEntry]:
    """A credit in suspense returned (staff, four eyes): its money from suspense back to the
    rail's settlement account, and a return in TX's next file. 409 unless in suspense; 400 for a
    SEPA credit, whose return (a transfer back through the partner bank) is not built."""
    if inbound.rail not in ACH_RAILS:
        raise ValidationFailed(details={"code": SEPA_NOT_RETURNED})
    reason = return_reason(code)
    if reason.normalized == "unknown":
        raise ValidationFailed(details={"code": "A return reason code R01-R85."})
    with transaction.atomic(savepoint=False):
        inbound = _locked(inbound.pk, Status.RETURNING)
        _post(inbound, Code.RAIL_SUSPENSE, Code.RAIL_SETTLEMENT, "returned from suspense")
        _to_return(inbound, code, at=timezone.now())
    return changed(inbound, Status.SUSPENSE)


def _locked(inbound_id: str, to: str) -> InboundEntry:
    inbound = lock_inbound_entry(inbound_id)
    if inbound.status != Status.SUSPENSE:
        raise InvalidStateTransition(
            f"The inbound entry is {inbound.status}.", from_state=inbound.status, to_state=to
        )
    return inbound
