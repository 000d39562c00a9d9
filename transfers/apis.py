"""`/transfers`: move money between two accounts of the institution, read, reverse.

`source` and `destination` each name one account: by `accountId`, by `accountNumber`, or through
a card by `cardId` or `pan` (account numbers and PANs are sensitive identifiers, so the body is
where they belong). Identical in both versions.
"""

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from api.schema import both, document
from api.serializers import (
    AmountField,
    CurrencyField,
    StrictCharField,
    StrictSerializer,
    TimestampField,
)
from api.views import TXView
from cards.apis.serializers import PanField
from core.actors import Actor
from institutions import scopes

from .endpoints import endpoints_resolve
from .models import Transfer
from .selectors import transfer_get, transfer_list
from .services import transfer_create, transfer_reverse


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


class TransferCreate(StrictSerializer):
    source = Endpoint()
    destination = Endpoint()
    amount = AmountField(help_text="Minor units, e.g. 1050 = 10.50 EUR.")
    currency = CurrencyField()
    description = StrictCharField(max_length=500, required=False, allow_blank=True)


class ReversalCreate(StrictSerializer):
    amount = AmountField(
        required=False, help_text="At most what is not yet reversed (default: all of it)."
    )


class SourceOut(serializers.Serializer):
    accountId = serializers.CharField(source="source_account_id")  # noqa: N815
    cardId = serializers.CharField(  # noqa: N815
        source="source_card_id", allow_null=True, help_text="Set when sent by card or PAN."
    )


class DestinationOut(serializers.Serializer):
    accountId = serializers.CharField(source="destination_account_id")  # noqa: N815
    cardId = serializers.CharField(  # noqa: N815
        source="destination_card_id", allow_null=True, help_text="Set when sent to a card or PAN."
    )


class TransferOut(serializers.Serializer):
    transferId = serializers.CharField(source="id")  # noqa: N815
    source = SourceOut(source="*")
    destination = DestinationOut(source="*")
    amount = serializers.IntegerField()
    currency = serializers.CharField()
    description = serializers.CharField()
    status = serializers.ChoiceField(choices=Transfer.Status.choices)
    reversedAmount = serializers.IntegerField(source="reversed_amount")  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815


class ReversalOut(serializers.Serializer):
    reversalId = serializers.CharField(source="id")  # noqa: N815
    transferId = serializers.CharField(source="transfer_id")  # noqa: N815
    amount = serializers.IntegerField()
    currency = serializers.CharField()
    createdAt = TimestampField(source="created_at")  # noqa: N815
    transfer = TransferOut(help_text="The transfer after this reversal.")


class TransferQuery(serializers.Serializer):
    accountId = StrictCharField(required=False, max_length=40)  # noqa: N815


class TransferListView(TXView):
    write_scope = scopes.MONEY_WRITE
    # A full card number in the body is card data: a `pan` source or destination also needs it.
    pan_scope = scopes.CARDS_SENSITIVE

    @document(
        name="Transfer",
        resources=both(TransferOut),
        request=both(TransferCreate),
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
        data = self.parse(TransferCreate)
        if "pan" in data["source"] or "pan" in data["destination"]:
            # Before any PAN is looked up: without the scope a PAN is neither resolved nor
            # counted, and nothing changes.
            scopes.require_scope(request, self.pan_scope)
        source, destination = endpoints_resolve(
            institution=self.institution,
            endpoints=[data["source"], data["destination"]],
            actor=Actor.of_request(request),
        )
        transfer = transfer_create(
            institution=self.institution,
            source=source.account,
            destination=destination.account,
            source_card=source.card,
            destination_card=destination.card,
            amount=data["amount"],
            currency=data["currency"],
            description=data.get("description", ""),
            actor=Actor.of_request(request),
        )
        return self.created(TransferOut(transfer).data)

    @document(
        name="Transfer",
        resources=both(TransferOut),
        many=True,
        parameters=[OpenApiParameter("accountId", str, description="From or to this account.")],
        summary="List transfers, newest first",
        operation_id="transfers_list",
        tags=["Transfers"],
    )
    def get(self, request):
        query = self.parse_query(TransferQuery)
        transfers = transfer_list(institution=self.institution, account_id=query.get("accountId"))
        return self.respond_list(transfers, TransferOut)


class TransferDetailView(TXView):
    @document(
        name="Transfer",
        resources=both(TransferOut),
        summary="Retrieve a transfer",
        operation_id="transfers_retrieve",
        tags=["Transfers"],
    )
    def get(self, request, transferId):  # noqa: N803 (path parameters are camelCase)
        return self.respond(
            TransferOut(transfer_get(institution=self.institution, transfer_id=transferId)).data
        )


class TransferReversalsView(TXView):
    write_scope = scopes.MONEY_WRITE

    @document(
        name="Reversal",
        resources=both(ReversalOut),
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
        return self.created(ReversalOut(reversal).data)
