"""`/payment-orders` (v2 only; docs/payments.md): money sent to or collected from an external
account over ACH or SEPA, its cancellation before it is in a file, and the recall of a SEPA
credit transfer sent.

Scopes (docs/tenancy-and-keys.md): reading is `read`; payment orders, which send money out of
the bank, need `payments:write`, a scope of their own that no key has unless granted on purpose
(not in `full`).
"""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.schema import document
from api.serializers import (
    AmountField,
    CurrencyField,
    MetadataField,
    Serializer,
    StrictCharField,
    StrictDateField,
    StrictSerializer,
    TimestampField,
)
from api.versions import V2
from api.views import Continued, TXView
from core.actors import Actor
from core.exceptions import IdempotencyKeyInUse
from institutions import scopes

from ..iso20022.codes import RECALL_REASONS
from ..models import PaymentOrder, Rail, Recall
from ..selectors import payment_order_get, payment_order_list
from ..services.instant import instant_send
from ..services.orders import payment_order_cancel, payment_order_create
from ..services.recalls import recall_request
from .common import CancellationCreate

TAGS = ["Payments"]


# --- input
class PaymentOrderCreate(StrictSerializer):
    accountId = StrictCharField(max_length=40)  # noqa: N815
    externalAccountId = StrictCharField(max_length=40)  # noqa: N815
    direction = serializers.ChoiceField(
        choices=PaymentOrder.Direction.choices,
        help_text="credit pays the external account; debit collects from it.",
    )
    amount = AmountField()
    currency = CurrencyField()
    rail = serializers.ChoiceField(
        choices=Rail.choices,
        help_text="ACH (`ach`, `ach_same_day`) to an ACH external account in USD; SEPA "
        "(`sepa_ct`, `sepa_inst`: credits; `sepa_dd`: direct debits under a mandate) to a SEPA "
        "one in EUR.",
    )
    mandateId = StrictCharField(  # noqa: N815
        max_length=40,
        required=False,
        help_text="sepa_dd: required, the mandate it collects under (its debtor account the "
        "`externalAccountId`); no other rail takes one.",
    )
    finalCollection = serializers.BooleanField(  # noqa: N815
        required=False,
        default=False,
        help_text="sepa_dd under a recurrent mandate: its last collection (sequence FNAL); the "
        "mandate allows none after it. No other rail takes it.",
    )
    secCode = serializers.ChoiceField(  # noqa: N815
        choices=PaymentOrder.SecCode.choices, required=False, help_text="ACH: required."
    )
    description = StrictCharField(
        max_length=10,
        required=False,
        help_text="ACH: required, the batch's company entry description (e.g. PAYROLL).",
    )
    remittanceInfo = StrictCharField(  # noqa: N815
        max_length=140,
        required=False,
        allow_blank=True,
        help_text="Unstructured: ACH an addenda's 80 characters; SEPA 140 characters of the "
        "SEPA character set (or give `creditorReference`).",
    )
    endToEndId = StrictCharField(  # noqa: N815
        max_length=35,
        required=False,
        trim_whitespace=False,
        help_text="SEPA: the payer's reference, carried to the payee: 1 to 35 characters of the "
        "SEPA character set, unique in the institution. Default: the order's id with `-` for "
        "`_`.",
    )
    creditorReference = StrictCharField(  # noqa: N815
        max_length=35,
        required=False,
        help_text="SEPA: a structured creditor reference (ISO 11649, e.g. RF18539007547034, "
        "its check digits checked) instead of `remittanceInfo`.",
    )
    requestedExecutionDate = StrictDateField(  # noqa: N815
        required=False,
        help_text="Default: today (the institution's date). sepa_ct: a day TARGET2 or the "
        "institution is closed moves to the next day both are open. sepa_dd: the due date "
        "(default and earliest: one SEPA day after the next direct-debit cut-off, and the "
        "profile's pre-notification days after today).",
    )
    metadata = MetadataField(required=False)


# The EPC's recall reasons (`iso20022.codes.RECALL_REASONS`), as the API lists them.
RECALL_REASON_CHOICES = sorted(RECALL_REASONS)


class RecallCreate(StrictSerializer):
    reason = serializers.ChoiceField(
        choices=RECALL_REASON_CHOICES,
        help_text="The EPC's: DUPL (duplicate), TECH (technical problem), FRAD (fraud), within "
        "10 TARGET2 business days of settlement; the originator's AC03 (wrong account), AM09 "
        "(wrong amount), CUST (no reason given), within 13 months.",
    )


class PaymentOrderQuery(Serializer):
    status = serializers.ChoiceField(choices=PaymentOrder.Status.choices, required=False)
    accountId = StrictCharField(required=False, max_length=40)  # noqa: N815
    externalAccountId = StrictCharField(required=False, max_length=40)  # noqa: N815
    direction = serializers.ChoiceField(choices=PaymentOrder.Direction.choices, required=False)


# --- output
class ReturnOut(Serializer):
    code = serializers.CharField(source="return_code", help_text="As the bank sent it (R01).")
    reason = serializers.CharField(source="return_reason", help_text="Normalized.")
    late = serializers.BooleanField(source="return_late", help_text="After its window.")


class PaymentOrderOut(Serializer):
    paymentOrderId = serializers.CharField(source="id")  # noqa: N815
    accountId = serializers.CharField(source="account_id", allow_null=True)  # noqa: N815
    externalAccountId = serializers.CharField(source="external_account_id")  # noqa: N815
    direction = serializers.ChoiceField(choices=PaymentOrder.Direction.choices)
    amount = serializers.IntegerField()
    currency = serializers.CharField()
    rail = serializers.ChoiceField(choices=Rail.choices)
    secCode = serializers.CharField(source="sec_code", help_text="ACH; empty for SEPA.")  # noqa: N815
    description = serializers.CharField(help_text="ACH; empty for SEPA.")
    remittanceInfo = serializers.CharField(source="remittance_info")  # noqa: N815
    endToEndId = serializers.CharField(source="end_to_end_id", help_text="SEPA; empty for ACH.")  # noqa: N815
    creditorReference = serializers.CharField(  # noqa: N815
        source="creditor_reference", help_text="SEPA, when given; empty otherwise."
    )
    prenote = serializers.BooleanField()
    status = serializers.ChoiceField(choices=PaymentOrder.Status.choices)
    requestedExecutionDate = serializers.DateField(source="requested_execution_date")  # noqa: N815
    effectiveDate = serializers.DateField(source="effective_date", allow_null=True)  # noqa: N815
    holdId = serializers.CharField(source="hold_id", allow_null=True)  # noqa: N815
    fileId = serializers.CharField(source="file_id", allow_null=True)  # noqa: N815
    traceNumber = serializers.CharField(source="trace_number", allow_null=True)  # noqa: N815
    returnInfo = serializers.SerializerMethodField()  # noqa: N815
    returnedAmount = serializers.IntegerField(  # noqa: N815
        source="returned_amount",
        allow_null=True,
        help_text="A returned credit of which less came back than was sent (the returning "
        "bank's charges): what came back. Null otherwise.",
    )
    mandateId = serializers.CharField(  # noqa: N815
        source="mandate_id", allow_null=True, help_text="sepa_dd: the mandate it collects under."
    )
    sequenceType = serializers.CharField(  # noqa: N815
        source="sequence_type",
        help_text="sepa_dd: FRST, RCUR, FNAL or OOFF, decided when its cut-off puts it in a "
        "file; empty before and for other rails.",
    )
    finalCollection = serializers.BooleanField(  # noqa: N815
        source="final_collection", help_text="sepa_dd: its mandate's last collection (FNAL)."
    )
    endedReason = serializers.CharField(source="ended_reason")  # noqa: N815
    metadata = MetadataField()
    sentAt = TimestampField(source="sent_at", allow_null=True)  # noqa: N815
    settledAt = TimestampField(source="settled_at", allow_null=True)  # noqa: N815
    returnedAt = TimestampField(source="returned_at", allow_null=True)  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815

    def get_returnInfo(self, order) -> dict | None:  # noqa: N802
        return ReturnOut(order).data if order.return_code else None


class RecallAnswerOut(Serializer):
    code = serializers.CharField(source="answer_code", help_text="As the bank sent it (NOAS).")
    reason = serializers.CharField(source="answer_reason", help_text="Normalized.")


class RecallOut(Serializer):
    recallId = serializers.CharField(source="id")  # noqa: N815
    paymentOrderId = serializers.CharField(source="order_id")  # noqa: N815
    reasonCode = serializers.CharField(source="reason_code")  # noqa: N815
    reason = serializers.CharField(help_text="Normalized.")
    status = serializers.ChoiceField(choices=Recall.Status.choices)
    fileId = serializers.CharField(  # noqa: N815
        source="file_id", allow_null=True, help_text="The camt.056 it went out in."
    )
    refusal = serializers.SerializerMethodField(
        help_text="A rejected recall: the beneficiary bank's reason."
    )
    sentAt = TimestampField(source="sent_at", allow_null=True)  # noqa: N815
    answeredAt = TimestampField(source="answered_at", allow_null=True)  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815

    @extend_schema_field(RecallAnswerOut(allow_null=True))
    def get_refusal(self, recall) -> dict | None:
        return RecallAnswerOut(recall).data if recall.answer_code else None


# --- views
class PaymentOrderListView(TXView):
    write_scope = scopes.PAYMENTS_WRITE

    @document(
        name="PaymentOrder",
        resources={V2: PaymentOrderOut},
        request={V2: PaymentOrderCreate},
        created=True,
        summary="Send money to or collect money from an external account",
        description="`approved` (or `needs_approval` above the institution's threshold); a "
        "credit's amount held on the account at once. A `sepa_inst` order is sent to the "
        "clearing at once and answered as the clearing left it: `settled`, or `rejected` with "
        "its reason (`TECH`: no answer within the scheme's timeout, 10 s); a retry of its "
        "Idempotency-Key before then is 409 `idempotency_key_in_use`. 422 `rail_mismatch` "
        "(an ACH external account over a SEPA rail or the reverse), `currency_mismatch` (ACH "
        "moves USD, SEPA EUR, in the account's currency), `limit_exceeded` (same-day limit), "
        "`external_account_not_verified`, `rail_not_available` (no profile for the rail), "
        "`duplicate_reference` (an end-to-end id the institution has used), "
        "`insufficient_funds`; sepa_dd: `creditor_identifier_missing`, `mandate_not_usable` "
        "(cancelled, or a one-off mandate used), `due_date_too_early`.",
        operation_id="payment_orders_create",
        tags=TAGS,
    )
    def post(self, request):
        data = self.parse(PaymentOrderCreate)
        order = payment_order_create(
            institution=self.institution,
            account_id=data["accountId"],
            external_account_id=data["externalAccountId"],
            direction=data["direction"],
            amount=data["amount"],
            currency=data["currency"],
            rail=data["rail"],
            sec_code=data.get("secCode"),
            description=data.get("description"),
            remittance_info=data.get("remittanceInfo", ""),
            end_to_end_id=data.get("endToEndId"),
            creditor_reference=data.get("creditorReference"),
            requested_execution_date=data.get("requestedExecutionDate"),
            mandate_id=data.get("mandateId"),
            final_collection=data["finalCollection"],
            metadata=data.get("metadata"),
            actor=Actor.of_request(request),
        )
        if order.rail == Rail.SEPA_INST and order.status == PaymentOrder.Status.APPROVED:
            # SEPA Instant: its creation committed, it is sent with nothing open (once: its
            # creation's commit may have sent it already), and the answer is the order as the
            # clearing left it, settled or rejected, within the scheme's timeout.
            return Continued(
                order.pk,
                outside=lambda: instant_send(order.pk),
                inside=lambda sent: self.created(PaymentOrderOut(self._order(order.pk)).data),
            )
        return self.created(PaymentOrderOut(order).data)

    def _order(self, order_id: str) -> PaymentOrder:
        return payment_order_get(institution=self.institution, order_id=order_id)

    def resume(self, request, resource_id):
        order = self._order(resource_id)
        if order.rail == Rail.SEPA_INST and order.status in (
            PaymentOrder.Status.APPROVED,
            PaymentOrder.Status.SENT,
        ):
            raise IdempotencyKeyInUse()  # its answer is still on its way
        return self.created(PaymentOrderOut(order).data)

    @document(
        name="PaymentOrder",
        resources={V2: PaymentOrderOut},
        many=True,
        summary="List payment orders, newest first",
        operation_id="payment_orders_list",
        tags=TAGS,
    )
    def get(self, request):
        query = self.parse_query(PaymentOrderQuery)
        rows = payment_order_list(
            institution=self.institution,
            status=query.get("status"),
            account_id=query.get("accountId"),
            external_account_id=query.get("externalAccountId"),
            direction=query.get("direction"),
        )
        return self.respond_list(rows, PaymentOrderOut)


class PaymentOrderDetailView(TXView):
    @document(
        name="PaymentOrder",
        resources={V2: PaymentOrderOut},
        summary="Retrieve a payment order",
        operation_id="payment_orders_retrieve",
        tags=TAGS,
    )
    def get(self, request, paymentOrderId):  # noqa: N803
        order = payment_order_get(institution=self.institution, order_id=paymentOrderId)
        return self.respond(PaymentOrderOut(order).data)


class CancellationsView(TXView):
    write_scope = scopes.PAYMENTS_WRITE

    @document(
        name="PaymentOrder",
        resources={V2: PaymentOrderOut},
        request={V2: CancellationCreate},
        created=True,
        summary="Cancel a payment order not yet in a file",
        description="409 `invalid_state_transition` once it is in a file (`scheduled` on).",
        operation_id="payment_order_cancellations_create",
        tags=TAGS,
    )
    def post(self, request, paymentOrderId):  # noqa: N803
        order = payment_order_get(institution=self.institution, order_id=paymentOrderId)
        data = self.parse(CancellationCreate)
        order = payment_order_cancel(order=order, reason=data.get("reason", "")).value
        return self.created(PaymentOrderOut(order).data)


class RecallsView(TXView):
    write_scope = scopes.PAYMENTS_WRITE

    @document(
        name="Recall",
        resources={V2: RecallOut},
        request={V2: RecallCreate},
        created=True,
        summary="Recall a SEPA credit transfer that was sent",
        description="Asks the beneficiary's bank, through the partner bank (or, for an "
        "interbank profile, the clearing), for the money back (a camt.056 the payments job "
        "sends); its answer makes the recall `accepted` (the money comes back as a return, "
        "FOCR) or `rejected`. 409 `invalid_state_transition` for an "
        "order not `sent` or `settled` (one not in a file yet is cancelled instead), "
        "`already_exists` when the order has a recall on its way or accepted; 422 "
        "`recall_not_available` (not a `sepa_ct` or `sepa_inst` order of an institution with a "
        "SEPA profile), "
        "`recall_window_closed` (the reason's window has passed).",
        operation_id="payment_order_recalls_create",
        tags=TAGS,
    )
    def post(self, request, paymentOrderId):  # noqa: N803
        order = payment_order_get(institution=self.institution, order_id=paymentOrderId)
        data = self.parse(RecallCreate)
        recall = recall_request(order=order, reason=data["reason"], actor=Actor.of_request(request))
        return self.created(RecallOut(recall).data)

    @document(
        name="Recall",
        resources={V2: RecallOut},
        many=True,
        summary="List a payment order's recalls, newest first",
        operation_id="payment_order_recalls_list",
        tags=TAGS,
    )
    def get(self, request, paymentOrderId):  # noqa: N803
        order = payment_order_get(institution=self.institution, order_id=paymentOrderId)
        return self.respond_list(Recall.objects.filter(order=order), RecallOut)
