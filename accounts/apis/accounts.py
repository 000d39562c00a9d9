"""`/accounts`: open, read, freeze/close, balances, adjustments (loads and unloads), and
`/account-lookups` (find an account by its number, which only ever travels in a body).
Identical in both versions apart from the envelope, except that v2 shows and sets the overdraft
limit (docs/overdraft.md)."""

from datetime import UTC, datetime

from django.utils import timezone
from django.utils.dateparse import parse_datetime
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.fields import empty

from api import replicas
from api.schema import both, document
from api.serializers import (
    AmountField,
    CurrencyField,
    MetadataField,
    MetadataPatchField,
    Serializer,
    StrictCharField,
    StrictDateTimeField,
    StrictSerializer,
    TimestampField,
)
from api.versions import V1, V2
from api.views import TXView
from core.actors import Actor
from customers.selectors import customer_get
from institutions import scopes

from .. import ibans
from ..models import Account, Adjustment
from ..selectors import (
    account_by_number,
    account_get,
    account_list,
    account_product_get,
    balance_at,
)
from ..services import (
    account_create,
    account_set_overdraft_limit,
    account_set_status,
    account_update_metadata,
    adjustment_create,
)


# --- input
class AccountCreate(StrictSerializer):
    customerId = StrictCharField(max_length=40)  # noqa: N815
    productRid = StrictCharField(  # noqa: N815
        max_length=40, help_text="`rid` of an account product (GET /products/accounts)."
    )
    currency = CurrencyField(
        required=False, help_text="The product's currency (the default when omitted)."
    )


class AccountCreateV2(AccountCreate):
    metadata = MetadataField(required=False)


CREATE_INPUT = {V1: AccountCreate, V2: AccountCreateV2}


class AccountUpdate(StrictSerializer):
    status = serializers.ChoiceField(
        choices=Account.Status.choices,
        help_text="active <-> frozen; active | frozen -> closed (needs a zero balance and no "
        "active hold; closed is final).",
    )


class AccountUpdateV2(StrictSerializer):
    """v2: the status, the overdraft limit, or both (one operation: both change or neither)."""

    status = serializers.ChoiceField(
        choices=Account.Status.choices,
        required=False,
        help_text=AccountUpdate().fields["status"].help_text,
    )
    overdraftLimit = AmountField(  # noqa: N815
        required=False,
        min_value=0,
        help_text="How far below zero the account may go, minor units: at most the product's "
        "`maxOverdraftLimit`, on a product that allows overdraft; 422 `overdraft_limit_in_use` "
        "below what the account uses now. Above 0 it is credit: the key also needs "
        "`money:adjust`.",
    )
    metadata = MetadataPatchField(required=False)

    def validate(self, data):
        if not data:
            raise serializers.ValidationError(
                {"status": "Give at least one of status, overdraftLimit, metadata."}
            )
        return data


UPDATE_INPUT = {V1: AccountUpdate, V2: AccountUpdateV2}


class AccountLookup(StrictSerializer):
    accountNumber = StrictCharField(max_length=20)  # noqa: N815


class AdjustmentCreate(StrictSerializer):
    direction = serializers.ChoiceField(
        choices=Adjustment.Direction.choices,
        help_text="credit loads the account, debit unloads it (against the institution's "
        "funding account).",
    )
    amount = AmountField(help_text="Minor units of the currency, e.g. 1050 = 10.50 EUR.")
    currency = CurrencyField()
    description = StrictCharField(max_length=500, required=False, allow_blank=True)


class AccountQuery(Serializer):
    customerId = StrictCharField(required=False, max_length=40)  # noqa: N815


# --- output
class Balances(Serializer):
    accountId = serializers.CharField(source="id")  # noqa: N815
    posted = serializers.IntegerField(help_text="Sum of posted entries, minor units.")
    pending = serializers.IntegerField(help_text="Sum of active holds, minor units.")
    available = serializers.IntegerField(
        required=False,
        help_text="posted - pending (+ overdraft limit). Not shown for a past instant (`at`): "
        "the overdraft limit of that time is not recorded.",
    )
    currency = serializers.CharField()
    at = TimestampField(
        required=False, help_text="The instant asked for (`at`); absent: balances now."
    )


class InstantField(StrictDateTimeField):
    """An ISO 8601 date-time with its offset or `Z`: an instant, never a local time."""

    default_error_messages = {
        "offset": "Must have an offset or Z, e.g. 2026-01-31T23:59:59Z "
        "(in a query string, + is %2B).",
    }

    def get_value(self, dictionary):
        # As given: DRF would take an empty query value (`?at=`) for an absent one.
        return dictionary.get(self.field_name, empty)

    def to_internal_value(self, data):
        if isinstance(data, str) and not data.isascii():  # "２０２６-..." parses too
            self.fail("invalid", format="YYYY-MM-DDThh:mm:ss[.uuu]Z")
        value = super().to_internal_value(data)  # a valid ISO 8601 date-time string
        if parse_datetime(data).tzinfo is None:
            self.fail("offset")
        return value


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class BalancesQuery(Serializer):
    at = InstantField(required=False)

    def validate_at(self, value):
        if value > timezone.now():
            raise serializers.ValidationError("Must not be in the future.")
        if value < EPOCH:  # before any ledger; and years below 1000 print badly
            raise serializers.ValidationError("Must not be before 1970-01-01T00:00:00Z.")
        return value


class BalancesQueryV2(BalancesQuery):
    basis = serializers.ChoiceField(
        choices=["booking", "value"],
        required=False,
        help_text="With `at`: `booking` (default), the entries posted by then; `value`, "
        "by value date: also what was posted later but counts from then or before (a "
        "dispute's provisional credit, value-dated to the payment it disputes).",
    )


class AccountBalances(Serializer):
    posted = serializers.IntegerField()
    pending = serializers.IntegerField()
    available = serializers.IntegerField()
    currency = serializers.CharField()


class AccountOut(Serializer):
    accountId = serializers.CharField(source="id")  # noqa: N815
    customerId = serializers.CharField(source="customer_id")  # noqa: N815
    secondaryCustomerId = serializers.CharField(  # noqa: N815
        source="secondary_customer_id",
        allow_null=True,
        help_text="The second holder of a joint account.",
    )
    productRid = serializers.CharField(source="product_id")  # noqa: N815
    productCode = serializers.CharField(source="product.code")  # noqa: N815
    currency = serializers.CharField()
    status = serializers.ChoiceField(choices=Account.Status.choices)
    accountNumber = serializers.CharField(  # noqa: N815
        source="account_number",
        help_text="Digits with a Luhn check digit. Sensitive: only ever in bodies.",
    )
    balances = AccountBalances(source="*")
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815


class AccountOutV2(AccountOut):
    """v2: with the overdraft limit (included in `available`)."""

    overdraftLimit = serializers.IntegerField(  # noqa: N815
        source="overdraft_limit", help_text="How far below zero the account may go."
    )
    networkOverdraft = serializers.IntegerField(  # noqa: N815
        source="network_overdraft",
        help_text="What the card network's advices and force posts took the account beyond "
        "its available balance, not yet paid back: `available` is that much below zero (or "
        "below the overdraft limit); 0 otherwise. Money coming in pays it back first.",
    )
    iban = serializers.SerializerMethodField(
        help_text="The account's IBAN under the institution's SEPA profile (a customer account "
        "in EUR, when the profile issues IBANs: docs/payments.md, 'Inbound SEPA'); null "
        "otherwise. Sensitive, as the account number: only ever in bodies."
    )
    metadata = MetadataField()

    def get_iban(self, account) -> str | None:
        # One memo for a whole list (the child serializer is shared): a profile read once.
        return ibans.account_iban(account, self.__dict__.setdefault("_iban_memo", {}))


ACCOUNT_OUTPUT = {V1: AccountOut, V2: AccountOutV2}


class AdjustmentOut(Serializer):
    adjustmentId = serializers.CharField(source="id")  # noqa: N815
    accountId = serializers.CharField(source="account_id")  # noqa: N815
    direction = serializers.ChoiceField(choices=Adjustment.Direction.choices)
    amount = serializers.IntegerField()
    currency = serializers.CharField()
    description = serializers.CharField()
    createdAt = TimestampField(source="created_at")  # noqa: N815


class AccountListView(TXView):
    write_scope = scopes.ACCOUNTS_WRITE

    @document(
        name="Account",
        resources=ACCOUNT_OUTPUT,
        request=CREATE_INPUT,
        created=True,
        summary="Open an account for a customer",
        operation_id="accounts_create",
        tags=["Accounts"],
    )
    def post(self, request):
        data = self.parse(self.for_version(CREATE_INPUT))
        customer = customer_get(institution=self.institution, customer_id=data["customerId"])
        product = account_product_get(institution=self.institution, product_id=data["productRid"])
        account = account_create(
            institution=self.institution,
            customer=customer,
            product=product,
            currency=data.get("currency", product.currency),
            metadata=data.get("metadata"),
        )
        return self.created(self._represent(account.pk))

    @document(
        name="Account",
        resources=ACCOUNT_OUTPUT,
        many=True,
        parameters=[OpenApiParameter("customerId", str, description="Only this customer's.")],
        summary="List accounts, newest first",
        operation_id="accounts_list",
        tags=["Accounts"],
    )
    def get(self, request):
        query = self.parse_query(AccountQuery)
        return self.respond_list(
            account_list(institution=self.institution, customer_id=query.get("customerId")),
            self.for_version(ACCOUNT_OUTPUT),
        )

    def _represent(self, account_id):
        return self.for_version(ACCOUNT_OUTPUT)(
            account_get(institution=self.institution, account_id=account_id)
        ).data


class AccountDetailView(TXView):
    write_scope = scopes.ACCOUNTS_WRITE
    # An overdraft is money lent, like a load: `accounts:write` alone may only take it away (0).
    body_scopes = (
        scopes.BodyScope(
            scopes.MONEY_ADJUST,
            "a v2 `overdraftLimit` above 0",
            scopes.above_zero("overdraftLimit"),
        ),
    )

    @document(
        name="Account",
        resources=ACCOUNT_OUTPUT,
        summary="Retrieve an account",
        operation_id="accounts_retrieve",
        tags=["Accounts"],
    )
    def get(self, request, accountId):  # noqa: N803 (path parameters are camelCase)
        return self.respond(self.for_version(ACCOUNT_OUTPUT)(self._account(accountId)).data)

    @document(
        name="Account",
        resources=ACCOUNT_OUTPUT,
        request=UPDATE_INPUT,
        summary="Freeze, unfreeze or close an account; set its overdraft limit (v2)",
        description="A frozen account accepts credits but no debit. Closing needs a zero "
        "balance and no active hold (422 `account_not_empty`); closed is final (409). v2 also "
        "takes `overdraftLimit` (docs/overdraft.md) and `metadata` (merged: a key set to null "
        "is removed; docs/metadata.md); what is given changes together or not at all.",
        operation_id="accounts_update",
        tags=["Accounts"],
    )
    def patch(self, request, accountId):  # noqa: N803
        account = self._account(accountId)
        data = self.parse(self.for_version(UPDATE_INPUT))
        scopes.require_body_scopes(request, self.body_scopes, data)  # before anything changes
        if "status" in data:
            account_set_status(account=account, status=data["status"])
        if "overdraftLimit" in data:
            account_set_overdraft_limit(account=account, limit=data["overdraftLimit"])
        if "metadata" in data:
            account_update_metadata(account=account, metadata=data["metadata"])
        return self.respond(self.for_version(ACCOUNT_OUTPUT)(self._account(accountId)).data)

    def _account(self, account_id):
        return account_get(institution=self.institution, account_id=account_id)


AT_PARAMETER = OpenApiParameter(
    "at", str, description="An ISO 8601 date-time with its offset or Z, not in the future."
)


class AccountBalancesView(TXView):
    @document(
        name="Balances",
        resources=both(Balances),
        summary="Balances of an account",
        description="One stored row: `available = posted - pending`. With `at`, the balances "
        "at that instant, from the ledger (docs/balances-at-an-instant.md): `posted` after the "
        "entries made by then, `pending` the holds active then; no `available`.",
        parameters={
            V1: [AT_PARAMETER],
            V2: [
                AT_PARAMETER,
                OpenApiParameter(
                    "basis",
                    str,
                    enum=["booking", "value"],
                    description="With `at`: `booking` (default) or `value` (by value date: "
                    'docs/balances-at-an-instant.md, "Value dates").',
                ),
            ],
        },
        operation_id="accounts_balances",
        tags=["Accounts"],
    )
    def get(self, request, accountId):  # noqa: N803
        query = self.parse_query(BalancesQueryV2 if request.version == V2 else BalancesQuery)
        at = query.get("at")
        if at is not None:
            # An instant a read replica may not have reached yet is the primary's to answer
            # (docs/read-replicas.md): decided before the first read, the account's included.
            replicas.reads_as_of(at)
        account = account_get(institution=self.institution, account_id=accountId)
        if at is None:
            return self.respond(Balances(account).data)
        posted, pending = balance_at(account=account, at=at, value=query.get("basis") == "value")
        return self.respond(
            Balances(
                {
                    "id": account.pk,
                    "posted": posted,
                    "pending": pending,
                    "currency": account.currency,
                    "at": at,
                }
            ).data
        )


class AccountAdjustmentsView(TXView):
    write_scope = scopes.MONEY_ADJUST

    @document(
        name="Adjustment",
        resources=both(AdjustmentOut),
        request=both(AdjustmentCreate),
        created=True,
        summary="Load (credit) or unload (debit) an account",
        description="Against the institution's funding account; a `CashInc` or `CashDec` "
        "statement line. 422 `insufficient_funds`, `account_not_active`, `currency_mismatch`.",
        operation_id="accounts_adjustments_create",
        tags=["Accounts"],
    )
    def post(self, request, accountId):  # noqa: N803
        account = account_get(institution=self.institution, account_id=accountId)
        data = self.parse(AdjustmentCreate)
        adjustment = adjustment_create(
            account=account,
            direction=data["direction"],
            amount=data["amount"],
            currency=data["currency"],
            description=data.get("description", ""),
            actor=Actor.of_request(request),
        )
        return self.created(AdjustmentOut(adjustment).data)


class AccountLookupView(TXView):
    write_scope = scopes.READ

    @document(
        name="Account",
        resources=ACCOUNT_OUTPUT,
        request=both(AccountLookup),
        summary="Find an account by its account number",
        description="The account number is sensitive, so it travels in the body, never in a "
        "URL. 404 when no account of the institution has it.",
        operation_id="account_lookups_create",
        tags=["Accounts"],
    )
    def post(self, request):
        data = self.parse(AccountLookup)
        account = account_by_number(
            institution=self.institution, account_number=data["accountNumber"]
        )
        return self.respond(self.for_version(ACCOUNT_OUTPUT)(account).data)
