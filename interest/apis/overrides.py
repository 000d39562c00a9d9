"""`/accounts/{accountId}/interest-rates`: an account's own interest terms from a date to an
optional end, replacing its product's on those days; v2 only (docs/interest.md, "Overrides")."""

from rest_framework import serializers

from accounts.selectors import account_get
from api.schema import document
from api.serializers import Serializer, StrictDateField
from api.versions import V2
from api.views import TXView
from institutions import scopes

from ..selectors import interest_overrides_list
from ..services import interest_override_create
from .terms import InterestTermsCreate, TermsSerializer


class InterestOverrideCreate(InterestTermsCreate):
    endDate = StrictDateField(  # noqa: N815
        source="end_date",
        required=False,
        help_text="The last day the override applies (inclusive), after `effectiveDate`; "
        "absent: until the account's next override. The product's terms apply after it.",
    )


class InterestOverrideSerializer(TermsSerializer):
    accountId = serializers.CharField(source="account_id")  # noqa: N815
    endDate = serializers.DateField(source="end_date", allow_null=True)  # noqa: N815


class InterestOverrideListSerializer(Serializer):
    accountId = serializers.CharField()  # noqa: N815
    terms = InterestOverrideSerializer(many=True)


class InterestOverridesView(TXView):
    """v2: an account's overrides, and `POST` to add one."""

    # The scope of the terms it replaces: who sets what a product pays sets what one account
    # pays (docs/interest.md, "Overrides").
    write_scope = scopes.PRODUCTS_WRITE

    @document(
        name="InterestOverrideList",
        resources={V2: InterestOverrideListSerializer},
        summary="List an account's interest overrides",
        description="Every override of the account's product's interest terms, in effective "
        "date order (not paged: an account has a few; docs/interest.md).",
        operation_id="accounts_interest_rates_list",
        tags=["Accounts"],
    )
    def get(self, request, accountId):  # noqa: N803
        account = account_get(institution=self.institution, account_id=accountId)
        terms = list(interest_overrides_list(account=account))
        return self.respond(
            InterestOverrideListSerializer({"accountId": account.pk, "terms": terms}).data
        )

    @document(
        name="InterestOverride",
        resources={V2: InterestOverrideSerializer},
        request={V2: InterestOverrideCreate},
        created=True,
        summary="Add an account's own interest terms from a date",
        description="The account's terms from `effectiveDate` (today or later at the "
        "institution) to `endDate` (inclusive; absent: until its next override), replacing "
        "its product's terms on those days; the product's apply again after `endDate`. The "
        "same fields and rules as a product's terms. A later override replaces an earlier one "
        "from its date. An override of the account from that date already: 409 "
        "`already_exists`. Emits `interest_terms.created`.",
        operation_id="accounts_interest_rates_create",
        tags=["Accounts"],
    )
    def post(self, request, accountId):  # noqa: N803
        account = account_get(institution=self.institution, account_id=accountId)
        data = self.parse(InterestOverrideCreate)
        terms = interest_override_create(account=account, **data)
        return self.created(InterestOverrideSerializer(terms).data)
