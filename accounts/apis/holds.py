"""`/holds`: place, read, release (PATCH status), capture. Identical in both versions but for
the client's `metadata`, v2 only (docs/metadata.md)."""

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from api.schema import both, document
from api.serializers import (
    AmountField,
    CurrencyField,
    MetadataField,
    MetadataPatchField,
    Serializer,
    StrictCharField,
    StrictDateTimeField,
    StrictSerializer,
    TimestampField,
)
from api.versions import V1, V2
from api.views import TXView
from core.actors import Actor
from institutions import scopes

from ..models import Hold
from ..models.holds import DEFAULT_LIFETIME, MAX_LIFETIME
from ..selectors import account_get, hold_get, hold_list
from ..services import hold_capture, hold_place, hold_release, hold_update_metadata


class HoldExpiryField(StrictDateTimeField):
    """When a hold ends by itself: in the future and within MAX_LIFETIME (a hold's
    `expiresAt`, a two-phase transfer's `hold.expiresAt`)."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        now = timezone.now()
        if not now < value <= now + MAX_LIFETIME:
            raise serializers.ValidationError("Must be in the future and within 30 days.")
        return value


class HoldCreate(StrictSerializer):
    accountId = StrictCharField(max_length=40)  # noqa: N815
    amount = AmountField()
    currency = CurrencyField()
    expiresAt = HoldExpiryField(  # noqa: N815
        required=False,
        help_text="When the hold is released by itself: within 30 days (default 7 days).",
    )
    reason = StrictCharField(max_length=500, required=False, allow_blank=True)


class HoldCreateV2(HoldCreate):
    metadata = MetadataField(required=False)


CREATE_INPUT = {V1: HoldCreate, V2: HoldCreateV2}


class HoldUpdate(StrictSerializer):
    status = serializers.ChoiceField(
        choices=[Hold.Status.RELEASED], help_text="Only `released`: give the amount back."
    )


class HoldUpdateV2(StrictSerializer):
    """v2: release, merge metadata, or both (one operation)."""

    status = serializers.ChoiceField(
        choices=[Hold.Status.RELEASED],
        required=False,
        help_text="Only `released`: give the amount back.",
    )
    metadata = MetadataPatchField(required=False)

    def validate(self, data):
        if not data:
            raise serializers.ValidationError({"status": "Give status, metadata or both."})
        return data


UPDATE_INPUT = {V1: HoldUpdate, V2: HoldUpdateV2}


class HoldCapture(StrictSerializer):
    amount = AmountField(
        required=False, help_text="At most the held amount (default: all); the rest is released."
    )


class HoldOut(Serializer):
    holdId = serializers.CharField(source="id")  # noqa: N815
    accountId = serializers.CharField(source="account_id")  # noqa: N815
    amount = serializers.IntegerField()
    capturedAmount = serializers.IntegerField(source="captured_amount")  # noqa: N815
    currency = serializers.CharField()
    status = serializers.ChoiceField(choices=Hold.Status.choices)
    reason = serializers.CharField()
    expiresAt = TimestampField(source="expires_at")  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815
    closedAt = TimestampField(source="closed_at", allow_null=True)  # noqa: N815


class HoldOutV2(HoldOut):
    metadata = MetadataField()


HOLD_OUTPUT = {V1: HoldOut, V2: HoldOutV2}


class HoldQuery(Serializer):
    accountId = StrictCharField(required=False, max_length=40)  # noqa: N815
    status = serializers.ChoiceField(choices=Hold.Status.choices, required=False)


class HoldListView(TXView):
    write_scope = scopes.MONEY_WRITE

    @document(
        name="Hold",
        resources=HOLD_OUTPUT,
        request=CREATE_INPUT,
        created=True,
        summary="Place a hold on an account",
        description="The amount stops being available at once. 422 `insufficient_funds`, "
        "`account_not_active`, `currency_mismatch`.",
        operation_id="holds_create",
        tags=["Holds"],
    )
    def post(self, request):
        data = self.parse(self.for_version(CREATE_INPUT))
        account = account_get(institution=self.institution, account_id=data["accountId"])
        hold = hold_place(
            account=account,
            amount=data["amount"],
            currency=data["currency"],
            expires_at=data.get("expiresAt") or timezone.now() + DEFAULT_LIFETIME,
            reason=data.get("reason", ""),
            actor=Actor.of_request(request),
            metadata=data.get("metadata"),
        )
        return self.created(self.for_version(HOLD_OUTPUT)(hold).data)

    @document(
        name="Hold",
        resources=HOLD_OUTPUT,
        many=True,
        parameters=[
            OpenApiParameter("accountId", str, description="Only this account's holds."),
            OpenApiParameter("status", str, enum=Hold.Status.values, description="Only these."),
        ],
        summary="List holds, newest first",
        operation_id="holds_list",
        tags=["Holds"],
    )
    def get(self, request):
        query = self.parse_query(HoldQuery)
        holds = hold_list(
            institution=self.institution,
            account_id=query.get("accountId"),
            status=query.get("status"),
        )
        return self.respond_list(holds, self.for_version(HOLD_OUTPUT))


class HoldDetailView(TXView):
    write_scope = scopes.MONEY_WRITE

    @document(
        name="Hold",
        resources=HOLD_OUTPUT,
        summary="Retrieve a hold",
        operation_id="holds_retrieve",
        tags=["Holds"],
    )
    def get(self, request, holdId):  # noqa: N803 (path parameters are camelCase)
        hold = hold_get(institution=self.institution, hold_id=holdId)
        return self.respond(self.for_version(HOLD_OUTPUT)(hold).data)

    @document(
        name="Hold",
        resources=HOLD_OUTPUT,
        request=UPDATE_INPUT,
        summary="Release a hold; merge its metadata (v2)",
        description='`{"status": "released"}`; 409 `invalid_state_transition` unless active. '
        "v2 also takes `metadata` (merged: a key set to null is removed; docs/metadata.md), "
        "on a hold of any status.",
        operation_id="holds_update",
        tags=["Holds"],
    )
    def patch(self, request, holdId):  # noqa: N803
        hold = hold_get(institution=self.institution, hold_id=holdId)
        data = self.parse(self.for_version(UPDATE_INPUT))
        if "metadata" in data:  # first: the release's event carries the merged metadata
            hold = hold_update_metadata(hold=hold, metadata=data["metadata"]).value
        if "status" in data:
            hold = hold_release(hold=hold)
        return self.respond(self.for_version(HOLD_OUTPUT)(hold).data)


class HoldCapturesView(TXView):
    write_scope = scopes.MONEY_WRITE

    @document(
        name="Hold",
        resources=HOLD_OUTPUT,
        request=both(HoldCapture),
        created=True,
        summary="Capture a hold (partially or whole)",
        description="The captured amount leaves the account for the institution's settlement "
        "account; the rest is released. 409 unless active; 422 `amount_exceeds_remaining`.",
        operation_id="holds_captures_create",
        tags=["Holds"],
    )
    def post(self, request, holdId):  # noqa: N803
        hold = hold_get(institution=self.institution, hold_id=holdId)
        data = self.parse(HoldCapture)
        hold = hold_capture(hold=hold, amount=data.get("amount"))
        return self.created(self.for_version(HOLD_OUTPUT)(hold).data)
