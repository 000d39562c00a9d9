"""Statement lines: `GET /accounts/{accountId}/transactions`, `GET /transactions/{id}`.

Filters: `fromDate` and `toDate` (inclusive; a date `2026-11-01` or an ISO date-time; dates are
whole UTC days), `type` (Goods, Cash, CashDec, CashInc, Return) and `settlementStatus`
(Presentment, Unsettled). Newest first, cursor pagination. Identical in both versions but for
`category` and `feeId` (fee lines, docs/fees.md) and a foreign card payment's `merchantAmount`
and `merchantCurrency` (docs/card-transactions.md, "Foreign currency"), v2 only
(docs/metadata.md, "Versions").
"""

from datetime import UTC, date, datetime, time, timedelta

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from accounts.models.statement import TRANSACTION_STATUSES, StatementLine
from accounts.selectors import account_get
from api.schema import document
from api.serializers import Serializer, StoredDataField, TimestampField
from api.versions import V1, V2
from api.views import TXView
from cards.selectors import card_get

from .selectors import transaction_get, transaction_list


class DateOrDateTimeField(serializers.Field):
    """`2026-11-01` (a whole UTC day) or an ISO 8601 date-time (UTC when no offset is given).
    `end_of_day`: a bare date stands for the last millisecond of that day (an upper bound)."""

    default_error_messages = {
        "invalid": "Must be a date (2026-11-01) or an ISO 8601 date-time (2026-11-01T08:00:00Z)."
    }

    def __init__(self, *, end_of_day: bool, **kwargs):
        self.end_of_day = end_of_day
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        try:
            # Any ISO date is a whole day, not only `2026-11-01`: `20261101` read as a date-time
            # was midnight, so a toDate of that day left the day out.
            day = date.fromisoformat(data)
        except ValueError:
            day = None
        if day is not None:
            moment = datetime.combine(day, time.min, tzinfo=UTC)
            return moment + timedelta(days=1, milliseconds=-1) if self.end_of_day else moment
        try:
            moment = datetime.fromisoformat(data.replace("Z", "+00:00"))
        except ValueError:
            self.fail("invalid")
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class TransactionQuery(Serializer):
    fromDate = DateOrDateTimeField(end_of_day=False, required=False)  # noqa: N815
    toDate = DateOrDateTimeField(end_of_day=True, required=False)  # noqa: N815
    type = serializers.ChoiceField(choices=StatementLine.Type.choices, required=False)
    settlementStatus = serializers.ChoiceField(  # noqa: N815
        choices=StatementLine.SettlementStatus.choices, required=False
    )

    def validate(self, attrs):
        if "fromDate" in attrs and "toDate" in attrs and attrs["fromDate"] > attrs["toDate"]:
            raise serializers.ValidationError({"toDate": "Must not be before fromDate."})
        return attrs


class TransactionOut(Serializer):
    transactionId = serializers.CharField(source="id")  # noqa: N815
    accountId = serializers.CharField(source="account_id")  # noqa: N815
    cardId = serializers.CharField(  # noqa: N815
        source="card_id", allow_null=True, help_text="The card the money moved through, if any."
    )
    type = serializers.ChoiceField(choices=StatementLine.Type.choices)
    settlementStatus = serializers.ChoiceField(  # noqa: N815
        source="settlement_status", choices=StatementLine.SettlementStatus.choices
    )
    direction = serializers.SerializerMethodField(help_text="credit (money in) or debit.")
    amount = serializers.IntegerField(help_text="Minor units, always positive.")
    currency = serializers.CharField()
    description = serializers.CharField()
    status = serializers.ChoiceField(
        choices=TRANSACTION_STATUSES,
        help_text="posted: the money moved; pending: a card authorization awaiting its "
        "presentment; reversed or expired: an authorization released unpresented.",
    )
    merchant = StoredDataField(allow_null=True)
    authorizationId = serializers.CharField(  # noqa: N815
        source="authorization_id", allow_null=True, help_text="The card authorization, if any."
    )
    returnId = serializers.CharField(  # noqa: N815
        source="card_return_id", allow_null=True, help_text="The merchant return, if any."
    )
    holdId = serializers.CharField(source="hold_id", allow_null=True)  # noqa: N815
    transferId = serializers.CharField(source="transfer_id", allow_null=True)  # noqa: N815
    adjustmentId = serializers.CharField(source="adjustment_id", allow_null=True)  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815

    def get_direction(self, line) -> str:
        return "credit" if line.is_credit else "debit"


class TransactionOutV2(TransactionOut):
    """v2 adds what v1, the legacy line, does not show (docs/metadata.md, "Versions")."""

    category = serializers.ChoiceField(
        choices=StatementLine.Category.choices,
        allow_null=True,
        help_text='"fee": a fee charged (CashDec) or waived (CashInc), docs/fees.md; '
        '"dispute": a dispute\'s provisional credit (CashInc) or its reversal (CashDec), '
        'docs/disputes.md; "interest": interest posted at a period\'s end, deposit interest '
        "(CashInc) or overdraft interest (CashDec), its description the period, the balance "
        "method, the day count and the effective rate, docs/interest.md; null for every other "
        "line.",
    )
    disputeId = serializers.CharField(  # noqa: N815
        source="dispute_id", allow_null=True, help_text="The dispute of a dispute line."
    )
    valueAt = TimestampField(  # noqa: N815
        source="value_at",
        allow_null=True,
        help_text="When its money counts from, when earlier than `createdAt` (a provisional "
        "credit: the payment it disputes); null: from `createdAt`.",
    )
    feeId = serializers.CharField(  # noqa: N815
        source="fee_id", allow_null=True, help_text="The fee of a fee line."
    )
    merchantAmount = serializers.IntegerField(  # noqa: N815
        source="merchant_amount",
        allow_null=True,
        help_text="A card payment in another currency than the account's: what the merchant "
        "charged, in minor units of `merchantCurrency` (docs/card-transactions.md); null "
        "otherwise.",
    )
    merchantCurrency = serializers.CharField(source="merchant_currency", allow_null=True)  # noqa: N815


TRANSACTION_OUTPUT = {V1: TransactionOut, V2: TransactionOutV2}


LISTING_PARAMETERS = [
    OpenApiParameter("fromDate", str, description="Inclusive: a date or a date-time."),
    OpenApiParameter("toDate", str, description="Inclusive: a date or a date-time."),
    OpenApiParameter("type", str, enum=StatementLine.Type.values),
    OpenApiParameter("settlementStatus", str, enum=StatementLine.SettlementStatus.values),
]


def represent(line, version: str = V1):
    return TRANSACTION_OUTPUT[version](line).data


class AccountTransactionsView(TXView):
    @document(
        name="Transaction",
        resources=TRANSACTION_OUTPUT,
        many=True,
        parameters=LISTING_PARAMETERS,
        summary="List an account's transactions (statement lines), newest first",
        operation_id="accounts_transactions_list",
        tags=["Transactions"],
    )
    def get(self, request, accountId):  # noqa: N803 (path parameters are camelCase)
        account = account_get(institution=self.institution, account_id=accountId)
        query = self.parse_query(TransactionQuery)
        lines = transaction_list(
            account=account,
            from_time=query.get("fromDate"),
            to_time=query.get("toDate"),
            type=query.get("type"),
            settlement_status=query.get("settlementStatus"),
        )
        return self.respond_list(lines, self.for_version(TRANSACTION_OUTPUT), order_key="position")


class CardTransactionsView(TXView):
    @document(
        name="Transaction",
        resources=TRANSACTION_OUTPUT,
        many=True,
        parameters=LISTING_PARAMETERS,
        summary="List a card's transactions (statement lines), newest first",
        description="What moved through this card: authorizations (`Goods`, `Cash`), returns, "
        "card and PAN transfers. A renewed or replaced card's lines stay with the old card.",
        operation_id="cards_transactions_list",
        tags=["Transactions"],
    )
    def get(self, request, cardId):  # noqa: N803
        card = card_get(institution=self.institution, card_id=cardId)
        query = self.parse_query(TransactionQuery)
        lines = transaction_list(
            card=card,
            from_time=query.get("fromDate"),
            to_time=query.get("toDate"),
            type=query.get("type"),
            settlement_status=query.get("settlementStatus"),
        )
        return self.respond_list(lines, self.for_version(TRANSACTION_OUTPUT), order_key="position")


class TransactionDetailView(TXView):
    @document(
        name="Transaction",
        resources=TRANSACTION_OUTPUT,
        summary="Retrieve a transaction (statement line)",
        operation_id="transactions_retrieve",
        tags=["Transactions"],
    )
    def get(self, request, transactionId):  # noqa: N803
        return self.respond(
            represent(
                transaction_get(institution=self.institution, transaction_id=transactionId),
                self.request.version,
            )
        )
