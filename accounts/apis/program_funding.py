"""`/program-funding-accounts` (v2): the money a just-in-time card program has put at the bank
to fund its cardholders' payments as it approves them (docs/decisioning.md, "Just-in-time
funding"; `accounts.services.program_funding`). One internal account per currency, made on
first use; listed with its balances, topped up or drawn down like a customer's account is
loaded (an adjustment against the institution's funding account), and given the credit the
institution grants the program (`overdraftLimit`, 0 by default: it may not go below zero).

Topping up and the credit move money and grant it: both need `money:adjust`, as a customer's
load and overdraft limit do (docs/tenancy-and-keys.md)."""

from rest_framework import serializers

from api.schema import document
from api.serializers import AmountField, Serializer, StrictSerializer, TimestampField
from api.versions import V2
from api.views import TXView
from core.actors import Actor
from core.money import MAX_AMOUNT
from institutions import scopes

from ..selectors import program_funding_account_get, program_funding_accounts
from ..services import adjustment_create
from ..services.program_funding import program_funding_account, program_funding_set_limit
from .accounts import AccountBalances, AdjustmentCreate, AdjustmentOut

TAGS = ["Decisioning"]


class ProgramFundingAccountOut(Serializer):
    accountId = serializers.CharField(source="id")  # noqa: N815
    currency = serializers.CharField()
    balances = AccountBalances(source="*")
    overdraftLimit = serializers.IntegerField(  # noqa: N815
        source="overdraft_limit",
        help_text="The credit the institution grants the program: how far below zero its "
        "funding account may go (in `available`). 0: not at all.",
    )
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815


class ProgramFundingAdjustmentCreate(AdjustmentCreate):
    """An adjustment of the program's funding account in `currency` (made on first use)."""


class ProgramFundingAccountUpdate(StrictSerializer):
    overdraftLimit = AmountField(  # noqa: N815
        min_value=0,
        max_value=MAX_AMOUNT,
        help_text="Minor units of the account's currency; 0 takes the credit away.",
    )


class ProgramFundingAccountListView(TXView):
    @document(
        name="ProgramFundingAccount",
        resources={V2: ProgramFundingAccountOut},
        many=True,
        summary="List the program's funding accounts",
        description="One per currency the program's cards have been funded in or it has "
        "topped up, with its balances: what it may still fund is `available`.",
        operation_id="program_funding_accounts_list",
        tags=TAGS,
    )
    def get(self, request):
        accounts = program_funding_accounts(institution=self.institution)
        return self.respond_list(accounts, ProgramFundingAccountOut)


class ProgramFundingAdjustmentsView(TXView):
    write_scope = scopes.MONEY_ADJUST

    @document(
        name="Adjustment",
        resources={V2: AdjustmentOut},
        request={V2: ProgramFundingAdjustmentCreate},
        created=True,
        summary="Top up (credit) or draw down (debit) the program's funding account",
        description="The program's funding account in `currency` (made on first use), against "
        "the institution's funding account, as a customer's load or unload. 422 "
        "`insufficient_funds` for a debit beyond what it has available.",
        operation_id="program_funding_adjustments_create",
        tags=TAGS,
    )
    def post(self, request):
        data = self.parse(ProgramFundingAdjustmentCreate)
        account = program_funding_account(institution=self.institution, currency=data["currency"])
        adjustment = adjustment_create(
            account=account,
            direction=data["direction"],
            amount=data["amount"],
            currency=data["currency"],
            description=data.get("description", ""),
            actor=Actor.of_request(request),
        )
        return self.created(AdjustmentOut(adjustment).data)


class ProgramFundingAccountDetailView(TXView):
    write_scope = scopes.MONEY_ADJUST

    @document(
        name="ProgramFundingAccount",
        resources={V2: ProgramFundingAccountOut},
        summary="Retrieve a program funding account",
        operation_id="program_funding_accounts_retrieve",
        tags=TAGS,
    )
    def get(self, request, accountId):  # noqa: N803
        account = program_funding_account_get(institution=self.institution, account_id=accountId)
        return self.respond(ProgramFundingAccountOut(account).data)

    @document(
        name="ProgramFundingAccount",
        resources={V2: ProgramFundingAccountOut},
        request={V2: ProgramFundingAccountUpdate},
        summary="Set the credit the institution grants the program",
        description="`overdraftLimit`: how far below zero the funding account may go. 422 when "
        "it is below zero by more than the new limit already.",
        operation_id="program_funding_accounts_update",
        tags=TAGS,
    )
    def patch(self, request, accountId):  # noqa: N803
        account = program_funding_account_get(institution=self.institution, account_id=accountId)
        data = self.parse(ProgramFundingAccountUpdate)
        account = program_funding_set_limit(account=account, limit=data["overdraftLimit"])
        return self.respond(ProgramFundingAccountOut(account).data)
