"""`/stop-payments` (v2 only; docs/payments.md): a customer's stop of an originator's ACH debits.

Scopes (docs/tenancy-and-keys.md): reading is `read`; a stop payment, which returns other banks'
debits, needs `payments:write`, a scope of its own that no key has unless granted on purpose
(not in `full`).
"""

from rest_framework import serializers

from api.schema import document
from api.serializers import (
    AmountField,
    Serializer,
    StrictCharField,
    StrictDateTimeField,
    StrictSerializer,
    TimestampField,
)
from api.versions import V2
from api.views import TXView
from core.actors import Actor
from institutions import scopes

from ..models import StopPayment
from ..selectors import stop_payment_get, stop_payment_list
from ..services.stop_payments import stop_payment_cancel, stop_payment_create
from .common import CancellationCreate

TAGS = ["Payments"]


# --- input
class StopPaymentCreate(StrictSerializer):
    accountId = StrictCharField(max_length=40, help_text="A customer account (USD).")  # noqa: N815
    companyId = StrictCharField(  # noqa: N815
        max_length=10,
        trim_whitespace=False,
        help_text="The originator's Company Identification as its debits' batch header has it "
        "(1 to 10 printable ASCII characters; trailing spaces are padding; any case).",
    )
    amount = AmountField(
        required=False, help_text="Only a debit of exactly this amount; absent: any amount."
    )
    expiresAt = StrictDateTimeField(  # noqa: N815
        required=False, help_text="In the future; absent: until cancelled."
    )
    reason = StrictCharField(max_length=200, required=False, allow_blank=True)


class StopPaymentQuery(Serializer):
    accountId = StrictCharField(required=False, max_length=40)  # noqa: N815
    status = serializers.ChoiceField(choices=StopPayment.Status.choices, required=False)


# --- output
class StopPaymentOut(Serializer):
    stopPaymentId = serializers.CharField(source="id")  # noqa: N815
    accountId = serializers.CharField(source="account_id")  # noqa: N815
    companyId = serializers.CharField(source="company_id")  # noqa: N815
    amount = serializers.IntegerField(
        allow_null=True, help_text="Only a debit of exactly this amount; null: any amount."
    )
    currency = serializers.CharField()
    expiresAt = TimestampField(  # noqa: N815
        source="expires_at", allow_null=True, help_text="null: until cancelled."
    )
    reason = serializers.CharField()
    status = serializers.ChoiceField(
        choices=StopPayment.Status.choices,
        source="shown_status",
        help_text="active, expired (its time passed) or cancelled.",
    )
    cancelledAt = TimestampField(source="cancelled_at", allow_null=True)  # noqa: N815
    cancellationReason = serializers.CharField(source="cancelled_reason")  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815


# --- views
class StopPaymentListView(TXView):
    write_scope = scopes.PAYMENTS_WRITE

    @document(
        name="StopPayment",
        resources={V2: StopPaymentOut},
        request={V2: StopPaymentCreate},
        created=True,
        summary="Stop an originator's ACH debits to a customer's account",
        description="Every inbound debit of the originator (`companyId`, as its batch header "
        "has it) to the account, of `amount` when given, is returned R08 on its settlement "
        "date until the stop expires or is cancelled. A credit is never stopped. 404 for an "
        "account that is not a customer account of the institution; 422 "
        "`account_not_active` (closed), `currency_mismatch` (not USD).",
        operation_id="stop_payments_create",
        tags=TAGS,
    )
    def post(self, request):
        data = self.parse(StopPaymentCreate)
        stop = stop_payment_create(
            institution=self.institution,
            account_id=data["accountId"],
            company_id=data["companyId"],
            amount=data.get("amount"),
            expires_at=data.get("expiresAt"),
            reason=data.get("reason", ""),
            actor=Actor.of_request(request),
        )
        return self.created(StopPaymentOut(stop).data)

    @document(
        name="StopPayment",
        resources={V2: StopPaymentOut},
        many=True,
        summary="List stop payments, newest first",
        operation_id="stop_payments_list",
        tags=TAGS,
    )
    def get(self, request):
        query = self.parse_query(StopPaymentQuery)
        rows = stop_payment_list(
            institution=self.institution,
            account_id=query.get("accountId"),
            status=query.get("status"),
        )
        return self.respond_list(rows, StopPaymentOut)


class StopPaymentDetailView(TXView):
    @document(
        name="StopPayment",
        resources={V2: StopPaymentOut},
        summary="Retrieve a stop payment",
        operation_id="stop_payments_retrieve",
        tags=TAGS,
    )
    def get(self, request, stopPaymentId):  # noqa: N803
        stop = stop_payment_get(institution=self.institution, stop_payment_id=stopPaymentId)
        return self.respond(StopPaymentOut(stop).data)


class StopPaymentCancellationsView(TXView):
    write_scope = scopes.PAYMENTS_WRITE

    @document(
        name="StopPayment",
        resources={V2: StopPaymentOut},
        request={V2: CancellationCreate},
        created=True,
        summary="Cancel a stop payment",
        description="The originator's debits reach the account again. 409 "
        "`invalid_state_transition` when it is cancelled already or has expired.",
        operation_id="stop_payment_cancellations_create",
        tags=TAGS,
    )
    def post(self, request, stopPaymentId):  # noqa: N803
        stop = stop_payment_get(institution=self.institution, stop_payment_id=stopPaymentId)
        data = self.parse(CancellationCreate)
        stop = stop_payment_cancel(
            stop=stop, reason=data.get("reason", ""), actor=Actor.of_request(request)
        ).value
        return self.created(StopPaymentOut(stop).data)
