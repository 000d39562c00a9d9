"""Settlement: a sent order whose effective date has come is `settled` (docs/payments.md,
"Money"); ACH says nothing when an entry settles, only when it does not (a return), so its
effective date in the institution's calendar is the settlement.

- a **credit**: its money moves from the rail's clearing account (where its file put it) to
  the rail's settlement account: it has left the bank;
- a **debit**: the collected money comes from the settlement account to the customer's account
  (a `CashInc` line), and is held there for the return window of a debit the customer's bank
  may still refuse (the account product's `debit_hold_days` banking days, or else the ACH
  profile's: R01, R09; a hold of purpose
  `payment_returns`, released by the expiry job), on a frozen account too;
- a **prenote** moves nothing; its external account is verified once its own return window
  (2 banking days) has passed with no return (`prenotes_verify`).
"""

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.db import transaction
from django.utils import timezone

from accounts.locks import lock_accounts
from accounts.models import Account, Hold, Journal, StatementLine
from accounts.posting import credit, debit, journal_new, post
from accounts.services import hold_place, holds_expire, internal_account
from accounts.statement_lines import Line, statement_lines_new
from core.actors import SYSTEM
from core.locks import lock_free_batch
from institutions.calendar import local_date

from ..calendar import ach_days_after, sepa_days_after
from ..locks import lock_payment_order
from ..models import (
    ACH_RAILS,
    SEPA_RAILS,
    AchProfile,
    ExternalAccount,
    PaymentOrder,
    RailJournal,
    SepaProfile,
)
from .external_accounts import external_account_verify
from .order_events import emit_order

PRENOTE_WINDOW_DAYS = 2


def rail_label(order: PaymentOrder) -> str:
    """The rail's family as its journals and statement lines name it: "ACH" or "SEPA"."""
    return "SEPA" if order.rail in SEPA_RAILS else "ACH"


def rail_account(institution, code: str, currency: str) -> Account:
    return internal_account(institution=institution, code=code, currency=currency)


def order_journal(order: PaymentOrder, description: str) -> Journal:
    return journal_new(
        institution_id=order.institution_id,
        kind=Journal.Kind.PAYMENT_ORDER,
        description=f"{description} {order.pk}",
    )


def rail_post(
    *, journal: Journal, order: PaymentOrder | None = None, inbound=None, **posting
) -> None:
    """`accounts.posting.post`, and the journal kept as the order's or the inbound entry's
    (`RailJournal`): every journal of the rails is one of theirs."""
    post(journal=journal, **posting)
    RailJournal.objects.create(journal=journal, order=order, inbound_entry=inbound)


def orders_settle(*, now: datetime | None = None, batch_size: int = 200) -> int:
    """Settle every sent ACH order whose effective date has come in its institution's calendar;
    return how many (a SEPA order settles when the bank books it: its camt.054,
    `inbound_files`). Rows others hold are skipped (a return applying to one right now): safe
    from several processes at once."""
    now = now or timezone.now()
    # No zone is more than a day ahead of UTC: the bound narrows the rows, each order's own
    # calendar decides.
    latest = now.astimezone(UTC).date() + timedelta(days=1)
    settled, after = 0, ""
    while True:
        with transaction.atomic():
            batch = lock_free_batch(
                PaymentOrder.objects.filter(
                    status=PaymentOrder.Status.SENT,
                    rail__in=ACH_RAILS,
                    effective_date__lte=latest,
                    pk__gt=after,
                ).select_related("institution"),
                batch_size,
            )
            due = [
                order
                for order in batch
                if order.effective_date <= local_date(order.institution, now)
            ]
            for order in due:
                order_settle(order=order, at=now)
        settled += len(due)
        if len(batch) < batch_size:
            return settled
        after = batch[-1].pk


def order_settle(*, order: PaymentOrder, at: datetime) -> PaymentOrder:
    """Settle one sent order (module docstring), in the caller's transaction."""
    order = lock_payment_order(order.pk)
    if order.status != PaymentOrder.Status.SENT:
        return order
    institution = order.institution
    if order.prenote:
        pass
    elif order.direction == PaymentOrder.Direction.CREDIT:
        clearing = rail_account(institution, Account.InternalCode.RAIL_CLEARING, order.currency)
        settlement = rail_account(institution, Account.InternalCode.RAIL_SETTLEMENT, order.currency)
        rail_post(
            order=order,
            institution_id=institution.pk,
            currency=order.currency,
            moves=[
                debit(clearing.pk, order.amount, check=""),
                credit(settlement.pk, order.amount, check=""),
            ],
            journal=order_journal(order, f"{rail_label(order)} credit settled"),
        )
    else:
        _collect(order)
    order.status = PaymentOrder.Status.SETTLED
    order.settled_at = order.updated_at = at
    order.save(update_fields=["status", "settled_at", "updated_at", "returns_hold"])
    emit_order(order, "payment_order.settled")
    return order


def _collect(order: PaymentOrder) -> None:
    """A debit's money into the customer's account, held for its return window."""
    institution = order.institution
    account = order.account
    settlement = rail_account(institution, Account.InternalCode.RAIL_SETTLEMENT, order.currency)
    journal = order_journal(order, f"{rail_label(order)} debit collected")
    external = order.external_account
    rail_post(
        order=order,
        institution_id=institution.pk,
        currency=order.currency,
        moves=[credit(account.pk, order.amount), debit(settlement.pk, order.amount, check="")],
        journal=journal,
        lines=statement_lines_new(
            lines=[
                Line(
                    account,
                    StatementLine.Type.CASH_INC,
                    order.amount,
                    f"{rail_label(order)} from {external.holder_name} ••••{external.number_last4}",
                )
            ],
            currency=order.currency,
            journal=journal,
        ),
    )
    days = account.product.debit_hold_days
    sepa = order.rail in SEPA_RAILS
    if days is None:
        profile = SepaProfile if sepa else AchProfile
        days = profile.objects.get(institution=institution).debit_hold_days
    days_after = sepa_days_after if sepa else ach_days_after
    # What came in, as far as it is available: money that paid back the card network's
    # overdraft first is not there to hold.
    available = lock_accounts([account.pk])[account.pk].available
    held = min(order.amount, max(available, 0))
    if days and held:
        order.returns_hold = hold_place(
            account=account,
            amount=held,
            currency=order.currency,
            expires_at=_end_of(
                institution,
                days_after(institution, order.effective_date, days),
            ),
            reason=f"Returns window of payment order {order.pk}",
            actor=SYSTEM,
            purpose=Hold.Purpose.PAYMENT_RETURNS,
            # Held on a frozen account too: a freeze stops money leaving, and this holds what
            # just came in (never more than is available: nothing is forced below zero).
            forced=True,
        )


def _end_of(institution, day: date) -> datetime:
    return datetime.combine(day, time.max, ZoneInfo(institution.time_zone))


def returns_holds_expire(*, now: datetime | None = None) -> int:
    """Release the collected debits' money whose return window has passed (the expiry job)."""
    return holds_expire(now=now, purpose=Hold.Purpose.PAYMENT_RETURNS)


def prenotes_verify(*, now: datetime | None = None) -> int:
    """Verify the external accounts whose settled prenote's return window (2 banking days
    after its effective date) has passed with no return; return how many."""
    verified = 0
    orders = PaymentOrder.objects.filter(
        prenote=True,
        status=PaymentOrder.Status.SETTLED,
        external_account__status=ExternalAccount.Status.VERIFYING,
    ).select_related("institution", "external_account")
    for order in orders:
        window_end = ach_days_after(order.institution, order.effective_date, PRENOTE_WINDOW_DAYS)
        if local_date(order.institution, now or timezone.now()) > window_end:
            if external_account_verify(external=order.external_account, by="prenote").changed:
                verified += 1
    return verified
