"""Fees (docs/fees.md): charged under the products' fee schedules, waived by staff.

A fee is its own journal through `accounts.posting.post`: the customer's account is debited
with the normal funds check (what its product allows: available balance, overdraft limit
included), the institution's `fees` internal account in that currency credited; a `CashDec`
statement line with `category: "fee"` linked to the fee (and to the authorization or card that
caused it); `fee.charged`. A fee the account cannot pay (short of funds, not active) is not
deferred: it is recorded `declined` with the refusal's code and `fee.declined`, and nothing
moves. A waiver is the journal the other way (`fee_waiver`), a `CashInc` line with
`category: "fee"`, `fee.waived`, with the staff user and the reason on the fee.
"""

import datetime
from zoneinfo import ZoneInfo

from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from core.exceptions import (
    AccountNotActive,
    InsufficientFunds,
    InvalidStateTransition,
    ValidationFailed,
)
from core.locks import lock_free_batch
from core.operations import Outcome, changed
from core.rows import new_row
from events.services import emit_for, event_for
from institutions.models import Institution

from ..locks import lock_fee, lock_internal_account
from ..models import Account, Fee, Journal, StatementLine
from ..posting import credit, debit, journal_new, post
from ..statement_lines import Line, statement_lines_new
from .accounts import internal_account

MAX_REASON_LENGTH = 500
# Basis points in one whole: a fee of `bps` on `amount` is amount * bps / BPS_SCALE.
BPS_SCALE = 10_000


def basis_points_of(amount: int, bps: int) -> int:
    """`bps` basis points of `amount` minor units, rounded half up to the minor unit (both are
    non-negative: 150 bps of 33 is 0.495, so 0; of 34 is 0.51, so 1)."""
    return (amount * bps + BPS_SCALE // 2) // BPS_SCALE


def fee_data(fee: Fee) -> dict:
    """The data of the fee's events."""
    return {
        "account_id": fee.account_id,
        "kind": fee.kind,
        "amount": fee.amount,
        "currency": fee.currency,
        "status": fee.status,
        "card_id": fee.card_id,
        "authorization_id": fee.authorization_id,
        "period": fee.period or None,
    }


DESCRIPTIONS = {
    Fee.Kind.MONTHLY: "Monthly account fee {period}",
    Fee.Kind.ATM: "ATM withdrawal fee",
    Fee.Kind.REPLACEMENT: "Card replacement fee",
    Fee.Kind.FOREIGN_TRANSACTION: "Foreign transaction fee",
}


def fee_charge(
    *,
    account: Account,
    kind: str,
    amount: int,
    card=None,
    authorization=None,
    period: str = "",
) -> Fee | None:
    """Charge `amount` minor units of the account's currency as a fee of `kind`, inside the
    caller's transaction (a presentment, a replacement, the monthly job's batch). Returns the
    fee, `charged` or `declined` (the posting was refused: what the product allows would be
    exceeded, or the account is not active; the refusal's code is kept and nothing moves: the
    caller's own change goes on), or None when `amount` is 0 (no fee in the schedule)."""
    if amount <= 0:
        return None
    fee = new_row(
        Fee,
        institution_id=account.institution_id,
        account=account,
        card=card,
        authorization=authorization,
        kind=kind,
        amount=amount,
        currency=account.currency,
        period=period,
        status=Fee.Status.CHARGED,
    )
    description = DESCRIPTIONS[kind].format(period=period)
    fees = internal_account(
        institution=account.institution, code=Account.InternalCode.FEES, currency=account.currency
    )
    journal = journal_new(
        institution_id=account.institution_id, kind=Journal.Kind.FEE, description=description
    )
    fee.journal = journal
    try:
        with transaction.atomic():  # a refusal undoes the posting only, not the caller's change
            post(
                institution_id=account.institution_id,
                currency=account.currency,
                moves=[debit(account.pk, amount), credit(fees.pk, amount, check="")],
                journal=journal,
                rows=[fee],
                lines=_lines(fee, StatementLine.Type.CASH_DEC, description, journal),
                events=[
                    event_for(
                        fee, "fee.charged", data=fee_data(fee), institution=account.institution
                    )
                ],
            )
    except (InsufficientFunds, AccountNotActive) as refusal:
        fee.journal = None
        fee.status = Fee.Status.DECLINED
        fee.decline_reason = refusal.code
        fee.save(force_insert=True)
        emit_for(
            fee,
            "fee.declined",
            data={**fee_data(fee), "reason": refusal.code},
            institution=account.institution,
        )
    return fee


def _lines(fee: Fee, line_type: str, description: str, journal: Journal) -> list[StatementLine]:
    lines = statement_lines_new(
        lines=[Line(fee.account, line_type, fee.amount, description, card=fee.card)],
        currency=fee.currency,
        journal=journal,
        authorization=fee.authorization,
    )
    for line in lines:
        line.fee = fee
        line.category = StatementLine.Category.FEE
    return lines


def fee_waive(*, fee: Fee, user, reason: str) -> Outcome[Fee]:
    """Waive a charged fee (staff, in the admin): the fee's journal reversed (the amount back
    from the institution's `fees` account, which is internal and may go below zero), a
    `CashInc` line with `category: "fee"`, `fee.waived`; who (`user`) and why (`reason`,
    required: 400 when blank) kept on the fee. A fee that is not `charged` (waived already,
    declined): 409 `invalid_state_transition`."""
    reason = reason.strip() if isinstance(reason, str) else ""
    if not reason:
        raise ValidationFailed(
            "A reason is required to waive a fee.", details={"reason": "This field is required."}
        )
    if len(reason) > MAX_REASON_LENGTH:
        raise ValidationFailed(details={"reason": f"At most {MAX_REASON_LENGTH} characters."})
    with transaction.atomic(savepoint=False):
        fee = lock_fee(fee.pk)
        if fee.status != Fee.Status.CHARGED:
            raise InvalidStateTransition(
                f"The fee is {fee.status}: only a charged fee can be waived.",
                from_state=fee.status,
                to_state=Fee.Status.WAIVED,
            )
        account = fee.account
        fees = internal_account(
            institution=account.institution, code=Account.InternalCode.FEES, currency=fee.currency
        )
        description = f"Fee waived: {DESCRIPTIONS[fee.kind].format(period=fee.period)}".strip()
        journal = journal_new(
            institution_id=fee.institution_id, kind=Journal.Kind.FEE_WAIVER, description=description
        )
        fee.status = Fee.Status.WAIVED
        fee.waived_by = user
        fee.waiver_reason = reason
        fee.waived_at = fee.updated_at = journal.created_at
        post(
            institution_id=fee.institution_id,
            currency=fee.currency,
            # Money back into the account: it must not be closed; the fees account is internal.
            moves=[credit(account.pk, fee.amount), debit(fees.pk, fee.amount, check="")],
            journal=journal,
            lines=_lines(fee, StatementLine.Type.CASH_INC, description, journal),
            events=[
                event_for(
                    fee,
                    "fee.waived",
                    data={**fee_data(fee), "waived_by": str(user.pk)},
                    institution=account.institution,
                )
            ],
        )
        fee.waiver_journal = journal
        fee.save(
            update_fields=[
                "status",
                "waived_by",
                "waiver_reason",
                "waived_at",
                "waiver_journal",
                "updated_at",
            ]
        )
    return changed(fee, Fee.Status.CHARGED)


# --- monthly fees ---------------------------------------------------------------------------
def previous_period(
    institution: Institution, now: datetime.datetime
) -> tuple[str, datetime.datetime]:
    """The month before `now` in the institution's calendar (its time zone): `YYYY-MM` and
    the instant it ended (accounts opened from then on owe nothing for it)."""
    local = now.astimezone(ZoneInfo(institution.time_zone))
    month_start = local.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    previous = (month_start - datetime.timedelta(days=1)).replace(day=1)
    return previous.strftime("%Y-%m"), month_start


def monthly_fees_charge(*, now=None, batch_size: int = 200) -> dict[str, int]:
    """Charge every active customer account on a product with a `monthly_fee` the fee of the
    previous month (each institution's calendar) that it has not been charged yet. Safe to run
    from several processes at once, any number of times: each batch locks its accounts with
    SKIP LOCKED (another run's accounts are left to it), looks again for the month's fee once
    it holds them, and the unique constraint (one monthly fee per account and month) refuses a
    second one whatever happens. One transaction per batch, one fees account per batch
    (accounts of one institution and currency), so two runs never wait on each other in a
    cycle. Returns how many fees were charged and declined."""
    now = now or timezone.now()
    counts = {"charged": 0, "declined": 0}
    groups = (
        Account.objects.filter(
            kind=Account.Kind.CUSTOMER, status=Account.Status.ACTIVE, product__monthly_fee__gt=0
        )
        .values_list("institution_id", "currency")
        .distinct()
        .order_by("institution_id", "currency")
    )
    for institution_id, currency in list(groups):
        institution = Institution.objects.get(pk=institution_id)
        period, period_end = previous_period(institution, now)
        after = ""
        while True:
            with transaction.atomic():
                # The fees account first: every fee of the batch credits it. Taken after the
                # batch's accounts, by the first fee, it is out of the id order when it is
                # older than they are, and a fee charged or waived meanwhile on one of them
                # (the fees account, then that account) deadlocks with the batch.
                lock_internal_account(
                    institution_id=institution_id,
                    code=Account.InternalCode.FEES,
                    currency=currency,
                )
                charged_already = Fee.objects.filter(
                    account=OuterRef("pk"), kind=Fee.Kind.MONTHLY, period=period
                )
                batch = lock_free_batch(
                    Account.objects.select_related("product")
                    .filter(
                        institution_id=institution_id,
                        currency=currency,
                        kind=Account.Kind.CUSTOMER,
                        status=Account.Status.ACTIVE,
                        product__monthly_fee__gt=0,
                        created_at__lt=period_end,
                        pk__gt=after,
                    )
                    .exclude(Exists(charged_already)),
                    batch_size,
                )
                # Looked at again now that the accounts are ours: a run that held one of them
                # a moment ago has committed its fee (the query above may not have seen it).
                done = set(
                    Fee.objects.filter(
                        account__in=batch, kind=Fee.Kind.MONTHLY, period=period
                    ).values_list("account_id", flat=True)
                )
                for account in batch:
                    if account.pk in done:
                        continue
                    account.institution = institution
                    fee = fee_charge(
                        account=account,
                        kind=Fee.Kind.MONTHLY,
                        amount=account.product.monthly_fee,
                        period=period,
                    )
                    counts[fee.status] += 1
            if len(batch) < batch_size:
                break
            after = batch[-1].pk
    return counts
