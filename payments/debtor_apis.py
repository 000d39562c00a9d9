"""A customer's SEPA direct-debit instructions to its bank, under its account (v2;
docs/payments.md, "Inbound direct debits"): the mandates it gave creditors and the creditors
it blocks, against which the clearing's collections of the account are checked."""

from rest_framework import serializers

from accounts.selectors import account_get
from api.schema import document
from api.serializers import Serializer, StrictCharField, StrictSerializer, TimestampField
from api.versions import V2
from api.views import TXView
from core.actors import Actor
from core.selectors import get_of_institution
from institutions import scopes

from .models import BlockedCreditor, DebtorMandate
from .services.debtor_register import (
    blocked_creditor_cancel,
    blocked_creditor_create,
    debtor_mandate_cancel,
    debtor_mandate_create,
)

TAGS = ["Payments"]
CREDITOR_HELP = "The creditor's SEPA identifier (AT-02), e.g. DE98ZZZ09999999999."


class DebtorMandateCreate(StrictSerializer):
    creditorIdentifier = StrictCharField(max_length=35, help_text=CREDITOR_HELP)  # noqa: N815
    mandateReference = StrictCharField(  # noqa: N815
        max_length=35, help_text="The mandate's reference (AT-01), as the creditor gave it."
    )


class BlockedCreditorCreate(StrictSerializer):
    creditorIdentifier = StrictCharField(max_length=35, help_text=CREDITOR_HELP)  # noqa: N815


class RegisterCancellationCreate(StrictSerializer):
    reason = StrictCharField(max_length=200, required=False, allow_blank=True)


class RegisterQuery(Serializer):
    status = serializers.ChoiceField(choices=DebtorMandate.Status.choices, required=False)


class _RegisterOut(Serializer):
    accountId = serializers.CharField(source="account_id")  # noqa: N815
    creditorIdentifier = serializers.CharField(source="creditor_identifier")  # noqa: N815
    status = serializers.ChoiceField(choices=DebtorMandate.Status.choices)
    cancelledAt = TimestampField(source="cancelled_at", allow_null=True)  # noqa: N815
    cancellationReason = serializers.CharField(source="cancelled_reason")  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815


class DebtorMandateOut(_RegisterOut):
    debtorMandateId = serializers.CharField(source="id")  # noqa: N815
    mandateReference = serializers.CharField(source="mandate_reference")  # noqa: N815


class BlockedCreditorOut(_RegisterOut):
    blockedCreditorId = serializers.CharField(source="id")  # noqa: N815


def _rows(view: TXView, model, account_id: str):
    """The account's rows (404 for an account that is not the institution's), by status."""
    account = account_get(institution=view.institution, account_id=account_id)
    query = view.parse_query(RegisterQuery)
    rows = model.objects.filter(account=account)
    if query.get("status"):
        rows = rows.filter(status=query["status"])
    return rows


def _row(view: TXView, model, account_id: str, row_id: str, missing: str):
    return get_of_institution(
        model.objects.all(),
        institution=view.institution,
        id=row_id,
        account_id=account_id,
        missing=missing,
    )


class DebtorMandateListView(TXView):
    write_scope = scopes.ACCOUNTS_WRITE

    @document(
        name="DebtorMandate",
        resources={V2: DebtorMandateOut},
        request={V2: DebtorMandateCreate},
        created=True,
        summary="Record a mandate the account's customer gave a creditor",
        description="The clearing's SEPA direct debits of the account are paid only under an "
        "active mandate of their creditor and reference (rejected MD01 otherwise). 404 for an "
        "account that is not the institution's; 422 `account_not_active` (closed), "
        "`duplicate_reference` (an active mandate of this creditor and reference already).",
        operation_id="debtor_mandates_create",
        tags=TAGS,
    )
    def post(self, request, accountId):  # noqa: N803
        data = self.parse(DebtorMandateCreate)
        mandate = debtor_mandate_create(
            institution=self.institution,
            account_id=accountId,
            creditor_identifier=data["creditorIdentifier"],
            mandate_reference=data["mandateReference"],
            actor=Actor.of_request(request),
        )
        return self.created(DebtorMandateOut(mandate).data)

    @document(
        name="DebtorMandate",
        resources={V2: DebtorMandateOut},
        many=True,
        summary="List the mandates the account's customer gave creditors, newest first",
        operation_id="debtor_mandates_list",
        tags=TAGS,
    )
    def get(self, request, accountId):  # noqa: N803
        return self.respond_list(_rows(self, DebtorMandate, accountId), DebtorMandateOut)


class DebtorMandateCancellationsView(TXView):
    write_scope = scopes.ACCOUNTS_WRITE

    @document(
        name="DebtorMandate",
        resources={V2: DebtorMandateOut},
        request={V2: RegisterCancellationCreate},
        created=True,
        summary="Cancel a mandate the account's customer gave a creditor",
        description="The creditor's collections under it are rejected MD01 from now on. 409 "
        "`invalid_state_transition` when it is cancelled already.",
        operation_id="debtor_mandate_cancellations_create",
        tags=TAGS,
    )
    def post(self, request, accountId, debtorMandateId):  # noqa: N803
        mandate = _row(
            self, DebtorMandate, accountId, debtorMandateId, "No debtor mandate with this id."
        )
        data = self.parse(RegisterCancellationCreate)
        mandate = debtor_mandate_cancel(
            mandate=mandate, reason=data.get("reason", ""), actor=Actor.of_request(request)
        ).value
        return self.created(DebtorMandateOut(mandate).data)


class BlockedCreditorListView(TXView):
    write_scope = scopes.ACCOUNTS_WRITE

    @document(
        name="BlockedCreditor",
        resources={V2: BlockedCreditorOut},
        request={V2: BlockedCreditorCreate},
        created=True,
        summary="Block a creditor's SEPA direct debits of the account",
        description="Its collections are rejected SL01 before settlement, mandate or not, "
        "until the block is cancelled. 404 for an account that is not the institution's; 422 "
        "`account_not_active` (closed), `duplicate_reference` (blocked already).",
        operation_id="blocked_creditors_create",
        tags=TAGS,
    )
    def post(self, request, accountId):  # noqa: N803
        data = self.parse(BlockedCreditorCreate)
        blocked = blocked_creditor_create(
            institution=self.institution,
            account_id=accountId,
            creditor_identifier=data["creditorIdentifier"],
            actor=Actor.of_request(request),
        )
        return self.created(BlockedCreditorOut(blocked).data)

    @document(
        name="BlockedCreditor",
        resources={V2: BlockedCreditorOut},
        many=True,
        summary="List the creditors blocked on the account, newest first",
        operation_id="blocked_creditors_list",
        tags=TAGS,
    )
    def get(self, request, accountId):  # noqa: N803
        return self.respond_list(_rows(self, BlockedCreditor, accountId), BlockedCreditorOut)


class BlockedCreditorCancellationsView(TXView):
    write_scope = scopes.ACCOUNTS_WRITE

    @document(
        name="BlockedCreditor",
        resources={V2: BlockedCreditorOut},
        request={V2: RegisterCancellationCreate},
        created=True,
        summary="Unblock a creditor on the account",
        description="Its collections reach the account again (paid under a mandate). 409 "
        "`invalid_state_transition` when the block is cancelled already.",
        operation_id="blocked_creditor_cancellations_create",
        tags=TAGS,
    )
    def post(self, request, accountId, blockedCreditorId):  # noqa: N803
        blocked = _row(
            self, BlockedCreditor, accountId, blockedCreditorId, "No blocked creditor with this id."
        )
        data = self.parse(RegisterCancellationCreate)
        blocked = blocked_creditor_cancel(
            blocked=blocked, reason=data.get("reason", ""), actor=Actor.of_request(request)
        ).value
        return self.created(BlockedCreditorOut(blocked).data)
