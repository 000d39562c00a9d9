"""`/inbound-entries` (v2 only; docs/payments.md): other banks' credits and debits of the
institution's accounts, read with `read` (docs/tenancy-and-keys.md)."""

from rest_framework import serializers

from api.schema import document
from api.serializers import Serializer, StrictCharField, TimestampField
from api.versions import V2
from api.views import TXView

from ..models import InboundEntry, Rail
from ..selectors import inbound_entry_get, inbound_entry_list

TAGS = ["Payments"]


# --- input
class InboundEntryQuery(Serializer):
    status = serializers.ChoiceField(choices=InboundEntry.Status.choices, required=False)
    accountId = StrictCharField(required=False, max_length=40)  # noqa: N815


# --- output
class InboundReturnOut(Serializer):
    code = serializers.CharField(
        source="return_code",
        help_text="The reason TX returns it (R01); a SEPA credit's (AC01): the reason its return "
        "would carry, in suspense, or the reason TX rejected or returned it.",
    )
    reason = serializers.CharField(source="return_reason", help_text="Normalized.")
    fileId = serializers.CharField(  # noqa: N815
        source="return_file_id", allow_null=True, help_text="TX's file that carries the return."
    )
    traceNumber = serializers.CharField(source="return_trace_number")  # noqa: N815
    stopPaymentId = serializers.CharField(  # noqa: N815
        source="stop_payment_id", allow_null=True, help_text="R08: the stop payment it matched."
    )


class InboundEntryOut(Serializer):
    inboundEntryId = serializers.CharField(source="id")  # noqa: N815
    accountId = serializers.CharField(  # noqa: N815
        source="account_id", allow_null=True, help_text="None: no account has the number."
    )
    accountNumberLast4 = serializers.CharField(source="account_number_last4")  # noqa: N815
    direction = serializers.ChoiceField(
        choices=InboundEntry.Direction.choices, help_text="credit: money in; debit: money out."
    )
    amount = serializers.IntegerField()
    currency = serializers.CharField()
    prenote = serializers.BooleanField()
    rail = serializers.ChoiceField(choices=Rail.choices)
    secCode = serializers.CharField(source="sec_code")  # noqa: N815
    companyName = serializers.CharField(  # noqa: N815
        source="company_name", help_text="The originator: ACH's company, a SEPA credit's debtor."
    )
    companyId = serializers.CharField(source="company_id")  # noqa: N815
    description = serializers.CharField(source="company_entry_description")
    receiverName = serializers.CharField(source="receiver_name")  # noqa: N815
    traceNumber = serializers.CharField(  # noqa: N815
        source="trace_number", help_text="The originating bank's (ACH)."
    )
    endToEndId = serializers.CharField(  # noqa: N815
        source="end_to_end_id", help_text="A SEPA credit's, as its payer gave it; blank for ACH."
    )
    remittanceInfo = serializers.CharField(  # noqa: N815
        source="remittance_info",
        help_text="A SEPA credit's remittance information or creditor reference; blank for ACH.",
    )
    settlementDate = serializers.DateField(source="settlement_date")  # noqa: N815
    status = serializers.ChoiceField(choices=InboundEntry.Status.choices)
    fileId = serializers.CharField(source="file_id")  # noqa: N815
    returnInfo = serializers.SerializerMethodField()  # noqa: N815
    appliedAt = TimestampField(source="applied_at", allow_null=True)  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815

    def get_returnInfo(self, inbound) -> dict | None:  # noqa: N802
        return InboundReturnOut(inbound).data if inbound.return_code else None


# --- views
class InboundEntryListView(TXView):
    @document(
        name="InboundEntry",
        resources={V2: InboundEntryOut},
        many=True,
        summary="List inbound entries (other banks' credits and debits), newest first",
        operation_id="inbound_entries_list",
        tags=TAGS,
    )
    def get(self, request):
        query = self.parse_query(InboundEntryQuery)
        rows = inbound_entry_list(
            institution=self.institution,
            status=query.get("status"),
            account_id=query.get("accountId"),
        )
        return self.respond_list(rows, InboundEntryOut)


class InboundEntryDetailView(TXView):
    @document(
        name="InboundEntry",
        resources={V2: InboundEntryOut},
        summary="Retrieve an inbound entry",
        operation_id="inbound_entries_retrieve",
        tags=TAGS,
    )
    def get(self, request, inboundEntryId):  # noqa: N803
        inbound = inbound_entry_get(institution=self.institution, inbound_entry_id=inboundEntryId)
        return self.respond(InboundEntryOut(inbound).data)
