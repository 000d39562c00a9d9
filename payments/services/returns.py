"""Returns and notifications of change read from the bank's files (docs/payments.md, "Returns").

**A return is a fact, not a request**: it is booked whatever the customer's account holds. A
return of an order not yet settled is the bank's rejection (`rejected`), one after settlement
a return (`returned`); both keep the code.

- a returned **credit** (the receiver's bank refused the money): it comes back to the account,
  from the settlement account once settled, else from the clearing account; a closed account
  takes nothing, so its money waits in the rail's suspense account for staff. What comes back
  of a settled SEPA credit may be less than was sent (the returning bank's charges, a recall's
  FOCR return): that is booked, and the rest stays spent through the settlement account;
- a returned **debit** (the payer's bank took the money back): once settled, the collected
  money leaves the account again, its returns hold released first; what the account cannot
  cover (spent meanwhile) is booked to **returns receivable**, what the customer now owes the
  bank: the account never goes below what it may (PostgreSQL's CHECK), and the journal still
  balances (tested at the edge: a return of exactly, and of one minor unit more than, what is
  available). Not yet settled: nothing had moved;
- a returned **prenote**: its external account `failed`.

Every return keeps its code as sent (R01-R85) beside its normalized reason, and is `late` when
it arrives after its window (2 banking days after the settlement date; 60 calendar days for an
unauthorized consumer debit): booked all the same. A return of a trace number TX does not know
is recorded (`RailNotice`, no order) for reconciliation, never an error.

A notification of change (C01-C14) moves no money: it corrects the external account
(`external_account_correct`) and is recorded.
"""

from datetime import date, datetime, timedelta

from accounts.locks import lock_accounts
from accounts.models import Account, Hold, StatementLine
from accounts.posting import FORCED, credit, debit
from accounts.services import hold_release
from accounts.statement_lines import Line, statement_lines_new
from institutions.calendar import local_date

from ..calendar import ach_days_after
from ..iso20022.codes import Reason as IsoReason
from ..locks import lock_payment_order
from ..models import ExternalAccount, PaymentOrder, RailFile, RailNotice
from ..nacha.codes import ReturnReason
from .external_accounts import external_account_correct, external_account_status
from .order_events import emit_order
from .settlement import order_journal, rail_account, rail_label, rail_post

Status = PaymentOrder.Status
RETURNABLE = (Status.SCHEDULED, Status.SENT, Status.SETTLED)


def is_late(order: PaymentOrder, reason: ReturnReason, day: date) -> bool:
    """Whether a return arriving on `day` (the institution's date) is past its window: banking
    days are ACH days (the Fed's business days the institution is open)."""
    window = getattr(reason, "window", None)  # an ISO 20022 reason has none
    if window is None or order.effective_date is None:
        return False
    if window.unit == "banking":
        last = ach_days_after(order.institution, order.effective_date, window.days)
    else:
        last = order.effective_date + timedelta(days=window.days)
    return day > last


def order_return(
    *,
    order: PaymentOrder,
    reason: ReturnReason | IsoReason,
    rail_file: RailFile,
    at: datetime,
    kind: str = RailNotice.Kind.RETURN,
    amount: int | None = None,
) -> RailNotice:
    """Book a return of `order` (module docstring), in the caller's transaction; record it. An
    order returned already (or cancelled, rejected): recorded, nothing booked. `reason` is a
    NACHA return reason or an ISO 20022 one (`iso20022.codes.reason`: AC04...); `kind` the
    notice's (a SEPA status report's rejection: `reject`). `amount`: what came back of a
    settled credit when the bank's file says (a SEPA return less the returning bank's charges);
    less than the order's is booked as it came (`returned_amount`), never more."""
    order = lock_payment_order(order.pk)
    late = is_late(order, reason, local_date(order.institution, at))
    notice = RailNotice(
        institution=order.institution,
        file=rail_file,
        kind=kind,
        code=reason.code,
        reason=reason.normalized,
        original_trace_number=order.end_to_end_id or order.trace_number,
        order=order,
        late=late,
    )
    if order.status in RETURNABLE:
        if order.prenote:
            external_account_status(
                external=order.external_account,
                status=ExternalAccount.Status.FAILED,
                reason=reason.normalized,
            )
        elif order.direction == PaymentOrder.Direction.CREDIT:
            if order.status == Status.SETTLED and amount is not None and 0 < amount < order.amount:
                order.returned_amount = amount
            _credit_comes_back(order)
        elif order.status == Status.SETTLED:
            _debit_taken_back(order)
        # Before settlement the bank refused it: rejected; after, returned.
        order.status = Status.RETURNED if order.status == Status.SETTLED else Status.REJECTED
        order.return_code = reason.code
        order.return_reason = reason.normalized
        order.returned_at = order.updated_at = at
        order.return_late = late
        order.save(
            update_fields=[
                "status",
                "return_code",
                "return_reason",
                "returned_at",
                "return_late",
                "returned_amount",
                "updated_at",
            ]
        )
        emit_order(
            order,
            "payment_order.returned"
            if order.status == Status.RETURNED
            else "payment_order.rejected",
            return_code=reason.code,
            late=late,
        )
    notice.save()
    return notice


def _credit_comes_back(order: PaymentOrder) -> None:
    institution = order.institution
    source = rail_account(
        institution,
        Account.InternalCode.RAIL_SETTLEMENT
        if order.status == Status.SETTLED
        else Account.InternalCode.RAIL_CLEARING,
        order.currency,
    )
    account = lock_accounts([order.account_id])[order.account_id]
    journal = order_journal(order, f"{rail_label(order)} credit returned")
    back = order.amount if order.returned_amount is None else order.returned_amount
    if account.status == Account.Status.CLOSED:
        # A closed account takes nothing: the money waits in suspense for staff to place.
        suspense = rail_account(institution, Account.InternalCode.RAIL_SUSPENSE, order.currency)
        rail_post(
            order=order,
            institution_id=institution.pk,
            currency=order.currency,
            moves=[debit(source.pk, back, check=""), credit(suspense.pk, back, check="")],
            journal=journal,
        )
        order.returned_to_suspense = True
        order.save(update_fields=["returned_to_suspense"])
        return
    rail_post(
        order=order,
        institution_id=institution.pk,
        currency=order.currency,
        moves=[credit(account.pk, back), debit(source.pk, back, check="")],
        journal=journal,
        lines=statement_lines_new(
            lines=[Line(account, StatementLine.Type.CASH_INC, back, _line(order, "returned"))],
            currency=order.currency,
            journal=journal,
        ),
    )


def _debit_taken_back(order: PaymentOrder) -> None:
    """The collected money leaves the account; what it cannot cover is the customer's debt
    (returns receivable)."""
    institution = order.institution
    if order.returns_hold is not None and order.returns_hold.status == Hold.Status.ACTIVE:
        hold_release(hold=order.returns_hold, purpose=Hold.Purpose.PAYMENT_RETURNS)
    account = lock_accounts([order.account_id])[order.account_id]
    from_account = min(order.amount, max(account.available, 0))
    owed = order.amount - from_account
    settlement = rail_account(institution, Account.InternalCode.RAIL_SETTLEMENT, order.currency)
    journal = order_journal(order, f"{rail_label(order)} debit returned")
    moves = [credit(settlement.pk, order.amount, check="")]
    lines = []
    if from_account:
        # FORCED: taken from a frozen account too (a return is a fact), never below what it may.
        moves.append(debit(account.pk, from_account, check=FORCED))
        lines.append(
            Line(account, StatementLine.Type.CASH_DEC, from_account, _line(order, "returned"))
        )
    if owed:
        receivable = rail_account(
            institution, Account.InternalCode.RETURNS_RECEIVABLE, order.currency
        )
        moves.append(debit(receivable.pk, owed, check=""))
    rail_post(
        order=order,
        institution_id=institution.pk,
        currency=order.currency,
        moves=moves,
        journal=journal,
        lines=statement_lines_new(lines=lines, currency=order.currency, journal=journal),
    )


def _line(order: PaymentOrder, what: str) -> str:
    external = order.external_account
    return f"{rail_label(order)} {what}: {external.holder_name} ••••{external.number_last4}"[:500]


def unknown_return(
    *, institution, reason: ReturnReason | IsoReason, trace: str, rail_file: RailFile, kind: str
) -> RailNotice:
    """A return (or dishonored, contested one) of an entry TX did not send: recorded for
    reconciliation (docs/design.md section 16), nothing booked."""
    return RailNotice.objects.create(
        institution=institution,
        file=rail_file,
        kind=kind,
        code=reason.code,
        reason=reason.normalized,
        original_trace_number=trace,
        order=None,
    )


def order_change(
    *, order: PaymentOrder, change_code: str, corrections: dict, rail_file: RailFile
) -> RailNotice:
    """A notification of change of the entry `order` sent: the external account corrected,
    no money moved; recorded with what changed (never the values)."""
    outcome = external_account_correct(
        external=order.external_account, change_code=change_code, corrections=corrections
    )
    return RailNotice.objects.create(
        institution=order.institution,
        file=rail_file,
        kind=RailNotice.Kind.CHANGE,
        code=change_code,
        reason="notification_of_change",
        original_trace_number=order.trace_number,
        order=order,
        changed_fields=sorted(corrections) if outcome.changed else [],
    )
