"""Recalls of SEPA credit transfers (docs/payments.md, "Recalls"): the institution asks, through
its partner bank (an `initiation` profile) or the clearing (an `interbank` one), for the money
of a transfer it sent back, and the beneficiary's bank answers.

1. **Asked** (`recall_request`, `POST /payment-orders/{id}/recalls`): a `sepa_ct` or
   `sepa_inst` order of an institution with a SEPA profile that is `sent` or `settled` (the SCT Inst
   rulebook's recall is the SCT one's: the same reasons, windows and messages), with one of
   the EPC's recall reasons and inside its window, counted from the order's settlement date
   (its `effective_date`, the execution date of its pain.001): DUPL, TECH and FRAD within 10
   TARGET2 business days (the SCT rulebook's), the originator's own AC03, AM09 and CUST within
   13 months. One recall on its way or accepted per order (the unique index
   `recall_one_open_per_order`: 409 `already_exists`).
2. **Sent** by the payments job (`recalls_write`): each requested recall in a camt.056 of its
   own, validated against its XSD as it is written, kept as an outbound rail file and delivered
   into the `sepa` outbox with the pain.001 files (`connector.deliver`, which calls
   `recalls_delivered`): the recall `sent`.
3. **Answered** by a camt.029 in the `sepa` inbox (`recall_answers`, from
   `sepa_files.sepa_file_apply`): CNCL accepts it, RJCR refuses it with a reason kept raw beside
   its normalized name (`codes.recall_refusal`). The money of an accepted recall comes back as a
   return the partner bank books on the settlement account (a camt.054 credit with return reason
   FOCR, `returns.order_return`: exactly once, whatever amount came back), or, for an
   interbank profile, as the clearing's pacs.004 with reason FOCR (`sepa_files`, the same
   `order_return`); a FOCR return of an order whose recall is still `sent` accepts it (the money
   is the answer).

An answer naming an end-to-end id, or a recall, TX does not know is recorded (`RailNotice` of
kind `recall`) for reconciliation, never an error. Every change of a recall emits an event on
its order (`payment_order.recall_requested`, `_sent`, `_accepted`, `_rejected`) with its actor.
"""

from datetime import date, datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from cards.dates import today_of
from core.actors import Actor
from core.exceptions import (
    AlreadyExists,
    BusinessRuleViolation,
    InvalidStateTransition,
    ValidationFailed,
)
from core.rows import constraint_of, new_row
from events.services import emit_for

from ..calendar import local_now, months_after, target2_days_after
from ..iso20022 import codes
from ..iso20022.camt029 import ACCEPTED, read_resolution
from ..iso20022.camt056 import CancellationRequest, RecalledTransaction, write_cancellation_request
from ..iso20022.cases import Assignment
from ..iso20022.messages import PACS_008, PAIN_001
from ..iso20022.status_reasons import StatusReason
from ..locks import lock_payment_order, lock_recall, lock_recalls
from ..models import PaymentOrder, Rail, RailFile, RailNotice, Recall, SepaProfile
from .order_events import order_event_data
from .outbound_files import outbound_kept

Status = Recall.Status
# The originating bank's own reasons, within 10 TARGET2 business days of settlement; the
# originator's, within 13 months (the EPC's SCT rulebook, 4.4).
BANK_REASONS = frozenset({"DUPL", "TECH", "FRAD"})
BANK_WINDOW_DAYS = 10
ORIGINATOR_WINDOW_MONTHS = 13
RECALLABLE = (PaymentOrder.Status.SENT, PaymentOrder.Status.SETTLED)
RECALLABLE_RAILS = (Rail.SEPA_CT, Rail.SEPA_INST)


class RecallNotAvailable(BusinessRuleViolation):
    code = "recall_not_available"
    message = (
        "Only a SEPA credit transfer (sepa_ct or sepa_inst) of an institution with a SEPA "
        "profile can be recalled."
    )


class RecallWindowClosed(BusinessRuleViolation):
    code = "recall_window_closed"
    message = (
        "The recall's reason is past its window: DUPL, TECH and FRAD within 10 TARGET2 "
        "business days of settlement, AC03, AM09 and CUST within 13 months."
    )


def last_day(reason_code: str, settled_on: date) -> date:
    """The last day a recall for `reason_code` of a transfer settled on `settled_on` may be
    asked."""
    if reason_code in BANK_REASONS:
        return target2_days_after(settled_on, BANK_WINDOW_DAYS)
    return months_after(settled_on, ORIGINATOR_WINDOW_MONTHS)


def _emit(
    recall: Recall, order: PaymentOrder, event_type: str, actor: Actor | None = None, **extra
):
    data = {
        **order_event_data(order),
        "recall_id": recall.pk,
        "recall_status": recall.status,
        "reason_code": recall.reason_code,
        **extra,
    }
    if recall.answer_code:
        data["answer_code"] = recall.answer_code
        data["answer_reason"] = recall.answer_reason
    emit_for(order, event_type, data=data, actor=actor)


# --- 1. asked ------------------------------------------------------------------------------------


def recall_request(*, order: PaymentOrder, reason: str, actor: Actor) -> Recall:
    """A new `requested` recall of `order` (module docstring, 1). Emits
    `payment_order.recall_requested`."""
    if reason not in codes.RECALL_REASONS:
        raise ValidationFailed(
            details={"reason": "One of " + ", ".join(sorted(codes.RECALL_REASONS)) + "."}
        )
    with transaction.atomic(savepoint=False):
        order = lock_payment_order(order.pk)
        institution = order.institution
        profile = SepaProfile.objects.filter(institution=institution).first()
        if order.rail not in RECALLABLE_RAILS or profile is None:
            raise RecallNotAvailable(details={"rail": order.rail})
        if order.status in (PaymentOrder.Status.NEEDS_APPROVAL, PaymentOrder.Status.APPROVED):
            raise InvalidStateTransition(
                "The order is not in a file yet: cancel it instead (its cancellations).",
                from_state=order.status,
                to_state="recalled",
            )
        if order.status not in RECALLABLE:
            raise InvalidStateTransition(
                "Only a sent or settled transfer can be recalled.",
                from_state=order.status,
                to_state="recalled",
            )
        settled_on = order.effective_date or today_of(institution)
        last = last_day(reason, settled_on)
        if today_of(institution) > last:
            raise RecallWindowClosed(
                details={
                    "reason": reason,
                    "settlement_date": settled_on.isoformat(),
                    "last_day": last.isoformat(),
                }
            )
        recall = new_row(
            Recall,
            institution=institution,
            order=order,
            reason_code=reason,
            reason=codes.recall_reason(reason).normalized,
            status=Status.REQUESTED,
            **actor.stamp("created_by"),
        )
        try:
            with transaction.atomic():
                recall.save(force_insert=True)
        except IntegrityError as error:
            if constraint_of(error) != "recall_one_open_per_order":
                raise
            there = Recall.objects.filter(
                order=order, status__in=[Status.REQUESTED, Status.SENT, Status.ACCEPTED]
            ).first()
            raise AlreadyExists(
                "The order has a recall on its way or accepted already.",
                details={"recall_id": there.pk if there else None},
            ) from None
        _emit(recall, order, "payment_order.recall_requested", actor)
    return recall


# --- 2. sent -------------------------------------------------------------------------------------


def recalls_write(*, profile: SepaProfile, now: datetime | None = None) -> list[RailFile]:
    """Each requested recall of the profile's institution not in a file yet written into a
    camt.056 of its own (module docstring, 2); return the files. Safe to run twice or at once:
    a recall's row is locked while its file is made, and one in a file is not taken again."""
    now = now or timezone.now()
    written = []
    waiting = Recall.objects.filter(
        institution_id=profile.institution_id, status=Status.REQUESTED, file__isnull=True
    ).values_list("pk", flat=True)
    for recall_id in list(waiting):
        with transaction.atomic():
            recall = lock_recall(recall_id)
            if recall.status != Status.REQUESTED or recall.file_id is not None:
                continue
            written.append(_recall_file(profile, recall, now))
    return written


def cancellation_request(profile: SepaProfile, recall: Recall, order: PaymentOrder, created):
    """The camt.056 of one recall: from the partner bank (which recalls for its customer) to
    the beneficiary's bank by its BIC, or to the partner bank itself when the order named no
    BIC (it finds the beneficiary's bank by the IBAN). Its ids are the recall's id (`-` for `_`);
    the original is the order's pain.001 (message id, end-to-end id, the order's trace number as
    its transaction id: a pain.001 has none), amount and settlement date. An interbank
    profile's: from the institution itself (its `bic`) through the clearing to the
    beneficiary's bank (an interbank order always names its BIC), the original its pacs.008
    (the file's id, the transaction id it gave the order: its trace number)."""
    reference = recall.pk.replace("_", "-")  # the SEPA character set has no "_"
    interbank = profile.kind == SepaProfile.Kind.INTERBANK
    return CancellationRequest(
        assignment=Assignment(
            id=reference,
            assigner_bic=profile.bic,
            assignee_bic=order.external_account.sepa_bic or profile.bic,
            created_at=created,
        ),
        transactions=(
            RecalledTransaction(
                cancellation_id=reference,
                original_message_id=order.file_id.replace("_", "-"),
                original_message_type=(PACS_008 if interbank else PAIN_001).name,
                original_end_to_end_id=order.end_to_end_id,
                original_transaction_id=order.trace_number,
                original_amount=order.amount,
                original_settlement_date=order.effective_date,
                reason=StatusReason(recall.reason_code),
            ),
        ),
    )


def _recall_file(profile: SepaProfile, recall: Recall, now: datetime) -> RailFile:
    order = recall.order
    institution = profile.institution
    message = cancellation_request(
        profile, recall, order, local_now(institution).replace(microsecond=0)
    )
    content = write_cancellation_request(message)  # validated against its XSD as written
    rail_file = outbound_kept(
        RailFile(institution=institution),
        rail=Rail.SEPA_CT,
        name=f"{institution.pk}-recall-{recall.pk}.xml",
        content=content,
        entry_count=1,
    )
    recall.file = rail_file
    recall.updated_at = now
    recall.save(update_fields=["file", "updated_at"])
    return rail_file


def recalls_delivered(rail_file: RailFile, now: datetime) -> None:
    """The recalls of a camt.056 just written into the outbox: `sent` (in the caller's
    transaction, `connector.deliver`'s)."""
    for recall in lock_recalls(Recall.objects.filter(file=rail_file, status=Status.REQUESTED)):
        recall.status = Status.SENT
        recall.sent_at = recall.updated_at = now
        recall.save(update_fields=["status", "sent_at", "updated_at"])
        _emit(recall, recall.order, "payment_order.recall_sent", file_id=rail_file.pk)


# --- 3. answered ---------------------------------------------------------------------------------


def recall_answers(rail_file: RailFile, content: bytes, now: datetime) -> int:
    """A camt.029 applied in the caller's transaction (module docstring, 3); return how many
    transactions it answered. `Iso20022Error`: refused whole."""
    resolution = read_resolution(content)
    institution = rail_file.institution
    for answer in resolution.transactions:
        order = (
            PaymentOrder.objects.filter(
                institution=institution,
                end_to_end_id=answer.original_end_to_end_id,
                rail__in=RECALLABLE_RAILS,
            )
            .only("pk")
            .first()
        )
        if resolution.accepted:
            code, reason = ACCEPTED, "recall_accepted"
        elif answer.reason.proprietary:
            code, reason = answer.reason.code, "unknown"
        else:
            code, reason = answer.reason.code, codes.recall_refusal(answer.reason.code).normalized
        recall = None
        if order is not None:
            recall = _sent_recall(order)
        if recall is None:
            # No recall of TX's is waiting for this answer (none of this order, or one answered
            # already: by its money, or another camt.029): for reconciliation.
            known = order is not None and Recall.objects.filter(order=order).exists()
            why = "answered_already" if known else "unknown_recall"
            _notice(rail_file, code, why, answer.original_end_to_end_id, order)
            continue
        _answered(recall, rail_file, now, code="" if resolution.accepted else code, reason=reason)
        _notice(rail_file, code, reason, answer.original_end_to_end_id, recall.order)
    return len(resolution.transactions)


def _sent_recall(order: PaymentOrder) -> Recall | None:
    waiting = (
        Recall.objects.filter(order=order, status=Status.SENT).values_list("pk", flat=True).first()
    )
    if waiting is None:
        return None
    recall = lock_recall(waiting)
    return recall if recall.status == Status.SENT else None


def _answered(recall: Recall, rail_file: RailFile, now: datetime, *, code: str, reason: str):
    recall.status = Status.REJECTED if code else Status.ACCEPTED
    recall.answer_file = rail_file
    recall.answer_code = code
    recall.answer_reason = "" if recall.status == Status.ACCEPTED else reason
    recall.answered_at = recall.updated_at = now
    recall.save(
        update_fields=[
            "status",
            "answer_file",
            "answer_code",
            "answer_reason",
            "answered_at",
            "updated_at",
        ]
    )
    order = PaymentOrder.objects.get(pk=recall.order_id)
    _emit(recall, order, f"payment_order.recall_{recall.status}")


def recall_money_back(order: PaymentOrder, rail_file: RailFile, now: datetime) -> None:
    """A FOCR return of `order` booked: its recall still `sent` is accepted (the partner bank's
    camt.029 may come after the money, or not at all)."""
    recall = _sent_recall(order)
    if recall is not None:
        _answered(recall, rail_file, now, code="", reason="")


def _notice(rail_file, code, reason, end_to_end_id, order) -> RailNotice:
    return RailNotice.objects.create(
        institution=rail_file.institution,
        file=rail_file,
        kind=RailNotice.Kind.RECALL,
        code=code[:4],
        reason=reason[:48],
        original_trace_number=(end_to_end_id or "")[:35],
        order=order,
    )
