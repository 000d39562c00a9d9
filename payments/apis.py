"""`/external-accounts`, `/payment-orders`, `/stop-payments` and `/rail-files` (v2 only;
docs/payments.md).

Scopes (docs/tenancy-and-keys.md): reading is `read`; external accounts are made and changed
with `external_accounts:write`; payment orders, which send money out of the bank, prenotes and
a customer's stop payments (which return other banks' debits) need `payments:write`, a scope of
their own that no key has unless granted on purpose (not in `full`); the bank's side (uploading
its files, reading a file's bytes, which carry account numbers) needs `bank`, granted like
`network` is for the card network's side.

An external account's number or IBAN travels only in the body that creates it: the API shows
its last four (`accountNumberLast4`, `ibanLast4`), never the number.
"""

import base64
import binascii

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.schema import document
from api.serializers import (
    AmountField,
    CountryNumericField,
    CurrencyField,
    MetadataField,
    MetadataPatchField,
    Serializer,
    StrictCharField,
    StrictDateField,
    StrictDateTimeField,
    StrictSerializer,
    TimestampField,
)
from api.versions import V2
from api.views import Continued, TXView
from core.actors import Actor
from core.exceptions import IdempotencyKeyInUse, ValidationFailed
from institutions import scopes

from .iso20022.codes import RECALL_REASONS
from .models import (
    ExternalAccount,
    InboundEntry,
    Mandate,
    PaymentOrder,
    Rail,
    RailFile,
    Recall,
    StopPayment,
)
from .selectors import (
    external_account_get,
    external_account_list,
    inbound_entry_get,
    inbound_entry_list,
    mandate_get,
    payment_order_get,
    payment_order_list,
    rail_file_get,
    rail_file_list,
    stop_payment_get,
    stop_payment_list,
)
from .services.external_accounts import (
    external_account_create,
    external_account_update,
    sepa_external_account_create,
)
from .services.inbound_files import FileRefused, rail_file_receive
from .services.instant import instant_send
from .services.mandates import mandate_amend, mandate_cancel, mandate_create
from .services.orders import external_account_prenote, payment_order_cancel, payment_order_create
from .services.recalls import recall_request
from .services.stop_payments import stop_payment_cancel, stop_payment_create

TAGS = ["Payments"]


# --- input
class AchDetails(StrictSerializer):
    routingNumber = StrictCharField(max_length=9, help_text="The 9-digit ABA routing number.")  # noqa: N815
    accountNumber = StrictCharField(  # noqa: N815
        max_length=17, help_text="4 to 17 digits. Sensitive: only ever in this body."
    )
    accountType = serializers.ChoiceField(  # noqa: N815
        choices=ExternalAccount.AccountType.choices
    )


class SepaDetails(StrictSerializer):
    iban = StrictCharField(
        max_length=42,
        help_text="The IBAN of an account in a SEPA country, electronic (DE89370400440532013000) "
        "or printed in groups of four. Sensitive: only ever in this body.",
    )
    bic = StrictCharField(
        required=False,
        max_length=11,
        help_text="Its bank's BIC (8 or 11 characters); optional, as SEPA asks for the IBAN only.",
    )


class ExternalAccountCreate(StrictSerializer):
    customerId = StrictCharField(  # noqa: N815
        required=False,
        max_length=40,
        help_text="Whose account it is; absent: the institution's own.",
    )
    holderName = StrictCharField(  # noqa: N815
        max_length=140, help_text="SEPA: at most 70 characters of the SEPA character set."
    )
    countryCode = CountryNumericField(  # noqa: N815
        help_text="ISO 3166-1 numeric; ACH: 840; SEPA: the IBAN's country."
    )
    currency = CurrencyField(help_text="ACH: USD; SEPA: EUR.")
    ach = AchDetails(required=False, help_text="An account in the US (give `ach` or `sepa`).")
    sepa = SepaDetails(required=False, help_text="An IBAN (give `ach` or `sepa`).")
    metadata = MetadataField(required=False)

    def validate(self, attrs):
        if ("ach" in attrs) == ("sepa" in attrs):
            raise serializers.ValidationError(
                {"sepa": "Give the account's details: `ach` or `sepa`, one of them."}
            )
        return attrs


class ExternalAccountUpdate(StrictSerializer):
    holderName = StrictCharField(max_length=140, required=False, source="holder_name")  # noqa: N815
    metadata = MetadataPatchField(required=False)

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("Give at least one field.")
        return attrs


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


class MandateCreate(StrictSerializer):
    externalAccountId = StrictCharField(  # noqa: N815
        max_length=40, help_text="The debtor's account: a SEPA external account."
    )
    mandateReference = StrictCharField(  # noqa: N815
        max_length=35,
        trim_whitespace=False,
        help_text="The mandate's reference (AT-01): 1 to 35 characters of the SEPA character "
        "set, unique in the institution.",
    )
    signatureDate = StrictDateField(help_text="When the debtor signed it (not in the future).")  # noqa: N815
    scheme = serializers.ChoiceField(choices=Mandate.Scheme.choices)
    type = serializers.ChoiceField(choices=Mandate.Type.choices)
    metadata = MetadataField(required=False)


class MandateUpdate(StrictSerializer):
    externalAccountId = StrictCharField(  # noqa: N815
        max_length=40, required=False, help_text="A new debtor account (a SEPA external account)."
    )
    mandateReference = StrictCharField(  # noqa: N815
        max_length=35, required=False, trim_whitespace=False, help_text="A new reference."
    )

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("Give at least one field.")
        return attrs


class MandateQuery(Serializer):
    status = serializers.ChoiceField(choices=Mandate.Status.choices, required=False)
    externalAccountId = StrictCharField(required=False, max_length=40)  # noqa: N815
    scheme = serializers.ChoiceField(choices=Mandate.Scheme.choices, required=False)


class CancellationCreate(StrictSerializer):
    reason = StrictCharField(max_length=200, required=False, allow_blank=True)


# The EPC's recall reasons (`iso20022.codes.RECALL_REASONS`), as the API lists them.
RECALL_REASON_CHOICES = sorted(RECALL_REASONS)


class RecallCreate(StrictSerializer):
    reason = serializers.ChoiceField(
        choices=RECALL_REASON_CHOICES,
        help_text="The EPC's: DUPL (duplicate), TECH (technical problem), FRAD (fraud), within "
        "10 TARGET2 business days of settlement; the originator's AC03 (wrong account), AM09 "
        "(wrong amount), CUST (no reason given), within 13 months.",
    )


class PrenoteCreate(StrictSerializer):
    """Nothing to send: the prenote goes to the external account's details."""


# The rails whose files the bank uploads: NACHA's, and SEPA credit transfers' ISO 20022 answers
# (pain.002, camt.054).
FILE_RAILS = [
    (Rail.ACH.value, Rail.ACH.label),
    (Rail.ACH_SAME_DAY.value, Rail.ACH_SAME_DAY.label),
    (Rail.SEPA_CT.value, Rail.SEPA_CT.label),
]


class RailFileUpload(StrictSerializer):
    rail = serializers.ChoiceField(choices=FILE_RAILS)
    name = StrictCharField(max_length=200)
    contentBase64 = StrictCharField(  # noqa: N815
        help_text="The file's bytes, base64 (at most MAX_BATCH_BODY_BYTES of body: larger files "
        "come through the inbox folder)."
    )


class PaymentOrderQuery(Serializer):
    status = serializers.ChoiceField(choices=PaymentOrder.Status.choices, required=False)
    accountId = StrictCharField(required=False, max_length=40)  # noqa: N815
    externalAccountId = StrictCharField(required=False, max_length=40)  # noqa: N815
    direction = serializers.ChoiceField(choices=PaymentOrder.Direction.choices, required=False)


class ExternalAccountQuery(Serializer):
    customerId = StrictCharField(required=False, max_length=40)  # noqa: N815


class InboundEntryQuery(Serializer):
    status = serializers.ChoiceField(choices=InboundEntry.Status.choices, required=False)
    accountId = StrictCharField(required=False, max_length=40)  # noqa: N815


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


class RailFileQuery(Serializer):
    direction = serializers.ChoiceField(choices=RailFile.Direction.choices, required=False)


# --- output
class AchDetailsOut(Serializer):
    routingNumber = serializers.CharField(source="ach_routing_number")  # noqa: N815
    accountNumberLast4 = serializers.CharField(source="ach_account_number_last4")  # noqa: N815
    accountType = serializers.CharField(source="ach_account_type")  # noqa: N815


class SepaDetailsOut(Serializer):
    ibanLast4 = serializers.CharField(  # noqa: N815
        source="sepa_iban_last4", help_text="The IBAN's last four characters: never the IBAN."
    )
    bic = serializers.CharField(source="sepa_bic", allow_null=True)

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data["bic"] = data["bic"] or None
        return data


class ExternalAccountOut(Serializer):
    externalAccountId = serializers.CharField(source="id")  # noqa: N815
    customerId = serializers.CharField(source="customer_id", allow_null=True)  # noqa: N815
    kind = serializers.ChoiceField(choices=ExternalAccount.Kind.choices)
    holderName = serializers.CharField(source="holder_name")  # noqa: N815
    countryCode = serializers.CharField(source="country_code")  # noqa: N815
    currency = serializers.CharField()
    ach = serializers.SerializerMethodField(help_text="An ACH account's details (null otherwise).")
    sepa = serializers.SerializerMethodField(help_text="A SEPA account's details (null otherwise).")
    status = serializers.ChoiceField(choices=ExternalAccount.Status.choices)
    verifiedAt = TimestampField(source="verified_at", allow_null=True)  # noqa: N815
    metadata = MetadataField()
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815

    @extend_schema_field(AchDetailsOut(allow_null=True))
    def get_ach(self, external) -> dict | None:
        return AchDetailsOut(external).data if external.kind == ExternalAccount.Kind.ACH else None

    @extend_schema_field(SepaDetailsOut(allow_null=True))
    def get_sepa(self, external) -> dict | None:
        return SepaDetailsOut(external).data if external.kind == ExternalAccount.Kind.SEPA else None


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


class RailFileOut(Serializer):
    fileId = serializers.CharField(source="id")  # noqa: N815
    rail = serializers.ChoiceField(choices=Rail.choices)
    direction = serializers.ChoiceField(choices=RailFile.Direction.choices)
    status = serializers.ChoiceField(choices=RailFile.Status.choices)
    name = serializers.CharField()
    sha256 = serializers.CharField()
    windowDate = serializers.DateField(source="window_date", allow_null=True)  # noqa: N815
    window = serializers.CharField()
    entryCount = serializers.IntegerField(source="entry_count")  # noqa: N815
    debitTotal = serializers.IntegerField(source="debit_total")  # noqa: N815
    creditTotal = serializers.IntegerField(source="credit_total")  # noqa: N815
    error = serializers.CharField()
    deliveredAt = TimestampField(source="delivered_at", allow_null=True)  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815


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


class AmendmentOut(Serializer):
    originalMandateReference = serializers.CharField(  # noqa: N815
        source="original_reference", help_text="Empty: the reference did not change."
    )
    originalExternalAccountId = serializers.CharField(  # noqa: N815
        source="original_external_account_id", allow_null=True
    )
    amendedAt = TimestampField(source="amended_at")  # noqa: N815


class MandateOut(Serializer):
    mandateId = serializers.CharField(source="id")  # noqa: N815
    externalAccountId = serializers.CharField(source="external_account_id")  # noqa: N815
    mandateReference = serializers.CharField(source="reference")  # noqa: N815
    signatureDate = serializers.DateField(source="signature_date")  # noqa: N815
    scheme = serializers.ChoiceField(choices=Mandate.Scheme.choices)
    type = serializers.ChoiceField(choices=Mandate.Type.choices)
    status = serializers.ChoiceField(choices=Mandate.Status.choices)
    pendingAmendment = serializers.SerializerMethodField(  # noqa: N815
        help_text="An amendment the next collection carries to the debtor's bank; null: none."
    )
    cancelledAt = TimestampField(source="cancelled_at", allow_null=True)  # noqa: N815
    cancellationReason = serializers.CharField(source="cancelled_reason")  # noqa: N815
    metadata = MetadataField()
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815

    @extend_schema_field(AmendmentOut(allow_null=True))
    def get_pendingAmendment(self, mandate) -> dict | None:  # noqa: N802
        if not mandate.original_reference and mandate.original_external_account_id is None:
            return None
        return AmendmentOut(mandate).data


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


class RailFileContentOut(Serializer):
    fileId = serializers.CharField(source="id")  # noqa: N815
    name = serializers.CharField()
    contentBase64 = serializers.SerializerMethodField()  # noqa: N815

    def get_contentBase64(self, rail_file) -> str:  # noqa: N802
        return base64.b64encode(bytes(rail_file.content)).decode()


# --- views
class ExternalAccountListView(TXView):
    write_scope = scopes.EXTERNAL_ACCOUNTS_WRITE

    @document(
        name="ExternalAccount",
        resources={V2: ExternalAccountOut},
        request={V2: ExternalAccountCreate},
        created=True,
        summary="Add an external account (an account at another bank)",
        description="A customer's (`customerId`) or the institution's own, in the US (`ach`) or "
        "in a SEPA country (`sepa`: an IBAN); `unverified` until a prenote's window passes "
        "(ACH) or staff verify it. The account number or IBAN is encrypted and shown by its "
        "last four from then on, and never repeated in an error.",
        operation_id="external_accounts_create",
        tags=TAGS,
    )
    def post(self, request):
        data = self.parse(ExternalAccountCreate)
        common = {
            "institution": self.institution,
            "customer_id": data.get("customerId"),
            "holder_name": data["holderName"],
            "country_code": data["countryCode"],
            "currency": data["currency"],
            "metadata": data.get("metadata"),
            "actor": Actor.of_request(request),
        }
        if "sepa" in data:
            sepa = data["sepa"]
            external = sepa_external_account_create(
                **common, iban=sepa["iban"], bic=sepa.get("bic")
            )
        else:
            ach = data["ach"]
            external = external_account_create(
                **common,
                routing_number=ach["routingNumber"],
                account_number=ach["accountNumber"],
                account_type=ach["accountType"],
            )
        return self.created(ExternalAccountOut(external).data)

    @document(
        name="ExternalAccount",
        resources={V2: ExternalAccountOut},
        many=True,
        summary="List external accounts, newest first",
        operation_id="external_accounts_list",
        tags=TAGS,
    )
    def get(self, request):
        query = self.parse_query(ExternalAccountQuery)
        rows = external_account_list(
            institution=self.institution, customer_id=query.get("customerId")
        )
        return self.respond_list(rows, ExternalAccountOut)


class ExternalAccountDetailView(TXView):
    write_scope = scopes.EXTERNAL_ACCOUNTS_WRITE

    @document(
        name="ExternalAccount",
        resources={V2: ExternalAccountOut},
        summary="Retrieve an external account",
        operation_id="external_accounts_retrieve",
        tags=TAGS,
    )
    def get(self, request, externalAccountId):  # noqa: N803
        external = external_account_get(
            institution=self.institution, external_account_id=externalAccountId
        )
        return self.respond(ExternalAccountOut(external).data)

    @document(
        name="ExternalAccount",
        resources={V2: ExternalAccountOut},
        request={V2: ExternalAccountUpdate},
        summary="Change an external account's holder name or metadata",
        operation_id="external_accounts_update",
        tags=TAGS,
    )
    def patch(self, request, externalAccountId):  # noqa: N803
        external = external_account_get(
            institution=self.institution, external_account_id=externalAccountId
        )
        changes = self.parse(ExternalAccountUpdate)
        external = external_account_update(external=external, changes=changes).value
        return self.respond(ExternalAccountOut(external).data)


class PrenoteView(TXView):
    write_scope = scopes.PAYMENTS_WRITE

    @document(
        name="PaymentOrder",
        resources={V2: PaymentOrderOut},
        request={V2: PrenoteCreate},
        created=True,
        summary="Verify an external account by a prenote",
        description="A zero-amount entry to it in the next file: the account is `verifying`, "
        "then `verified` when the prenote's return window passes with no return, `failed` on a "
        "return. 409 when it is verified already.",
        operation_id="external_account_prenotes_create",
        tags=TAGS,
    )
    def post(self, request, externalAccountId):  # noqa: N803
        external = external_account_get(
            institution=self.institution, external_account_id=externalAccountId
        )
        self.parse(PrenoteCreate)
        order = external_account_prenote(external=external, actor=Actor.of_request(request))
        return self.created(PaymentOrderOut(order).data)


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


class RailFileListView(TXView):
    write_scope = scopes.BANK

    @document(
        name="RailFile",
        resources={V2: RailFileOut},
        many=True,
        summary="List the files exchanged with the bank, newest first",
        operation_id="rail_files_list",
        tags=TAGS,
    )
    def get(self, request):
        query = self.parse_query(RailFileQuery)
        rows = rail_file_list(institution=self.institution, direction=query.get("direction"))
        return self.respond_list(rows, RailFileOut)

    @document(
        name="RailFile",
        resources={V2: RailFileOut},
        request={V2: RailFileUpload},
        created=True,
        summary="Upload one of the bank's files (returns, notifications of change, SEPA status "
        "reports and notifications)",
        description="Validated whole first (a NACHA file record by record; a `sepa_ct` file, a "
        "pain.002 or camt.054, against its official XSD): a file that is not valid answers 400 "
        "with the record and field, or the validator's message, that failed "
        "(`details.contentBase64`), and nothing of it is stored or applied. The same bytes again "
        "are the same file, applied once (201 with it as it was).",
        operation_id="rail_files_create",
        tags=TAGS,
    )
    def post(self, request):
        data = self.parse(RailFileUpload)
        try:
            content = base64.b64decode(data["contentBase64"], validate=True)
        except (binascii.Error, ValueError):
            raise ValidationFailed(details={"contentBase64": "Not base64."}) from None
        try:
            rail_file = rail_file_receive(
                institution=self.institution,
                rail=data["rail"],
                name=data["name"],
                content=content,
                keep_refused=False,
            )
        except FileRefused as refused:
            raise ValidationFailed(details={"contentBase64": refused.reason}) from None
        return self.created(RailFileOut(rail_file).data)


class RailFileDetailView(TXView):
    @document(
        name="RailFile",
        resources={V2: RailFileOut},
        summary="Retrieve a file's record",
        operation_id="rail_files_retrieve",
        tags=TAGS,
    )
    def get(self, request, fileId):  # noqa: N803
        rail_file = rail_file_get(institution=self.institution, file_id=fileId)
        return self.respond(RailFileOut(rail_file).data)


class RailFileContentView(TXView):
    read_scope = scopes.BANK

    @document(
        name="RailFileContent",
        resources={V2: RailFileContentOut},
        summary="A file's bytes (they carry account numbers: the bank's scope)",
        operation_id="rail_file_content_retrieve",
        tags=TAGS,
    )
    def get(self, request, fileId):  # noqa: N803
        rail_file = rail_file_get(institution=self.institution, file_id=fileId)
        rail_file = RailFile.objects.get(pk=rail_file.pk)  # with its bytes
        return self.respond(RailFileContentOut(rail_file).data)


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


class MandateListView(TXView):
    write_scope = scopes.PAYMENTS_WRITE

    @document(
        name="Mandate",
        resources={V2: MandateOut},
        request={V2: MandateCreate},
        created=True,
        summary="Record a SEPA direct debit mandate",
        description="The debtor's authorization to collect from a SEPA external account, "
        "under the institution's creditor identifier. 422 `creditor_identifier_missing` (no "
        "SEPA profile with a creditor identifier), `duplicate_reference` (a "
        "reference the institution has used).",
        operation_id="mandates_create",
        tags=TAGS,
    )
    def post(self, request):
        data = self.parse(MandateCreate)
        mandate = mandate_create(
            institution=self.institution,
            external_account_id=data["externalAccountId"],
            reference=data["mandateReference"],
            signature_date=data["signatureDate"],
            scheme=data["scheme"],
            type=data["type"],
            metadata=data.get("metadata"),
            actor=Actor.of_request(request),
        )
        return self.created(MandateOut(mandate).data)

    @document(
        name="Mandate",
        resources={V2: MandateOut},
        many=True,
        summary="List mandates, newest first",
        operation_id="mandates_list",
        tags=TAGS,
    )
    def get(self, request):
        query = self.parse_query(MandateQuery)
        rows = Mandate.objects.filter(institution=self.institution)
        for field, value in (
            ("status", query.get("status")),
            ("external_account_id", query.get("externalAccountId")),
            ("scheme", query.get("scheme")),
        ):
            if value is not None:
                rows = rows.filter(**{field: value})
        return self.respond_list(rows, MandateOut)


class MandateDetailView(TXView):
    write_scope = scopes.PAYMENTS_WRITE

    @document(
        name="Mandate",
        resources={V2: MandateOut},
        summary="Retrieve a mandate",
        operation_id="mandates_retrieve",
        tags=TAGS,
    )
    def get(self, request, mandateId):  # noqa: N803
        mandate = mandate_get(institution=self.institution, mandate_id=mandateId)
        return self.respond(MandateOut(mandate).data)

    @document(
        name="Mandate",
        resources={V2: MandateOut},
        request={V2: MandateUpdate},
        summary="Amend a mandate's debtor account or reference",
        description="What the EPC lets a creditor amend; the next collection carries the "
        "amendment to the debtor's bank. 409 `invalid_state_transition` for a cancelled mandate, "
        "or a new debtor account while a collection for the old one waits for its cut-off; 422 "
        "`duplicate_reference`.",
        operation_id="mandates_update",
        tags=TAGS,
    )
    def patch(self, request, mandateId):  # noqa: N803
        mandate = mandate_get(institution=self.institution, mandate_id=mandateId)
        data = self.parse(MandateUpdate)
        mandate = mandate_amend(
            mandate=mandate,
            external_account_id=data.get("externalAccountId"),
            reference=data.get("mandateReference"),
            actor=Actor.of_request(request),
        ).value
        return self.respond(MandateOut(mandate).data)


class MandateCancellationsView(TXView):
    write_scope = scopes.PAYMENTS_WRITE

    @document(
        name="Mandate",
        resources={V2: MandateOut},
        request={V2: CancellationCreate},
        created=True,
        summary="Cancel a mandate",
        description="No collection under it from now on; one waiting for its cut-off is "
        "cancelled with it. 409 `invalid_state_transition` when it is cancelled already.",
        operation_id="mandate_cancellations_create",
        tags=TAGS,
    )
    def post(self, request, mandateId):  # noqa: N803
        mandate = mandate_get(institution=self.institution, mandate_id=mandateId)
        data = self.parse(CancellationCreate)
        mandate = mandate_cancel(
            mandate=mandate, reason=data.get("reason", ""), actor=Actor.of_request(request)
        ).value
        return self.created(MandateOut(mandate).data)
