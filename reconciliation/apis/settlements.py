"""The card networks' settlements over the API (docs/reconciliation.md, "Card settlement in"),
v2 only, scope `network` to send one."""

from rest_framework import serializers

from api.schema import document
from api.serializers import (
    CurrencyField,
    Serializer,
    StrictCharField,
    StrictDateField,
    StrictSerializer,
    TimestampField,
    WholeNumberField,
)
from api.versions import V2
from api.views import TXView
from core.money import MAX_AMOUNT
from core.selectors import get_of_institution
from institutions import scopes

from ..models import NetworkSettlement, NetworkSettlementRow
from ..services.settlement_matching import settlement_proof
from ..services.settlements import MAX_ROWS, network_settlement_receive

TAGS = ["Reconciliation"]
SIGNED = "Minor units, signed from the institution's side: negative what it pays the network."


class SignedAmountField(WholeNumberField):
    """An integer of minor units, either sign, at most MAX_AMOUNT either way."""

    def __init__(self, **kwargs):
        kwargs.setdefault("min_value", -MAX_AMOUNT)
        kwargs.setdefault("max_value", MAX_AMOUNT)
        kwargs.setdefault("help_text", SIGNED)
        super().__init__(**kwargs)


class SettlementTotals(StrictSerializer):
    purchases = SignedAmountField(help_text="The purchase rows' amounts: 0 or below.")
    refunds = SignedAmountField(help_text="The refund rows' amounts: 0 or above.")
    cash = SignedAmountField(help_text="The cash rows' amounts: 0 or below.")
    chargebacks = SignedAmountField(help_text="The chargeback rows' amounts: 0 or above.")
    representments = SignedAmountField(help_text="The representment rows' amounts: 0 or below.")
    interchange = SignedAmountField(help_text="Every row's interchange.")
    schemeFees = SignedAmountField(  # noqa: N815
        source="scheme_fees", help_text="The network's fees of the day."
    )
    net = SignedAmountField(
        help_text="purchases + refunds + cash + chargebacks + representments + interchange + "
        "schemeFees: what moved between the network and the institution."
    )


class SettlementRowIn(StrictSerializer):
    networkTransactionId = StrictCharField(  # noqa: N815
        source="network_transaction_id",
        max_length=64,
        trim_whitespace=False,
        help_text="The network's id of the transaction: the one TX gave it (an authorization's "
        "id; a refund's, its return's), 1 to 64 letters, digits, '_' or '-'.",
    )
    kind = serializers.ChoiceField(choices=NetworkSettlementRow.Kind.choices)
    amount = SignedAmountField(
        help_text=f"{SIGNED} Below 0 for a purchase, cash or representment, above 0 for a "
        "refund or chargeback."
    )
    interchange = SignedAmountField(required=False, default=0)


class NetworkSettlementIn(StrictSerializer):
    network = serializers.ChoiceField(choices=NetworkSettlement.Network.choices)
    settlementDate = StrictDateField(  # noqa: N815
        source="settlement_date",
        help_text="The date the network settled: its journals' value date (today or before).",
    )
    currency = CurrencyField()
    totals = SettlementTotals()
    rows = SettlementRowIn(many=True, max_length=MAX_ROWS, help_text=f"At most {MAX_ROWS}.")


class NetworkSettlementOut(Serializer):
    settlementId = serializers.CharField(source="id")  # noqa: N815
    network = serializers.ChoiceField(choices=NetworkSettlement.Network.choices)
    settlementDate = serializers.DateField(source="settlement_date")  # noqa: N815
    currency = serializers.CharField()
    purchases = serializers.IntegerField()
    refunds = serializers.IntegerField()
    cash = serializers.IntegerField()
    chargebacks = serializers.IntegerField()
    representments = serializers.IntegerField()
    interchange = serializers.IntegerField()
    schemeFees = serializers.IntegerField(source="scheme_fees")  # noqa: N815
    net = serializers.IntegerField(help_text=SIGNED)
    sha256 = serializers.CharField(help_text="Of the content as read (rows in any order).")
    rowCount = serializers.IntegerField(source="row_count")  # noqa: N815
    clearingJournalId = serializers.CharField(  # noqa: N815
        source="clearing_journal_id", allow_null=True
    )
    interchangeJournalId = serializers.CharField(  # noqa: N815
        source="interchange_journal_id", allow_null=True
    )
    schemeFeesJournalId = serializers.CharField(  # noqa: N815
        source="scheme_fees_journal_id", allow_null=True
    )
    createdAt = TimestampField(source="created_at")  # noqa: N815


class NetworkSettlementRowOut(Serializer):
    rowId = serializers.CharField(source="id")  # noqa: N815
    position = serializers.IntegerField()
    networkTransactionId = serializers.CharField(source="network_transaction_id")  # noqa: N815
    kind = serializers.ChoiceField(choices=NetworkSettlementRow.Kind.choices)
    amount = serializers.IntegerField(help_text=SIGNED)
    interchange = serializers.IntegerField()


def _settlement(institution, settlement_id: str) -> NetworkSettlement:
    return get_of_institution(
        NetworkSettlement,
        institution=institution,
        id=settlement_id,
        missing="No network settlement with this id.",
    )


class NetworkSettlementListView(TXView):
    write_scope = scopes.NETWORK

    @document(
        name="NetworkSettlement",
        resources={V2: NetworkSettlementOut},
        many=True,
        summary="List the card networks' settlements, newest first",
        operation_id="network_settlements_list",
        tags=TAGS,
    )
    def get(self, request):
        rows = NetworkSettlement.objects.filter(institution=self.institution)
        return self.respond_list(rows, NetworkSettlementOut)

    @document(
        name="NetworkSettlement",
        resources={V2: NetworkSettlementOut},
        request={V2: NetworkSettlementIn},
        created=True,
        summary="Send a card network's settlement of a day",
        description="Checked whole: the totals are the rows' sums by kind, `net` their sum "
        "with the scheme fees; what is wrong answers 400 naming the field and nothing is kept. "
        "Stored with its rows and posted as journals value-dated to the settlement date. The "
        "same content again is the same settlement (201 with it as it was); other content for "
        "the same network, date and currency is 409 `already_exists`.",
        operation_id="network_settlements_create",
        tags=TAGS,
    )
    def post(self, request):
        data = self.parse(NetworkSettlementIn)
        settlement, _ = network_settlement_receive(institution=self.institution, **data)
        return self.created(NetworkSettlementOut(settlement).data)


class NetworkSettlementDetailView(TXView):
    @document(
        name="NetworkSettlement",
        resources={V2: NetworkSettlementOut},
        summary="Retrieve a network's settlement (its totals)",
        operation_id="network_settlements_retrieve",
        tags=TAGS,
    )
    def get(self, request, settlementId):  # noqa: N803
        return self.respond(NetworkSettlementOut(_settlement(self.institution, settlementId)).data)


class NetworkSettlementRowListView(TXView):
    @document(
        name="NetworkSettlementRow",
        resources={V2: NetworkSettlementRowOut},
        many=True,
        summary="List a network settlement's rows",
        operation_id="network_settlement_rows_list",
        tags=TAGS,
    )
    def get(self, request, settlementId):  # noqa: N803
        settlement = _settlement(self.institution, settlementId)
        rows = NetworkSettlementRow.objects.filter(settlement=settlement)
        return self.respond_list(rows, NetworkSettlementRowOut)


class SettlementProofOut(Serializer):
    settlementId = serializers.CharField()  # noqa: N815
    cardClearingMovement = serializers.IntegerField(  # noqa: N815
        source="card_clearing_movement",
        help_text="Card clearing's entries of the settlement's transactions (not the "
        "settlements' journals), its debits less its credits: signed as the settlement signs.",
    )
    net = serializers.IntegerField()
    interchange = serializers.IntegerField()
    schemeFees = serializers.IntegerField(source="scheme_fees")  # noqa: N815
    transactions = serializers.IntegerField(
        help_text="net - interchange - schemeFees: what the settlement posted on card clearing."
    )
    openBreaks = serializers.IntegerField(  # noqa: N815
        source="open_breaks", help_text="The sum of the settlement's open breaks' amounts."
    )
    difference = serializers.IntegerField(
        help_text="cardClearingMovement - (transactions - openBreaks): 0 when the proof holds."
    )
    holds = serializers.BooleanField()


class NetworkSettlementProofView(TXView):
    @document(
        name="NetworkSettlementProof",
        resources={V2: SettlementProofOut},
        summary="The settlement's proof: card clearing against the settlement and its breaks",
        description="Card clearing's movement of the settlement's transactions equals its "
        "transactions total (net less interchange and scheme fees) less its open breaks, to the "
        'minor unit (docs/reconciliation.md, "The settlement\'s proof").',
        operation_id="network_settlement_proof_retrieve",
        tags=TAGS,
    )
    def get(self, request, settlementId):  # noqa: N803
        settlement = _settlement(self.institution, settlementId)
        proof = {"settlementId": settlement.pk, **settlement_proof(settlement)}
        return self.respond(SettlementProofOut(proof).data)
