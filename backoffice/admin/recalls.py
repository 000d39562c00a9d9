"""Back office for SEPA recalls (docs/payments.md, "Recalls" and "Recalls TX answers"): the
recalls an institution asked of its own credit transfers (`POST /payment-orders/{id}/recalls`),
each with its order, reason, state and the other bank's answer, and the recalls other banks sent
of credits TX received, each with the credit it names, the last day to answer and TX's answer
(`POST /inbound-recalls/{id}/answers`, or the payments job's NOAS). Read-only: the API asks and
answers, the payments job sends and expires. No page shows an IBAN: a credit and an order are
their ids, amounts and states.
"""

from django.contrib import admin

from backoffice.kit import (
    ExactIdSearchMixin,
    ReadOnlyModelAdmin,
    actor_display,
    link_column,
    money_column,
)
from payments.models import InboundRecall, Recall


def _reason(code: str, reason: str) -> str:
    return f"{code} {reason}" if code else "-"


@admin.register(Recall)
class RecallAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    """TX's recall of one of its institution's SEPA credit transfers: `requested` until the
    payments job writes its camt.056, `sent`, then `accepted` or `rejected` by the answer."""

    list_display = [
        "id",
        "order_link",
        "amount_display",
        "reason_display",
        "status",
        "answer_display",
        "created_at",
    ]
    list_filter = ["status", "reason_code", "institution"]
    list_select_related = ["order"]
    search_fields = ["id", "order_id"]
    search_help_text = "An exact recall id or payment order id."
    fields = [
        "id",
        "institution",
        "order_link",
        "amount_display",
        "reason_display",
        "status",
        "file_link",
        "sent_at",
        "answer_display",
        "answer_file_link",
        "answered_at",
        "created_by_display",
        "created_at",
        "updated_at",
    ]
    readonly_fields = fields

    order_link = link_column("order", description="payment order", ordering="order_id")
    amount_display = money_column(
        "order.amount", currency="order.currency", description="the order's amount"
    )
    file_link = link_column("file", description="camt.056 (the recall sent)")
    answer_file_link = link_column("answer_file", description="camt.029 (the answer)")

    @admin.display(description="reason")
    def reason_display(self, obj):
        return _reason(obj.reason_code, obj.reason)

    @admin.display(description="answer")
    def answer_display(self, obj):
        if obj.status == Recall.Status.ACCEPTED:
            return "accepted"
        return _reason(obj.answer_code, obj.answer_reason)

    @admin.display(description="asked by")
    def created_by_display(self, obj):
        return actor_display(obj, "created_by")


@admin.register(InboundRecall)
class InboundRecallAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    """Another bank's recall of a SEPA credit TX received: `received` until the institution
    answers it by `answer_due` (the payments job refuses it NOAS after), or refused by TX at
    once when it names no credit TX holds (NOOR) or one gone back already (ARDT)."""

    list_display = [
        "id",
        "credit_link",
        "amount_display",
        "reason_display",
        "status",
        "answer_due",
        "answer_display",
    ]
    list_filter = ["status", "reason_code", "institution"]
    list_select_related = ["inbound_entry"]
    search_fields = ["id", "inbound_entry_id"]
    search_help_text = "An exact recall id or inbound entry (credit) id."
    fields = [
        "id",
        "institution",
        "credit_link",
        "amount_display",
        "reason_display",
        "status",
        "answer_due",
        "answer_display",
        "answered_at",
        "case_id",
        "assigner_bic",
        "assignee_bic",
        "cancellation_id",
        "original_message_id",
        "original_message_type",
        "original_instruction_id",
        "original_end_to_end_id",
        "original_transaction_id",
        "original_settlement_date",
        "file_link",
        "answer_file_link",
        "created_at",
        "updated_at",
    ]
    readonly_fields = fields

    credit_link = link_column(
        "inbound_entry", description="the credit it recalls", ordering="inbound_entry_id"
    )
    amount_display = money_column("original_amount", description="amount recalled")
    file_link = link_column("file", description="camt.056 (the recall received)")
    answer_file_link = link_column("answer_file", description="camt.029 (TX's answer)")

    @admin.display(description="reason")
    def reason_display(self, obj):
        return _reason(obj.reason_code, obj.reason)

    @admin.display(description="answer")
    def answer_display(self, obj):
        if obj.status == InboundRecall.Status.ACCEPTED:
            return "accepted (the money goes back)"
        return _reason(obj.answer_code, obj.answer_reason)
