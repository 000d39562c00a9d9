"""`/external-accounts` (v2 only; docs/payments.md): accounts at other banks, in the US (ACH) or
in a SEPA country, and the prenote that verifies an ACH one.

Scopes (docs/tenancy-and-keys.md): reading is `read`; external accounts are made and changed
with `external_accounts:write`; a prenote, a payment order, needs `payments:write`.

An external account's number or IBAN travels only in the body that creates it: the API shows
its last four (`accountNumberLast4`, `ibanLast4`), never the number.
"""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.schema import document
from api.serializers import (
    CountryNumericField,
    CurrencyField,
    MetadataField,
    MetadataPatchField,
    Serializer,
    StrictCharField,
    StrictSerializer,
    TimestampField,
)
from api.versions import V2
from api.views import TXView
from core.actors import Actor
from institutions import scopes

from ..models import ExternalAccount
from ..selectors import external_account_get, external_account_list
from ..services.external_accounts import (
    external_account_create,
    external_account_update,
    sepa_external_account_create,
)
from ..services.orders import external_account_prenote
from .orders import PaymentOrderOut

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


class PrenoteCreate(StrictSerializer):
    """Nothing to send: the prenote goes to the external account's details."""


class ExternalAccountQuery(Serializer):
    customerId = StrictCharField(required=False, max_length=40)  # noqa: N815


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
