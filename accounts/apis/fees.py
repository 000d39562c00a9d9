"""`/fees`: the fees charged to an account under its products' fee schedules (docs/fees.md).
Read only, identical in both versions: `GET /fees?accountId=` (required) lists an account's
fees newest first (cursor, limit; `kind` and `status` narrow them), `GET /fees/{feeId}` shows
one. Fees are charged by the service itself (presentments, replacements, the monthly job) and
waived by staff in the admin."""

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from api.schema import both, document
from api.serializers import Serializer, StrictCharField, TimestampField
from api.views import TXView

from ..models import Fee
from ..selectors import account_get, fee_get, fee_list


class FeeQuery(Serializer):
    accountId = StrictCharField(max_length=40)  # noqa: N815
    kind = serializers.ChoiceField(choices=Fee.Kind.choices, required=False)
    status = serializers.ChoiceField(choices=Fee.Status.choices, required=False)


class FeeOut(Serializer):
    feeId = serializers.CharField(source="id")  # noqa: N815
    accountId = serializers.CharField(source="account_id")  # noqa: N815
    cardId = serializers.CharField(  # noqa: N815
        source="card_id",
        allow_null=True,
        help_text="The card used (atm, foreign_transaction) or replaced (replacement).",
    )
    authorizationId = serializers.CharField(  # noqa: N815
        source="authorization_id",
        allow_null=True,
        help_text="The card authorization that caused it (atm, foreign_transaction).",
    )
    kind = serializers.ChoiceField(choices=Fee.Kind.choices)
    period = serializers.CharField(
        allow_null=True, help_text="YYYY-MM, the month a monthly fee is for; null otherwise."
    )
    amount = serializers.IntegerField(help_text="Minor units, always positive.")
    currency = serializers.CharField()
    status = serializers.ChoiceField(
        choices=Fee.Status.choices,
        help_text="charged: the amount moved; waived: given back by staff; declined: the "
        "account could not pay it, nothing moved.",
    )
    declineReason = serializers.CharField(  # noqa: N815
        source="decline_reason",
        allow_null=True,
        help_text="Why a declined fee was (insufficient_funds, ...).",
    )
    waiverReason = serializers.CharField(  # noqa: N815
        source="waiver_reason", allow_null=True, help_text="Why staff waived it."
    )
    waivedAt = TimestampField(source="waived_at", allow_null=True)  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815

    def to_representation(self, fee):
        data = super().to_representation(fee)
        data["period"] = fee.period or None
        data["declineReason"] = fee.decline_reason or None
        data["waiverReason"] = fee.waiver_reason or None
        return data


class FeeListView(TXView):
    @document(
        name="Fee",
        resources=both(FeeOut),
        many=True,
        parameters=[
            OpenApiParameter("accountId", str, required=True, description="The account."),
            OpenApiParameter("kind", str, enum=Fee.Kind.values),
            OpenApiParameter("status", str, enum=Fee.Status.values),
        ],
        summary="List an account's fees, newest first",
        operation_id="fees_list",
        tags=["Fees"],
    )
    def get(self, request):
        query = self.parse_query(FeeQuery)
        account = account_get(institution=self.institution, account_id=query["accountId"])
        fees = fee_list(account=account, kind=query.get("kind"), status=query.get("status"))
        return self.respond_list(fees, FeeOut)


class FeeDetailView(TXView):
    @document(
        name="Fee",
        resources=both(FeeOut),
        summary="Retrieve a fee",
        operation_id="fees_retrieve",
        tags=["Fees"],
    )
    def get(self, request, feeId):  # noqa: N803 (path parameters are camelCase)
        return self.respond(FeeOut(fee_get(institution=self.institution, fee_id=feeId)).data)
