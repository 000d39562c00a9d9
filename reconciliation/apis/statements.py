"""The bank's statements over the API (docs/reconciliation.md), v2 only, scope `bank` to upload."""

import base64
import binascii

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.schema import document
from api.serializers import Serializer, StrictCharField, StrictSerializer, TimestampField
from api.versions import V2
from api.views import TXView
from core.exceptions import ValidationFailed
from core.selectors import get_of_institution
from institutions import scopes

from ..formats import StatementRefused
from ..models import BankStatement, BankStatementLine
from ..services.proof import statement_proof
from ..services.statements import bank_statement_receive

TAGS = ["Reconciliation"]


class BankStatementUpload(StrictSerializer):
    format = serializers.ChoiceField(choices=BankStatement.Format.choices)
    name = StrictCharField(max_length=200)
    contentBase64 = StrictCharField(  # noqa: N815
        help_text="The file's bytes, base64 (at most MAX_BATCH_BODY_BYTES of body)."
    )


class BankStatementOut(Serializer):
    statementId = serializers.CharField(source="id")  # noqa: N815
    format = serializers.ChoiceField(choices=BankStatement.Format.choices)
    name = serializers.CharField()
    sha256 = serializers.CharField()
    accountId = serializers.CharField(  # noqa: N815
        source="account_id", help_text="The internal account it mirrors (rail settlement)."
    )
    bankStatementId = serializers.CharField(source="bank_statement_id")  # noqa: N815
    sequence = serializers.CharField()
    accountLast4 = serializers.CharField(  # noqa: N815
        source="account_last4", help_text="The bank account's last four characters: never more."
    )
    currency = serializers.CharField()
    openingBalance = serializers.IntegerField(source="opening_balance", allow_null=True)  # noqa: N815
    closingBalance = serializers.IntegerField(source="closing_balance", allow_null=True)  # noqa: N815
    periodStart = serializers.DateField(source="period_start", allow_null=True)  # noqa: N815
    periodEnd = serializers.DateField(source="period_end", allow_null=True)  # noqa: N815
    lineCount = serializers.IntegerField(source="line_count")  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815


class ProofOut(Serializer):
    closingAt = TimestampField(  # noqa: N815
        source="closing_at", help_text="The end of the statement's last day, its time zone's."
    )
    ledgerBalance = serializers.IntegerField(  # noqa: N815
        source="ledger_balance",
        help_text="The mirrored account by value date at closingAt, as the bank counts (money "
        "in positive).",
    )
    closingBalance = serializers.IntegerField(source="closing_balance")  # noqa: N815
    openBreaks = serializers.IntegerField(  # noqa: N815
        source="standing_breaks",
        help_text="The breaks standing at closingAt: open, or resolved from a later day.",
    )
    difference = serializers.IntegerField(
        help_text="ledgerBalance - (closingBalance - openBreaks): 0 when the proof holds."
    )
    holds = serializers.BooleanField()


class BankStatementDetailOut(BankStatementOut):
    proof = serializers.SerializerMethodField(
        help_text="The proof (docs/reconciliation.md): null for an intraday statement, one "
        "without a closing balance or last day, or one not reconciled yet."
    )

    @extend_schema_field(ProofOut(allow_null=True))
    def get_proof(self, statement) -> dict | None:
        proof = statement_proof(statement)
        return None if proof is None else ProofOut(proof).data


class BankStatementLineOut(Serializer):
    lineId = serializers.CharField(source="id")  # noqa: N815
    position = serializers.IntegerField()
    bookingDate = serializers.DateField(source="booking_date", allow_null=True)  # noqa: N815
    valueDate = serializers.DateField(source="value_date", allow_null=True)  # noqa: N815
    amount = serializers.IntegerField(help_text="Minor units of the currency, positive.")
    direction = serializers.ChoiceField(choices=BankStatementLine.Direction.choices)
    currency = serializers.CharField()
    bankReference = serializers.CharField(source="bank_reference")  # noqa: N815
    endToEndId = serializers.CharField(source="end_to_end_id")  # noqa: N815
    traceNumber = serializers.CharField(source="trace_number")  # noqa: N815
    remittance = serializers.CharField()
    counterpartyName = serializers.CharField(source="counterparty_name")  # noqa: N815
    counterpartyAccountLast4 = serializers.CharField(  # noqa: N815
        source="counterparty_account_last4"
    )
    batchCount = serializers.IntegerField(source="batch_count", allow_null=True)  # noqa: N815


def _statement(institution, statement_id: str) -> BankStatement:
    return get_of_institution(
        BankStatement.objects.defer("content"),
        institution=institution,
        id=statement_id,
        missing="No bank statement with this id.",
    )


class BankStatementListView(TXView):
    write_scope = scopes.BANK

    @document(
        name="BankStatement",
        resources={V2: BankStatementOut},
        many=True,
        summary="List the bank's statements, newest first",
        operation_id="bank_statements_list",
        tags=TAGS,
    )
    def get(self, request):
        rows = BankStatement.objects.filter(institution=self.institution).defer("content")
        return self.respond_list(rows, BankStatementOut)

    @document(
        name="BankStatement",
        resources={V2: BankStatementOut},
        request={V2: BankStatementUpload},
        created=True,
        summary="Upload a statement of the bank (camt.053, camt.052, BAI2 or MT940)",
        description="Read whole first (camt against its official XSD, BAI2 and MT940 by their "
        "libraries): a file that is not valid answers 400 naming what is wrong "
        "(`details.contentBase64`) and nothing is kept. The same bytes again are the same "
        "statement (201 with it as it was).",
        operation_id="bank_statements_create",
        tags=TAGS,
    )
    def post(self, request):
        data = self.parse(BankStatementUpload)
        try:
            content = base64.b64decode(data["contentBase64"], validate=True)
        except (binascii.Error, ValueError):
            raise ValidationFailed(details={"contentBase64": "Not base64."}) from None
        try:
            statement, _ = bank_statement_receive(
                institution=self.institution,
                fmt=data["format"],
                name=data["name"],
                content=content,
            )
        except StatementRefused as refused:
            raise ValidationFailed(details={"contentBase64": refused.reason[:500]}) from None
        statement = BankStatement.objects.defer("content").get(pk=statement.pk)
        return self.created(BankStatementOut(statement).data)


class BankStatementDetailView(TXView):
    @document(
        name="BankStatementDetail",
        resources={V2: BankStatementDetailOut},
        summary="Retrieve a statement's header and its proof",
        operation_id="bank_statements_retrieve",
        tags=TAGS,
    )
    def get(self, request, statementId):  # noqa: N803
        statement = _statement(self.institution, statementId)
        return self.respond(BankStatementDetailOut(statement).data)


class BankStatementLineListView(TXView):
    @document(
        name="BankStatementLine",
        resources={V2: BankStatementLineOut},
        many=True,
        summary="List a statement's lines",
        operation_id="bank_statement_lines_list",
        tags=TAGS,
    )
    def get(self, request, statementId):  # noqa: N803
        statement = _statement(self.institution, statementId)
        rows = BankStatementLine.objects.filter(statement=statement)
        return self.respond_list(rows, BankStatementLineOut)
