"""Request and response bodies of the card endpoints. The two versions differ only in the
address's country field (`api.addresses`): every serializer with an address has a V1 twin."""

import re

from django.core.validators import RegexValidator
from rest_framework import serializers

from api.addresses import Address, AddressInput, V1Address, V1AddressInput
from api.serializers import (
    AmountField,
    CountryNumericField,
    MetadataField,
    MetadataPatchField,
    Serializer,
    StrictBooleanField,
    StrictCharField,
    StrictSerializer,
    TimestampField,
    WholeNumberField,
)

from ..models import Card, CardProduct
from ..services.issuance import INITIAL_STATUSES, embossed_name_clean
from ..services.lifecycle import REPLACEMENT_REASON_CHOICES
from ..services.products import BIN_RE

# \A...\Z, never ^...$: "$" also matches before a trailing newline ("4821\n").
PIN_RE = re.compile(r"\A[0-9]{4,12}\Z")
PAN_RE = re.compile(r"\A[0-9]{12,19}\Z")
MCC_RE = re.compile(r"\A[0-9]{4}\Z")


# --- input fields
class EmbossedNameField(StrictCharField):
    """What a card can carry (ISO/IEC 7813 track 1): A-Z, 0-9, space and . ' - /, 2 to 26
    characters. Accented and other Latin letters are transliterated ("Zoë Strauß" -> "ZOE
    STRAUSS"); anything else is refused (`cards.services.issuance.embossed_name_clean`)."""

    default_error_messages = {
        "invalid": "2 to 26 letters A-Z, digits, spaces and . ' - / (accented Latin letters are "
        "transliterated; other characters are refused)."
    }

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 26)
        kwargs.setdefault(
            "help_text",
            "As printed on the card: 2 to 26 of A-Z, 0-9, space and . ' - /; stored in capitals, "
            "accented Latin letters transliterated (Zoë -> ZOE, ß -> SS).",
        )
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        value = embossed_name_clean(super().to_internal_value(data))
        if value is None:
            self.fail("invalid")
        return value


class PinField(StrictCharField):
    """A PIN: 4 to 12 digits. Never echoed back, in a body or an error message."""

    def __init__(self, **kwargs):
        kwargs.setdefault("write_only", True)
        kwargs.setdefault("trim_whitespace", False)  # " 1234" is not a PIN
        kwargs.setdefault("validators", [RegexValidator(PIN_RE, "Must be 4 to 12 digits.")])
        super().__init__(**kwargs)


class NewPinField(PinField):
    """A PIN being set: not one digit repeated, not a run up or down (1234, 9876)."""

    default_error_messages = {"weak": "Too easy to guess: repeated or consecutive digits."}

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if PIN_RE.match(value):
            steps = {(int(b) - int(a)) % 10 for a, b in zip(value, value[1:], strict=False)}
            if steps in ({0}, {1}, {9}):
                self.fail("weak")
        return value


class PanField(StrictCharField):
    """A full card number: 12 to 19 digits with a valid Luhn check digit. Body only."""

    default_error_messages = {"invalid": "Must be 12 to 19 digits with a valid check digit."}

    def __init__(self, **kwargs):
        kwargs.setdefault("trim_whitespace", False)  # " 4000..." is not a card number
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        from stdnum import luhn

        value = super().to_internal_value(data)
        if not PAN_RE.match(value) or not luhn.is_valid(value):
            self.fail("invalid")
        return value


# --- input
class CardCreate(StrictSerializer):
    accountId = StrictCharField(  # noqa: N815
        required=False,
        max_length=40,
        help_text="Required unless `primaryCardId` is given (the primary card's account).",
    )
    customerId = StrictCharField(max_length=40, help_text="The cardholder.")  # noqa: N815
    cardProductRid = StrictCharField(max_length=40)  # noqa: N815
    form = serializers.ChoiceField(choices=CardProduct.Form.choices)
    embossedName = EmbossedNameField(required=False)  # noqa: N815
    deliveryAddress = AddressInput(  # noqa: N815
        required=False, help_text="Physical cards only, and required for them."
    )
    primaryCardId = StrictCharField(  # noqa: N815
        required=False,
        max_length=40,
        help_text="Makes the card supplementary: on the primary card's account, for another "
        "customer.",
    )
    status = serializers.ChoiceField(
        choices=INITIAL_STATUSES,
        required=False,
        help_text="`inactive` (default: activate later with PATCH) or `active`.",
    )
    metadata = MetadataField(required=False)

    def validate(self, attrs):
        if "accountId" not in attrs and "primaryCardId" not in attrs:
            raise serializers.ValidationError({"accountId": "This field is required."})
        return attrs


class V1CardCreate(CardCreate):
    deliveryAddress = V1AddressInput(  # noqa: N815
        required=False, help_text="Physical cards only, and required for them."
    )
    metadata = None  # v2 only (docs/metadata.md)


class CardUpdate(StrictSerializer):
    status = serializers.ChoiceField(choices=Card.Status.choices, required=False)
    reason = StrictCharField(max_length=500, required=False, allow_blank=True)
    riskLevel = serializers.ChoiceField(  # noqa: N815
        choices=Card.RiskLevel.choices, required=False
    )

    def validate(self, attrs):
        if "status" not in attrs and "riskLevel" not in attrs:
            raise serializers.ValidationError(
                "Give `status` (with an optional `reason`) or `riskLevel`."
            )
        if "reason" in attrs and "status" not in attrs:
            raise serializers.ValidationError({"reason": "Only with `status`."})
        return attrs


class CardUpdateV2(CardUpdate):
    """v2: also the client's `metadata`, merged (a key set to null is removed)."""

    metadata = MetadataPatchField(required=False)

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError(
                "Give `status` (with an optional `reason`), `riskLevel` or `metadata`."
            )
        if set(attrs) == {"metadata"}:
            return attrs
        return super().validate(attrs)


UPDATE_INPUT = {"v1": CardUpdate, "v2": CardUpdateV2}


class CardLookup(StrictSerializer):
    pan = PanField()


class RenewalCreate(StrictSerializer):
    deliveryAddress = AddressInput(  # noqa: N815
        required=False, help_text="Where to send the new card (default: the old card's address)."
    )


class V1RenewalCreate(RenewalCreate):
    deliveryAddress = V1AddressInput(  # noqa: N815
        required=False, help_text="Where to send the new card (default: the old card's address)."
    )


class ReissueCreate(RenewalCreate):
    embossedName = EmbossedNameField(required=False)  # noqa: N815
    reason = StrictCharField(max_length=200, required=False, allow_blank=True)


class V1ReissueCreate(V1RenewalCreate):
    embossedName = EmbossedNameField(required=False)  # noqa: N815
    reason = StrictCharField(max_length=200, required=False, allow_blank=True)


class ReplacementCreate(RenewalCreate):
    reason = serializers.ChoiceField(
        choices=REPLACEMENT_REASON_CHOICES,
        help_text="lost, stolen: the old card becomes lost or stolen; damaged, compromised: "
        "closed.",
    )


class V1ReplacementCreate(V1RenewalCreate):
    reason = serializers.ChoiceField(
        choices=REPLACEMENT_REASON_CHOICES,
        help_text="lost, stolen: the old card becomes lost or stolen; damaged, compromised: "
        "closed.",
    )


class MccField(StrictCharField):
    def __init__(self, **kwargs):
        kwargs.setdefault(
            "validators", [RegexValidator(MCC_RE, "A merchant category code: 4 digits.")]
        )
        super().__init__(**kwargs)


class SecuritySettingsUpdate(StrictSerializer):
    ecommerce = StrictBooleanField(required=False)
    contactless = StrictBooleanField(required=False)
    atm = StrictBooleanField(required=False)
    international = StrictBooleanField(required=False)
    magstripe = StrictBooleanField(required=False)
    blockedMccs = serializers.ListField(  # noqa: N815
        source="blocked_mccs", child=MccField(), required=False, max_length=200
    )
    blockedCountries = serializers.ListField(  # noqa: N815
        source="blocked_countries", child=CountryNumericField(), required=False, max_length=250
    )

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("Give at least one setting.")
        return attrs


class LimitsUpdate(StrictSerializer):
    perTransaction = AmountField(source="limit_per_transaction", required=False, min_value=0)  # noqa: N815
    daily = AmountField(source="limit_daily", required=False, min_value=0)
    monthly = AmountField(source="limit_monthly", required=False, min_value=0)
    dailyCash = AmountField(source="limit_daily_cash", required=False, min_value=0)  # noqa: N815

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("Give at least one limit.")
        return attrs


class PinUpdate(StrictSerializer):
    """Either `{pin, currentPin?}` (set or change) or `{"blocked": false}` (unblock)."""

    pin = NewPinField(required=False)
    currentPin = PinField(required=False, help_text="Required when a PIN is set.")  # noqa: N815
    blocked = StrictBooleanField(
        required=False, help_text="Only `false`: unblock after three wrong tries."
    )

    def validate(self, attrs):
        if "blocked" in attrs:
            if set(attrs) != {"blocked"} or attrs["blocked"] is not False:
                raise serializers.ValidationError('To unblock send exactly {"blocked": false}.')
        elif "pin" not in attrs:
            raise serializers.ValidationError({"pin": "This field is required."})
        return attrs


class PinVerificationCreate(StrictSerializer):
    pin = PinField()


# Card products (v2 only: docs/products.md). Nested objects flatten onto the domain's fields
# (`source="*"`); on PATCH (partial) every field, nested ones too, is optional.
class DefaultLimitsInput(StrictSerializer):
    perTransaction = AmountField(source="default_per_transaction", min_value=0)  # noqa: N815
    daily = AmountField(source="default_daily", min_value=0)
    monthly = AmountField(source="default_monthly", min_value=0)
    dailyCash = AmountField(source="default_daily_cash", min_value=0)  # noqa: N815


class DefaultSecuritySettingsInput(StrictSerializer):
    ecommerce = StrictBooleanField(source="default_ecommerce", required=False)
    contactless = StrictBooleanField(source="default_contactless", required=False)
    atm = StrictBooleanField(source="default_atm", required=False)
    international = StrictBooleanField(source="default_international", required=False)
    magstripe = StrictBooleanField(source="default_magstripe", required=False)
    blockedMccs = serializers.ListField(  # noqa: N815
        source="default_blocked_mccs", child=MccField(), required=False, max_length=200
    )
    blockedCountries = serializers.ListField(  # noqa: N815
        source="default_blocked_countries",
        child=CountryNumericField(),
        required=False,
        max_length=250,
    )


class BinField(StrictCharField):
    default_error_messages = {"invalid": "Must be 6 or 8 digits."}

    def __init__(self, **kwargs):
        kwargs.setdefault("trim_whitespace", False)
        kwargs.setdefault(
            "help_text",
            "Bank identification number: the first 6 or 8 digits of every PAN of the product; "
            "unique among the institution's card products. Fixed once made.",
        )
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not BIN_RE.match(value):
            self.fail("invalid")
        return value


class CardProductCreate(StrictSerializer):
    code = StrictCharField(
        max_length=64,
        required=False,
        help_text="Your reference for the product, unique among your card products (default: "
        "its rid). Fixed once made.",
    )
    name = StrictCharField(max_length=200)
    kind = serializers.ChoiceField(
        choices=CardProduct.Kind.choices,
        help_text="debit cards sit on current accounts, prepaid on prepaid. Fixed once made.",
    )
    forms = serializers.ListField(
        child=serializers.ChoiceField(choices=CardProduct.Form.choices),
        min_length=1,
        max_length=2,
        help_text="physical, virtual or both.",
    )
    bin = BinField()
    panLength = WholeNumberField(  # noqa: N815
        source="pan_length", min_value=13, max_value=19, required=False, help_text="Default 16."
    )
    validityMonths = WholeNumberField(  # noqa: N815
        source="validity_months",
        min_value=1,
        max_value=120,
        help_text="A new card expires at the end of the month this many months after its issue.",
    )
    defaultLimits = DefaultLimitsInput(  # noqa: N815
        source="*", help_text="New cards' limits, minor units of each card's account currency."
    )
    defaultSecuritySettings = DefaultSecuritySettingsInput(  # noqa: N815
        source="*",
        required=False,
        help_text="New cards' security settings; what is left out is the cards' own default "
        "(every channel on but magstripe, nothing blocked).",
    )
    atmFee = AmountField(  # noqa: N815
        source="atm_fee",
        min_value=0,
        required=False,
        help_text="Fee per ATM (Cash) withdrawal presented, minor units of the card's account "
        "currency; default 0, none (docs/fees.md).",
    )
    replacementFee = AmountField(  # noqa: N815
        source="replacement_fee",
        min_value=0,
        required=False,
        help_text="Fee per card replaced, minor units; default 0, none.",
    )
    foreignTransactionFeeBps = WholeNumberField(  # noqa: N815
        source="foreign_transaction_fee_bps",
        min_value=0,
        max_value=10000,
        required=False,
        help_text="Basis points of a presented payment whose merchant country is not the "
        "cardholder's, rounded half up to the minor unit; default 0, none.",
    )
    disputePolicy = serializers.ChoiceField(  # noqa: N815
        source="dispute_policy",
        choices=CardProduct.DisputePolicy.choices,
        required=False,
        help_text="Whose clocks its cards' disputes run on: `regE`, `psd2` or `none` (the "
        'network\'s filing limit only); default `none` (docs/disputes.md, "Deadlines").',
    )
    disputeProvisionalCredit = serializers.ChoiceField(  # noqa: N815
        source="dispute_provisional_credit",
        choices=CardProduct.ProvisionalCredit.choices,
        required=False,
        help_text="When its cards' disputes credit the cardholder: `at_submission` (default) "
        "or `by_deadline` (on the policy's provisional-credit deadline if the dispute is still "
        'open; what is owed at its close otherwise: docs/disputes.md, "Money").',
    )


class CardProductUpdate(CardProductCreate):
    """Everything optional (parsed as partial); `code`, `kind`, `bin` and `panLength` only with
    the product's own value."""

    status = serializers.ChoiceField(
        choices=CardProduct.Status.choices,
        help_text="`retired`: no new card is issued on it (422 `product_retired`); its cards "
        "go on. `active` again reopens it.",
    )

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("Give at least one field to change.")
        return attrs


# --- output
class SecuritySettings(Serializer):
    ecommerce = serializers.BooleanField()
    contactless = serializers.BooleanField()
    atm = serializers.BooleanField()
    international = serializers.BooleanField()
    magstripe = serializers.BooleanField()
    blockedMccs = serializers.ListField(source="blocked_mccs", child=serializers.CharField())  # noqa: N815
    blockedCountries = serializers.ListField(  # noqa: N815
        source="blocked_countries", child=serializers.CharField()
    )


class Limits(Serializer):
    perTransaction = serializers.IntegerField(source="limit_per_transaction")  # noqa: N815
    daily = serializers.IntegerField(source="limit_daily")
    monthly = serializers.IntegerField(source="limit_monthly")
    dailyCash = serializers.IntegerField(source="limit_daily_cash")  # noqa: N815


class PinState(Serializer):
    set = serializers.BooleanField(source="pin_is_set")
    blocked = serializers.BooleanField(source="pin_blocked")
    remainingTries = serializers.IntegerField(source="pin_remaining_tries")  # noqa: N815


class CardOut(Serializer):
    cardId = serializers.CharField(source="id")  # noqa: N815
    accountId = serializers.CharField(source="account_id")  # noqa: N815
    customerId = serializers.CharField(source="customer_id")  # noqa: N815
    cardProductRid = serializers.CharField(source="product_id")  # noqa: N815
    kind = serializers.ChoiceField(source="product.kind", choices=CardProduct.Kind.choices)
    form = serializers.ChoiceField(choices=CardProduct.Form.choices)
    status = serializers.ChoiceField(choices=Card.Status.choices)
    statusReason = serializers.CharField(source="status_reason")  # noqa: N815
    riskLevel = serializers.ChoiceField(source="risk_level", choices=Card.RiskLevel.choices)  # noqa: N815
    maskedPan = serializers.CharField(  # noqa: N815
        source="masked_pan", help_text="First six and last four digits, e.g. 400001******1234."
    )
    last4 = serializers.CharField(source="pan_last4")
    expiryMonth = serializers.IntegerField(source="expiry_month")  # noqa: N815
    expiryYear = serializers.IntegerField(source="expiry_year")  # noqa: N815
    embossedName = serializers.CharField(source="embossed_name")  # noqa: N815
    deliveryAddress = Address(source="delivery_address", allow_null=True)  # noqa: N815
    primaryCardId = serializers.CharField(source="primary_card_id", allow_null=True)  # noqa: N815
    predecessorCardId = serializers.CharField(source="predecessor_id", allow_null=True)  # noqa: N815
    successorCardId = serializers.CharField(source="successor_id", allow_null=True)  # noqa: N815
    succession = serializers.ChoiceField(
        choices=Card.Succession.choices,
        allow_null=True,
        help_text="How this card came from `predecessorCardId`.",
    )
    securitySettings = SecuritySettings(source="*")  # noqa: N815
    limits = Limits(source="*")
    pin = PinState(source="*")
    metadata = MetadataField()
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815


class V1CardOut(CardOut):
    deliveryAddress = V1Address(source="delivery_address", allow_null=True)  # noqa: N815
    metadata = None  # v2 only (docs/metadata.md)


class SensitiveDetailsOut(Serializer):
    cardId = serializers.CharField()  # noqa: N815
    pan = serializers.CharField()
    cvv = serializers.CharField()
    expiryMonth = serializers.IntegerField()  # noqa: N815
    expiryYear = serializers.IntegerField()  # noqa: N815


class Usage(Serializer):
    day = serializers.DateField(help_text="Today in the institution's time zone.")
    month = serializers.CharField(help_text="YYYY-MM")
    daily = serializers.IntegerField()
    dailyCash = serializers.IntegerField(source="daily_cash")  # noqa: N815
    monthly = serializers.IntegerField()


class LimitsOut(Limits):
    cardId = serializers.CharField(source="id")  # noqa: N815
    currency = serializers.CharField(source="account.currency")
    usage = Usage(
        help_text="Spent in the current day and month (approved payments and card transfers)."
    )


class SecuritySettingsOut(SecuritySettings):
    cardId = serializers.CharField(source="id")  # noqa: N815


class PinOut(PinState):
    cardId = serializers.CharField(source="id")  # noqa: N815


class PinVerificationOut(Serializer):
    cardId = serializers.CharField()  # noqa: N815
    verified = serializers.BooleanField()
    pinBlocked = serializers.BooleanField()  # noqa: N815
    remainingTries = serializers.IntegerField()  # noqa: N815


class DefaultLimits(Serializer):
    perTransaction = serializers.IntegerField(source="default_per_transaction")  # noqa: N815
    daily = serializers.IntegerField(source="default_daily")
    monthly = serializers.IntegerField(source="default_monthly")
    dailyCash = serializers.IntegerField(source="default_daily_cash")  # noqa: N815


class DefaultSecuritySettings(Serializer):
    ecommerce = serializers.BooleanField(source="default_ecommerce")
    contactless = serializers.BooleanField(source="default_contactless")
    atm = serializers.BooleanField(source="default_atm")
    international = serializers.BooleanField(source="default_international")
    magstripe = serializers.BooleanField(source="default_magstripe")
    blockedMccs = serializers.ListField(  # noqa: N815
        source="default_blocked_mccs", child=serializers.CharField()
    )
    blockedCountries = serializers.ListField(  # noqa: N815
        source="default_blocked_countries", child=serializers.CharField()
    )


class CardProductOut(Serializer):
    rid = serializers.CharField(source="id")
    code = serializers.CharField()
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=CardProduct.Kind.choices)
    accountKind = serializers.CharField(  # noqa: N815
        source="account_kind", help_text="The account type its cards sit on: current or prepaid."
    )
    forms = serializers.ListField(child=serializers.ChoiceField(choices=CardProduct.Form.choices))
    bin = serializers.CharField()
    panLength = serializers.IntegerField(source="pan_length")  # noqa: N815
    validityMonths = serializers.IntegerField(  # noqa: N815
        source="validity_months", help_text="How long a new card is valid, in months."
    )
    validityYears = serializers.IntegerField(  # noqa: N815
        source="validity_years",
        help_text="Whole years of `validityMonths` (rounded down); read `validityMonths`.",
    )
    status = serializers.ChoiceField(
        choices=CardProduct.Status.choices,
        help_text="`retired`: issues no new card; its cards go on.",
    )
    defaultLimits = DefaultLimits(  # noqa: N815
        source="*", help_text="In minor units of the card's account currency."
    )
    defaultSecuritySettings = DefaultSecuritySettings(  # noqa: N815
        source="*", help_text="What a new card's security settings start as."
    )
    atmFee = serializers.IntegerField(  # noqa: N815
        source="atm_fee", help_text="Fee per ATM withdrawal, minor units (docs/fees.md)."
    )
    replacementFee = serializers.IntegerField(  # noqa: N815
        source="replacement_fee", help_text="Fee per card replaced, minor units."
    )
    foreignTransactionFeeBps = serializers.IntegerField(  # noqa: N815
        source="foreign_transaction_fee_bps",
        help_text="Basis points of a payment abroad (merchant country not the cardholder's).",
    )
    disputePolicy = serializers.ChoiceField(  # noqa: N815
        source="dispute_policy",
        choices=CardProduct.DisputePolicy.choices,
        help_text="Whose clocks its cards' disputes run on (docs/disputes.md).",
    )
    disputeProvisionalCredit = serializers.ChoiceField(  # noqa: N815
        source="dispute_provisional_credit",
        choices=CardProduct.ProvisionalCredit.choices,
        help_text="When its cards' disputes credit the cardholder (docs/disputes.md).",
    )
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815


OUTPUT = {"v1": V1CardOut, "v2": CardOut}
