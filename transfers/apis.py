"""`/transfers`: move money between two accounts of the institution, read, reverse.

`source` and `destination` each name one account: by `accountId`, by `accountNumber`, or through
a card by `cardId` or `pan` (account numbers and PANs are sensitive identifiers, so the body is
where they belong). With `hold` a transfer is two-phase: created `pending`, then posted or
voided by `PATCH /transfers/{id}` (v1 also by POST to that path), or expired
(docs/two-phase-transfers.md). Identical in both versions.
"""

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema_field
from rest_framework import serializers

from accounts.apis.holds import HoldExpiryField
from accounts.models.holds import DEFAULT_LIFETIME
from api.schema import both, document
from api.serializers import (
    AmountField,
    CurrencyField,
    MetadataField,
    MetadataPatchField,
    Serializer,
    StoredDataSerializer,
    StrictCharField,
    StrictSerializer,
    TimestampField,
)
from api.versions import V1, V2
from api.views import TXView
from cards.apis.serializers import PanField
from core.actors import Actor
from institutions import scopes

from .batches import FAILED, MAX_ITEMS, POSTED, transfer_batch_create
from .endpoints import endpoints_resolve
from .models import Transfer, TransferBatch
from .selectors import transfer_batch_get, transfer_get, transfer_list
from .services import (
    order_fields,
    transfer_create,
    transfer_pending_create,
    transfer_resolve,
    transfer_reverse,
    transfer_update_metadata,
)


class Endpoint(StrictSerializer):
    """Exactly one of `accountId`, `accountNumber`, `cardId` or `pan`."""

    accountId = StrictCharField(source="account_id", required=False, max_length=40)  # noqa: N815
    accountNumber = StrictCharField(  # noqa: N815
        source="account_number", required=False, max_length=20
    )
    cardId = StrictCharField(source="card_id", required=False, max_length=40)  # noqa: N815
    pan = PanField(required=False, help_text="A card number: the card's account.")

    def validate(self, attrs):
        if len(attrs) != 1:
            raise serializers.ValidationError(
                "Give exactly one of accountId, accountNumber, cardId or pan."
            )
        return attrs


class TransferHold(StrictSerializer):
    """A two-phase transfer's hold: until when the amount stays held on the source."""

    expiresAt = HoldExpiryField(  # noqa: N815
        source="expires_at",
        required=False,
        help_text="When the transfer is voided by itself (`expired`) unless posted or voided: "
        "within 30 days (default 7 days), as a hold's.",
    )

    def validate(self, attrs):
        return {"expires_at": attrs.get("expires_at") or timezone.now() + DEFAULT_LIFETIME}


class TransferCreate(StrictSerializer):
    source = Endpoint()
    destination = Endpoint()
    amount = AmountField(help_text="Minor units, e.g. 1050 = 10.50 EUR.")
    currency = CurrencyField()
    description = StrictCharField(max_length=500, required=False, allow_blank=True)
    hold = TransferHold(
        required=False,
        help_text="Two-phase: the transfer is created `pending` and its amount held on the "
        "source until `PATCH /transfers/{id}` posts or voids it, or `expiresAt` passes "
        "(docs/two-phase-transfers.md).",
    )


class ReferencedTransferCreate(TransferCreate):
    """v2: a transfer with the client's own id of it."""

    reference = StrictCharField(
        max_length=100,
        required=False,
        help_text="Your own id of this transfer, unique in your institution for good (422 "
        "`duplicate_reference` when seen before).",
    )
    metadata = MetadataField(required=False)


CREATE_INPUT = {V1: TransferCreate, V2: ReferencedTransferCreate}


class BatchItemCreate(ReferencedTransferCreate):
    """A batch item: a transfer posted at once, never two-phase."""

    hold = None  # not a field here

    def to_internal_value(self, data):
        if isinstance(data, dict) and "hold" in data:
            raise serializers.ValidationError(
                {
                    "hold": "A batch posts its transfers at once: send a two-phase transfer on "
                    "its own (POST /transfers)."
                }
            )
        return super().to_internal_value(data)


class BatchCreate(StrictSerializer):
    mode = serializers.ChoiceField(choices=TransferBatch.Mode.choices)
    transfers = BatchItemCreate(
        many=True, allow_empty=False, max_length=MAX_ITEMS, help_text="1 to 1,000 items."
    )


class TransferUpdate(StrictSerializer):
    """Resolve a pending transfer."""

    status = serializers.ChoiceField(
        choices=[Transfer.Status.POSTED, Transfer.Status.VOIDED],
        help_text="`posted`: the money moves to the destination; `voided`: the hold is released.",
    )
    amount = AmountField(
        required=False,
        help_text="With `posted` only: at most the held amount (default: all of it); the rest "
        "is released.",
    )

    def validate(self, attrs):
        if "amount" in attrs and attrs.get("status") != Transfer.Status.POSTED:
            raise serializers.ValidationError({"amount": "Only a transfer that is posted has one."})
        return attrs


class TransferUpdateV2(TransferUpdate):
    """v2: resolve a pending transfer, merge metadata into any transfer, or both (one
    operation)."""

    status = serializers.ChoiceField(
        choices=[Transfer.Status.POSTED, Transfer.Status.VOIDED],
        required=False,
        help_text=TransferUpdate().fields["status"].help_text,
    )
    metadata = MetadataPatchField(required=False)

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError({"status": "Give status, metadata or both."})
        return super().validate(attrs)


UPDATE_INPUT = {V1: TransferUpdate, V2: TransferUpdateV2}


class ReversalCreate(StrictSerializer):
    amount = AmountField(
        required=False, help_text="At most what is not yet reversed (default: all of it)."
    )


class SourceOut(Serializer):
    accountId = serializers.CharField(source="source_account_id")  # noqa: N815
    cardId = serializers.CharField(  # noqa: N815
        source="source_card_id", allow_null=True, help_text="Set when sent by card or PAN."
    )


class DestinationOut(Serializer):
    accountId = serializers.CharField(source="destination_account_id")  # noqa: N815
    cardId = serializers.CharField(  # noqa: N815
        source="destination_card_id", allow_null=True, help_text="Set when sent to a card or PAN."
    )


class TransferHoldOut(Serializer):
    holdId = serializers.CharField(source="hold_id")  # noqa: N815
    expiresAt = TimestampField(source="expires_at")  # noqa: N815


class TransferOut(Serializer):
    transferId = serializers.CharField(source="id")  # noqa: N815
    source = SourceOut(source="*")
    destination = DestinationOut(source="*")
    amount = serializers.IntegerField(help_text="As requested (two-phase: the amount held).")
    currency = serializers.CharField()
    description = serializers.CharField()
    status = serializers.ChoiceField(choices=Transfer.Status.choices)
    postedAmount = serializers.IntegerField(  # noqa: N815
        source="posted_amount",
        help_text="What moved: `amount`, or what a two-phase transfer was posted for; 0 while "
        "it is pending and when voided or expired.",
    )
    hold = serializers.SerializerMethodField(
        help_text="Two-phase transfers only (null otherwise): the hold and when it expires."
    )
    reversedAmount = serializers.IntegerField(source="reversed_amount")  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815

    @extend_schema_field(TransferHoldOut(allow_null=True))
    def get_hold(self, transfer) -> dict | None:
        return None if transfer.hold_id is None else TransferHoldOut(transfer).data


class ReferencedTransferOut(TransferOut):
    """v2: with the client's reference and the batch it came in."""

    reference = serializers.CharField(allow_null=True)
    batchId = serializers.CharField(source="batch_id", allow_null=True)  # noqa: N815
    metadata = MetadataField()


TRANSFER_OUTPUT = {V1: TransferOut, V2: ReferencedTransferOut}


class ReversalOut(Serializer):
    reversalId = serializers.CharField(source="id")  # noqa: N815
    transferId = serializers.CharField(source="transfer_id")  # noqa: N815
    amount = serializers.IntegerField()
    currency = serializers.CharField()
    createdAt = TimestampField(source="created_at")  # noqa: N815
    transfer = TransferOut(help_text="The transfer after this reversal.")


class ReferencedReversalOut(ReversalOut):
    transfer = ReferencedTransferOut(help_text="The transfer after this reversal.")


REVERSAL_OUTPUT = {V1: ReversalOut, V2: ReferencedReversalOut}


class BatchResultOut(StoredDataSerializer):
    index = serializers.IntegerField()
    status = serializers.ChoiceField(choices=[POSTED, FAILED])
    transferId = serializers.CharField(required=False, help_text="When posted.")  # noqa: N815
    code = serializers.CharField(required=False, help_text="When failed: the error code.")
    message = serializers.CharField(required=False, help_text="When failed.")
    reference = serializers.CharField(allow_null=True)


class BatchOut(Serializer):
    batchId = serializers.CharField(source="id")  # noqa: N815
    mode = serializers.ChoiceField(choices=TransferBatch.Mode.choices)
    total = serializers.SerializerMethodField()
    posted = serializers.SerializerMethodField()
    failed = serializers.SerializerMethodField()
    results = BatchResultOut(many=True)
    createdAt = TimestampField(source="created_at")  # noqa: N815

    def get_total(self, batch) -> int:
        return len(batch.results)

    def get_posted(self, batch) -> int:
        return sum(1 for result in batch.results if result["status"] == POSTED)

    def get_failed(self, batch) -> int:
        return sum(1 for result in batch.results if result["status"] == FAILED)


class TransferQuery(Serializer):
    accountId = StrictCharField(required=False, max_length=40)  # noqa: N815


def _names_a_pan(transfer: dict) -> bool:
    return "pan" in transfer["source"] or "pan" in transfer["destination"]


class TransferListView(TXView):
    write_scope = scopes.MONEY_WRITE
    # A full card number in the body is card data: a `pan` source or destination also needs it.
    body_scopes = (scopes.BodyScope(scopes.CARDS_SENSITIVE, "a `pan` in the body", _names_a_pan),)

    @document(
        name="Transfer",
        resources=TRANSFER_OUTPUT,
        request=CREATE_INPUT,
        created=True,
        summary="Transfer money between two accounts, cards or PANs",
        description="Same institution and currency; posted at once (`CashDec` on the source, "
        "`CashInc` on the destination). A card or PAN names the card's account; a sending card "
        "must be active (422 `card_not_active`) and its limits apply (422 `limit_exceeded`). "
        "422 `insufficient_funds`, `account_not_active`, `currency_mismatch`.",
        operation_id="transfers_create",
        tags=["Transfers"],
    )
    def post(self, request):
        data = self.parse(self.for_version(CREATE_INPUT))
        # Before any PAN is looked up: without the scope a PAN is neither resolved nor counted,
        # and nothing changes.
        scopes.require_body_scopes(request, self.body_scopes, data)
        ends = endpoints_resolve(
            institution=self.institution,
            endpoints=[data["source"], data["destination"]],
            actor=Actor.of_request(request),
        )
        fields = order_fields(data, ends)
        if "hold" in data:  # two-phase: created pending (docs/two-phase-transfers.md)
            transfer = transfer_pending_create(
                **fields,
                expires_at=data["hold"]["expires_at"],
                institution=self.institution,
                actor=Actor.of_request(request),
            )
        else:
            transfer = transfer_create(
                **fields, institution=self.institution, actor=Actor.of_request(request)
            )
        return self.created(self.for_version(TRANSFER_OUTPUT)(transfer).data)

    @document(
        name="Transfer",
        resources=TRANSFER_OUTPUT,
        many=True,
        parameters=[OpenApiParameter("accountId", str, description="From or to this account.")],
        summary="List transfers, newest first",
        operation_id="transfers_list",
        tags=["Transfers"],
    )
    def get(self, request):
        query = self.parse_query(TransferQuery)
        transfers = transfer_list(institution=self.institution, account_id=query.get("accountId"))
        return self.respond_list(transfers, self.for_version(TRANSFER_OUTPUT))


class TransferDetailView(TXView):
    write_scope = scopes.MONEY_WRITE

    @document(
        name="Transfer",
        resources=TRANSFER_OUTPUT,
        summary="Retrieve a transfer",
        operation_id="transfers_retrieve",
        tags=["Transfers"],
    )
    def get(self, request, transferId):  # noqa: N803 (path parameters are camelCase)
        transfer = transfer_get(institution=self.institution, transfer_id=transferId)
        return self.respond(self.for_version(TRANSFER_OUTPUT)(transfer).data)

    @document(
        name="Transfer",
        resources=TRANSFER_OUTPUT,
        request=UPDATE_INPUT,
        summary="Post or void a pending (two-phase) transfer; merge its metadata (v2)",
        description='`{"status": "posted"}` moves the money to the destination (`amount` '
        "optional: at most the held amount, 422 `amount_exceeds_remaining`; the rest is "
        'released); `{"status": "voided"}` releases the hold. 409 `invalid_state_transition` '
        "unless the transfer is pending (posting also past its `expiresAt`); 422 "
        "`account_not_active` when the source is no longer active or the destination is "
        "closed (the transfer stays pending). v1 also takes this as POST to the same path "
        "(docs/two-phase-transfers.md). v2 also takes `metadata` on any transfer, merged "
        "(docs/metadata.md); resolution and metadata change together or not at all.",
        operation_id="transfers_update",
        tags=["Transfers"],
    )
    def patch(self, request, transferId):  # noqa: N803
        transfer = transfer_get(institution=self.institution, transfer_id=transferId)
        data = self.parse(self.for_version(UPDATE_INPUT))
        if "status" in data:
            transfer = transfer_resolve(
                transfer=transfer,
                status=data["status"],
                amount=data.get("amount"),
                actor=Actor.of_request(request),
            )
        if "metadata" in data:
            transfer = transfer_update_metadata(transfer=transfer, metadata=data["metadata"]).value
        return self.respond(self.for_version(TRANSFER_OUTPUT)(transfer).data)


class TransferReversalsView(TXView):
    write_scope = scopes.MONEY_WRITE

    @document(
        name="Reversal",
        resources=REVERSAL_OUTPUT,
        request=both(ReversalCreate),
        created=True,
        summary="Reverse a transfer (partially or whole)",
        description="Reversals add up to at most the transfer's amount (422 "
        "`amount_exceeds_remaining`); a fully reversed transfer answers 409. The destination "
        "needs the funds (422 `insufficient_funds`).",
        operation_id="transfers_reversals_create",
        tags=["Transfers"],
    )
    def post(self, request, transferId):  # noqa: N803
        transfer = transfer_get(institution=self.institution, transfer_id=transferId)
        data = self.parse(ReversalCreate)
        reversal = transfer_reverse(
            transfer=transfer, amount=data.get("amount"), actor=Actor.of_request(request)
        )
        return self.created(self.for_version(REVERSAL_OUTPUT)(reversal).data)


class TransferBatchListView(TXView):
    write_scope = scopes.MONEY_WRITE
    # One item naming a `pan` makes the whole batch need it.
    body_scopes = (
        scopes.BodyScope(
            scopes.CARDS_SENSITIVE,
            "a `pan` in the body",
            lambda data: any(_names_a_pan(item) for item in data["transfers"]),
        ),
    )

    @document(
        name="TransferBatch",
        resources={V2: BatchOut},
        request={V2: BatchCreate},
        created=True,
        summary="Post many transfers in one request, in order",
        description="1 to 1,000 items, each the body of `POST /transfers` (with its "
        "`reference`), applied in request order in one transaction. `atomic`: all post or "
        "none; the first failing item makes the batch 422 `batch_item_failed` (details: "
        "`index`, `code`, `message`, `details`). `independent`: each item posts or fails on "
        "its own; `results` says which. Every posted item is an ordinary transfer with its "
        "`batchId`. v2 only (docs/transfer-batches.md).",
        operation_id="transfer_batches_create",
        tags=["Transfers"],
    )
    def post(self, request):
        data = self.parse(BatchCreate)
        scopes.require_body_scopes(request, self.body_scopes, data)
        batch = transfer_batch_create(
            institution=self.institution,
            mode=data["mode"],
            items=data["transfers"],
            actor=Actor.of_request(request),
        )
        return self.created(BatchOut(batch).data)


class TransferBatchDetailView(TXView):
    @document(
        name="TransferBatch",
        resources={V2: BatchOut},
        summary="Retrieve a transfer batch: the document its creation answered",
        operation_id="transfer_batches_retrieve",
        tags=["Transfers"],
    )
    def get(self, request, batchId):  # noqa: N803
        return self.respond(
            BatchOut(transfer_batch_get(institution=self.institution, batch_id=batchId)).data
        )
