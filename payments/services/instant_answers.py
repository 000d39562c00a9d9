"""A SEPA Instant order's answer (docs/payments.md, "SEPA Instant"; step 3 and 4 of
`payments.services.instant`): the clearing's status applied to a `sent` order (ACSC settles it,
RJCT rejects it with its reason), no answer in time (`TECH`), and an answer for an order no
longer `sent` kept as a late notice. Read by the SEPA files' reader, which stores every answer
(`payments.services.sepa_files`)."""

from datetime import datetime

from django.db import transaction

from accounts.models import Account, Hold
from accounts.services import hold_capture, hold_release

from ..iso20022 import codes
from ..locks import lock_payment_order
from ..models import PaymentOrder, Rail, RailFile, RailJournal, RailNotice
from .order_events import emit_order
from .settlement import order_journal, order_settle

Status = PaymentOrder.Status
SETTLED = "ACSC"  # accepted, settlement completed: SCT Inst's positive answer
TECH = codes.reason("TECH")


def instant_status(
    *, order: PaymentOrder, status: str, reason, rail_file: RailFile, now: datetime
) -> None:
    """The clearing's status of an instant order (step 3), in the caller's transaction: ACSC
    settles a `sent` order, RJCT rejects it with `reason`; another status (ACCP, ACSP...) is not
    an answer yet. An order no longer `sent`: a notice, nothing moved."""
    order = lock_payment_order(order.pk)
    rejected = status == codes.REJECTED
    if order.status != Status.SENT:
        if rejected or status == SETTLED:
            RailNotice.objects.create(
                institution=order.institution,
                file=rail_file,
                kind=RailNotice.Kind.REJECT if rejected else RailNotice.Kind.STATUS,
                code=(reason.code if rejected else status)[:4],
                reason=f"late_{reason.normalized if rejected else 'settled'}"[:48],
                original_trace_number=order.end_to_end_id,
                order=order,
                late=True,
            )
        return
    if rejected:
        _reject(order, reason, rail_file, now)
    elif status == SETTLED:
        _settle(order, now)


def _settle(order: PaymentOrder, now: datetime) -> None:
    journal = order_journal(order, "SEPA Instant credit sent")
    hold_capture(
        hold=order.hold,
        purpose=Hold.Purpose.PAYMENT_ORDER,
        counterparty=Account.InternalCode.RAIL_CLEARING,
        journal=journal,
        # The clearing settled it: the money has left, from an account frozen while the order
        # was in flight too (a fact, as a card network's force post; never below what it
        # holds: the held amount is what is captured).
        forced=True,
    )
    RailJournal.objects.create(journal=journal, order=order)
    order_settle(order=order, at=now)


def _reject(order: PaymentOrder, reason, rail_file: RailFile, now: datetime) -> None:
    """Rejected before any money moved: the hold released, the reason kept."""
    hold_release(hold=order.hold, purpose=Hold.Purpose.PAYMENT_ORDER)
    order.status = Status.REJECTED
    order.return_code = reason.code
    order.return_reason = reason.normalized
    order.returned_at = order.updated_at = now
    order.ended_reason = reason.title[:200]
    order.save(
        update_fields=[
            "status",
            "return_code",
            "return_reason",
            "returned_at",
            "ended_reason",
            "updated_at",
        ]
    )
    RailNotice.objects.create(
        institution=order.institution,
        file=rail_file,
        kind=RailNotice.Kind.REJECT,
        code=reason.code,
        reason=reason.normalized,
        original_trace_number=order.end_to_end_id,
        order=order,
    )
    emit_order(order, "payment_order.rejected", return_code=reason.code, late=False)


def instant_timed_out(order_id: str, *, now: datetime) -> bool:
    """Reject a `sent` instant order the clearing did not answer in time (`TECH`, its hold
    released); False when it is not `sent` (answered meanwhile)."""
    with transaction.atomic():
        order = lock_payment_order(order_id)
        if order.rail != Rail.SEPA_INST or order.status != Status.SENT:
            return False
        _reject(order, TECH, order.file, now)
    return True
