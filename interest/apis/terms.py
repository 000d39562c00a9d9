"""`/products/accounts/{rid}/interest-rates`: a product's effective-dated interest terms, v2
only (docs/interest.md, "Terms")."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from accounts.selectors import account_product_get
from api.schema import document
from api.serializers import (
    AmountField,
    Serializer,
    StrictBooleanField,
    StrictDateField,
    StrictSerializer,
    TimestampField,
)
from api.versions import V2
from api.views import TXView
from institutions import scopes

from ..models import InterestTerms
from ..rates import RATE, RATE_FORMAT
from ..selectors import interest_terms_list
from ..services import MAX_TIERS, interest_terms_create, interest_terms_data

RATE_SCHEMA = {
    "type": "string",
    "pattern": f"^{RATE.pattern}$",
    "example": "2.5",
    "description": "Percent per year as a decimal string (never a number): "
    + RATE_FORMAT.removeprefix("Must be a decimal string of percent per year, "),
}


@extend_schema_field(RATE_SCHEMA)
class RateField(serializers.Field):
    """A rate as a decimal string; a JSON number is refused (a float is never a rate). The
    service checks its value (`interest.rates.parse_rate`)."""

    default_error_messages = {"invalid": RATE_FORMAT}

    def to_internal_value(self, data):
        if not isinstance(data, str) or not RATE.fullmatch(data):
            self.fail("invalid")
        return data

    def to_representation(self, value):
        return value


# --- input
class TierIn(StrictSerializer):
    fromBalance = AmountField(  # noqa: N815
        source="from_balance",
        min_value=0,
        help_text="Minor units of the product's currency where the tier starts; the first 0.",
    )
    rate = RateField()


class InterestTermsCreate(StrictSerializer):
    effectiveDate = StrictDateField(  # noqa: N815
        source="effective_date",
        help_text="The first day the terms apply (the institution's date): today or later.",
    )
    depositTiers = serializers.ListField(  # noqa: N815
        source="deposit_tiers",
        child=TierIn(),
        min_length=1,
        max_length=MAX_TIERS,
        help_text="Deposit rates by balance, from 0 up, increasing `fromBalance`.",
    )
    tiering = serializers.ChoiceField(
        choices=InterestTerms.Tiering.choices,
        required=False,
        help_text="`whole` (default): the whole balance at the rate of the tier it reaches; "
        "`banded`: each band at its tier's rate.",
    )
    minimumBalance = AmountField(  # noqa: N815
        source="minimum_balance",
        min_value=0,
        required=False,
        help_text="Below it (minor units) no deposit interest; 0 by default.",
    )
    overdraftRate = RateField(  # noqa: N815
        source="overdraft_rate", required=False, help_text="On negative balances; 0 by default."
    )
    dayCount = serializers.ChoiceField(  # noqa: N815
        source="day_count", choices=InterestTerms.DayCount.choices
    )
    balanceMethod = serializers.ChoiceField(  # noqa: N815
        source="balance_method",
        choices=InterestTerms.BalanceMethod.choices,
        required=False,
        help_text="`daily` (default): each day's end-of-day balance; `average_daily`: the "
        "posting period's average daily balance (not with `postingFrequency` `at_close`).",
    )
    postingFrequency = serializers.ChoiceField(  # noqa: N815
        source="posting_frequency",
        choices=InterestTerms.PostingFrequency.choices,
        required=False,
        help_text="`monthly` by default; `quarterly`, `yearly` (calendar periods), `at_close`.",
    )
    rounding = serializers.ChoiceField(
        choices=InterestTerms.Rounding.choices,
        required=False,
        help_text="Of a posting to minor units, once a period; `half_even` by default.",
    )
    negativeRatesAllowed = StrictBooleanField(  # noqa: N815
        source="negative_rates_allowed",
        required=False,
        help_text="Whether a deposit tier's rate may be below 0; false by default.",
    )
    withholdingTaxRate = RateField(  # noqa: N815
        source="withholding_tax_rate",
        required=False,
        help_text="Percent of deposit interest withheld at posting; 0 by default.",
    )


# --- output
class TierOut(Serializer):
    fromBalance = serializers.IntegerField(source="from_balance")  # noqa: N815
    rate = RateField()


class TermsSerializer(Serializer):
    """The fields a product's terms and an account's override share."""

    termsId = serializers.CharField(source="id")  # noqa: N815
    effectiveDate = serializers.DateField(source="effective_date")  # noqa: N815
    depositTiers = TierOut(source="deposit_tiers", many=True)  # noqa: N815
    tiering = serializers.ChoiceField(choices=InterestTerms.Tiering.choices)
    minimumBalance = serializers.IntegerField(source="minimum_balance")  # noqa: N815
    overdraftRate = RateField(source="overdraft_rate")  # noqa: N815
    dayCount = serializers.ChoiceField(  # noqa: N815
        source="day_count", choices=InterestTerms.DayCount.choices
    )
    balanceMethod = serializers.ChoiceField(  # noqa: N815
        source="balance_method", choices=InterestTerms.BalanceMethod.choices
    )
    postingFrequency = serializers.ChoiceField(  # noqa: N815
        source="posting_frequency", choices=InterestTerms.PostingFrequency.choices
    )
    rounding = serializers.ChoiceField(choices=InterestTerms.Rounding.choices)
    negativeRatesAllowed = serializers.BooleanField(source="negative_rates_allowed")  # noqa: N815
    withholdingTaxRate = RateField(source="withholding_tax_rate")  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815

    def to_representation(self, instance):
        if isinstance(instance, InterestTerms):
            instance = {**interest_terms_data(instance), "created_at": instance.created_at}
        return super().to_representation(instance)


class InterestTermsSerializer(TermsSerializer):
    productRid = serializers.CharField(source="product_id")  # noqa: N815


class InterestTermsListSerializer(Serializer):
    productRid = serializers.CharField()  # noqa: N815
    terms = InterestTermsSerializer(many=True)


class InterestTermsView(TXView):
    """v2: a product's terms, and `POST` to add terms from a date."""

    write_scope = scopes.PRODUCTS_WRITE

    @document(
        name="InterestTermsList",
        resources={V2: InterestTermsListSerializer},
        summary="List an account product's interest terms",
        description="Every terms of the product, in effective date order (not paged: a "
        "product has a few; docs/interest.md).",
        operation_id="account_products_interest_rates_list",
        tags=["Products"],
    )
    def get(self, request, productRid):  # noqa: N803
        product = account_product_get(institution=self.institution, product_id=productRid)
        terms = list(interest_terms_list(product=product))
        return self.respond(
            InterestTermsListSerializer({"productRid": product.pk, "terms": terms}).data
        )

    @document(
        name="InterestTerms",
        resources={V2: InterestTermsSerializer},
        request={V2: InterestTermsCreate},
        created=True,
        summary="Add an account product's interest terms from a date",
        description="The terms of every day from `effectiveDate` (today or later at the "
        "institution) until the next terms. Terms never change: another date is another row; "
        "terms of the product from that date already: 409 `already_exists`. Rates are decimal "
        "strings of percent per year. Emits `interest_terms.created`.",
        operation_id="account_products_interest_rates_create",
        tags=["Products"],
    )
    def post(self, request, productRid):  # noqa: N803
        product = account_product_get(institution=self.institution, product_id=productRid)
        data = self.parse(InterestTermsCreate)
        terms = interest_terms_create(product=product, **data)
        return self.created(InterestTermsSerializer(terms).data)
