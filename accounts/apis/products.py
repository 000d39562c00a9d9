"""`/products/accounts`: the institution's account types. Listed the same in both versions;
made (`POST`), read one by one and changed (`PATCH`, also to retire) in v2 only: v1, the legacy
line, lists (docs/products.md)."""

from rest_framework import serializers

from api.schema import document
from api.serializers import (
    AmountField,
    CurrencyField,
    Serializer,
    StrictBooleanField,
    StrictCharField,
    StrictSerializer,
    TimestampField,
    WholeNumberField,
)
from api.versions import V2
from api.views import TXView
from institutions import scopes

from ..models import AccountProduct
from ..selectors import account_product_get, account_product_list
from ..services import account_product_create, account_product_update

# A product's overdraft cap is credit its accounts may be given, and its fee is money taken
# from them: like loads and unloads, they need `money:adjust` (docs/products.md). Zero lends
# and takes nothing; `allowsOverdraft` alone gives no credit (the cap stays 0 until set).
CREDIT_FIELDS = scopes.BodyScope(
    scopes.MONEY_ADJUST,
    "a `maxOverdraftLimit` or `monthlyFee` above 0",
    scopes.above_zero("max_overdraft_limit", "monthly_fee"),
)


DEBIT_HOLD_DAYS_HELP = (
    "Banking days the money of an ACH debit collected into an account of the product stays "
    "held for its returns (R01, R09), 0 to 60; null (the default): the institution's ACH "
    "profile's (docs/payments.md)."
)


# --- input
class AccountProductCreate(StrictSerializer):
    code = serializers.ChoiceField(
        choices=AccountProduct.Code.choices,
        help_text="Financial contract type (spec 2.4); its accounts are prepaid or current by "
        "it. Several products may share a code (a EUR and a USD current account): a product "
        "is its `rid`. Fixed once made.",
    )
    name = StrictCharField(max_length=200)
    currency = CurrencyField(help_text="ISO 4217 alpha-3, any currency. Fixed once made.")
    allowsOverdraft = StrictBooleanField(source="allows_overdraft", required=False)  # noqa: N815
    maxOverdraftLimit = AmountField(  # noqa: N815
        source="max_overdraft_limit",
        min_value=0,
        required=False,
        help_text="The most an account of the product may be given as its overdraft limit, "
        "minor units of `currency`; 0 (the default) unless `allowsOverdraft`.",
    )
    monthlyFee = AmountField(  # noqa: N815
        source="monthly_fee",
        min_value=0,
        required=False,
        help_text="Charged to each active account of the product every month, minor units of "
        "`currency`; 0 (the default) charges nothing (docs/fees.md).",
    )
    debitHoldDays = WholeNumberField(  # noqa: N815
        source="debit_hold_days",
        min_value=0,
        max_value=60,
        required=False,
        allow_null=True,
        help_text=DEBIT_HOLD_DAYS_HELP,
    )


class AccountProductUpdate(StrictSerializer):
    code = serializers.ChoiceField(
        choices=AccountProduct.Code.choices,
        required=False,
        help_text="Only the product's own code: it never changes (400 otherwise).",
    )
    name = StrictCharField(max_length=200, required=False)
    currency = CurrencyField(
        required=False, help_text="Only the product's own currency: it never changes."
    )
    allowsOverdraft = StrictBooleanField(source="allows_overdraft", required=False)  # noqa: N815
    maxOverdraftLimit = AmountField(  # noqa: N815
        source="max_overdraft_limit", min_value=0, required=False
    )
    monthlyFee = AmountField(  # noqa: N815
        source="monthly_fee", min_value=0, required=False
    )
    debitHoldDays = WholeNumberField(  # noqa: N815
        source="debit_hold_days",
        min_value=0,
        max_value=60,
        required=False,
        allow_null=True,
        help_text="Debits settled from now on; null: the ACH profile's.",
    )
    status = serializers.ChoiceField(
        choices=AccountProduct.Status.choices,
        required=False,
        help_text="`retired`: no new account opens on it (422 `product_retired`); the "
        "accounts on it go on. `active` again reopens it.",
    )

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("Give at least one field to change.")
        return attrs


# --- output
class AccountProductSerializer(Serializer):
    rid = serializers.CharField(source="id", help_text="Identifier of the product (productRid).")
    code = serializers.ChoiceField(
        choices=AccountProduct.Code.choices, help_text="Financial contract type."
    )
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=AccountProduct.Kind.choices)
    currency = serializers.CharField(help_text="ISO 4217 alpha-3.")
    allowsOverdraft = serializers.BooleanField(source="allows_overdraft")  # noqa: N815
    maxOverdraftLimit = serializers.IntegerField(  # noqa: N815
        source="max_overdraft_limit",
        help_text="The most an account's overdraft limit may be, minor units of `currency`.",
    )
    monthlyFee = serializers.IntegerField(  # noqa: N815
        source="monthly_fee",
        help_text="Charged to each active account every month, minor units of `currency`; 0: "
        "none (docs/fees.md).",
    )
    debitHoldDays = serializers.IntegerField(  # noqa: N815
        source="debit_hold_days", allow_null=True, help_text=DEBIT_HOLD_DAYS_HELP
    )
    status = serializers.ChoiceField(
        choices=AccountProduct.Status.choices,
        help_text="`retired`: opens no new account; its accounts go on.",
    )
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815


class AccountProductListView(TXView):
    @document(
        name="AccountProduct",
        resources={"v1": AccountProductSerializer, "v2": AccountProductSerializer},
        many=True,
        summary="List the account types (financial contract types) of the institution",
        operation_id="account_products_list",
        tags=["Products"],
    )
    def get(self, request):
        return self.respond_list(
            account_product_list(institution=self.institution),
            AccountProductSerializer,
        )


class AccountProductListCreateView(AccountProductListView):
    """v2: the list, and `POST` to make a product."""

    write_scope = scopes.PRODUCTS_WRITE
    body_scopes = (CREDIT_FIELDS,)

    @document(
        name="AccountProduct",
        resources={V2: AccountProductSerializer},
        request={V2: AccountProductCreate},
        created=True,
        summary="Create an account product",
        description="Emits `product.created`. Every field but `allowsOverdraft`, "
        "`maxOverdraftLimit` and `monthlyFee` is required.",
        operation_id="account_products_create",
        tags=["Products"],
    )
    def post(self, request):
        data = self.parse(AccountProductCreate)
        scopes.require_body_scopes(request, self.body_scopes, data)
        product = account_product_create(institution=self.institution, **data)
        return self.created(AccountProductSerializer(product).data)


class AccountProductDetailView(TXView):
    """v2: one product, and `PATCH` to change or retire it."""

    write_scope = scopes.PRODUCTS_WRITE
    body_scopes = (CREDIT_FIELDS,)

    @document(
        name="AccountProduct",
        resources={V2: AccountProductSerializer},
        summary="Retrieve an account product",
        operation_id="account_products_retrieve",
        tags=["Products"],
    )
    def get(self, request, productRid):  # noqa: N803 (path parameters are camelCase)
        product = account_product_get(institution=self.institution, product_id=productRid)
        return self.respond(AccountProductSerializer(product).data)

    @document(
        name="AccountProduct",
        resources={V2: AccountProductSerializer},
        request={V2: AccountProductUpdate},
        summary="Change or retire an account product",
        description="Send only what changes. `code` and `currency` never change (400). A lower "
        "`maxOverdraftLimit` caps the overdraft limits set from now on; accounts keep theirs. "
        "Emits `product.updated` (nothing when nothing changes).",
        operation_id="account_products_update",
        tags=["Products"],
    )
    def patch(self, request, productRid):  # noqa: N803
        product = account_product_get(institution=self.institution, product_id=productRid)
        changes = self.parse(AccountProductUpdate, partial=True)
        scopes.require_body_scopes(request, self.body_scopes, changes)
        product = account_product_update(product=product, changes=dict(changes)).value
        return self.respond(AccountProductSerializer(product).data)
