"""A customer's SEPA direct-debit instructions to its bank, under its account (v2;
docs/payments.md, "Inbound direct debits"): the mandates it gave creditors and the creditors
it blocks, against which the clearing's collections of the account are checked; its refusal of
a collection before settlement ("Refusals of inbound direct debits") and its refund of one after
("Refunds of inbound direct debits")."""

from rest_framework import serializers

from accounts.selectors import account_get
from api.schema import document
from api.serializers import Serializer, StrictCharField, StrictSerializer, TimestampField
from api.versions import V2
from api.views import TXView
from core.actors import Actor
from core.selectors import get_of_institution
from institutions import scopes

from ..models import BlockedCreditor, DebtorMandate
from ..selectors import inbound_entry_get
from ..services.debtor_refunds import debtor_refund_claim
from ..services.debtor_refusals import debtor_refusal_create
from ..services.debtor_register import (
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


class DebtorRefundCreate(StrictSerializer):
    reason = StrictCharField(
        max_length=200,
        required=False,
        allow_blank=True,
        help_text="The customer's words, kept with the refund (never sent to the creditor).",
    )


class DebtorRefundOut(Serializer):
    refundId = serializers.CharField(source="id")  # noqa: N815
    inboundEntryId = serializers.CharField(source="inbound_entry_id")  # noqa: N815
    reasonCode = serializers.CharField(  # noqa: N815
        source="reason_code",
        help_text="MD06 (refund within 8 weeks) or MD01 (no valid mandate, until 13 months).",
    )
    returnReason = serializers.CharField(source="reason", help_text="Normalized.")  # noqa: N815
    reason = serializers.CharField(source="note", help_text="The customer's words.")
    amount = serializers.IntegerField(source="inbound_entry.amount")
    currency = serializers.CharField(source="inbound_entry.currency")
    fileId = serializers.CharField(  # noqa: N815
        source="file_id", help_text="TX's pacs.004 returning the collection to the creditor's bank."
    )
    returnId = serializers.CharField(source="return_id", help_text="The pacs.004's RtrId.")  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815


class InboundEntryRefundsView(TXView):
    write_scope = scopes.PAYMENTS_WRITE

    @document(
        name="DebtorRefund",
        resources={V2: DebtorRefundOut},
        request={V2: DebtorRefundCreate},
        created=True,
        summary="Refund a SEPA Core direct debit collected from a customer's account",
        description="The customer's refund right (the EPC's SDD Core rulebook): within 8 weeks "
        "of the collection's settlement date unconditionally (MD06), until 13 months only when "
        "the customer holds no valid mandate of the creditor and reference (MD01). The amount is "
        "credited to the account at once and TX's pacs.004 returns the collection to the "
        "creditor's bank with the payments job's next files; the entry is `returned`. 422 "
        "`refund_not_available` (not a SEPA Core direct debit: an ACH entry, a credit, a B2B "
        "collection), `refund_window_closed` (past 13 months, or past 8 weeks with a valid "
        "mandate), `account_not_active` (the account is closed); 409 `already_exists` (refunded "
        "already), `invalid_state_transition` (a rejected collection: nothing was debited).",
        operation_id="inbound_entry_refunds_create",
        tags=TAGS,
    )
    def post(self, request, inboundEntryId):  # noqa: N803
        inbound = inbound_entry_get(institution=self.institution, inbound_entry_id=inboundEntryId)
        data = self.parse(DebtorRefundCreate)
        refund = debtor_refund_claim(
            inbound=inbound, note=data.get("reason", ""), actor=Actor.of_request(request)
        )
        return self.created(DebtorRefundOut(refund).data)


class DebtorRefusalCreate(StrictSerializer):
    reason = StrictCharField(
        max_length=140,
        required=False,
        allow_blank=True,
        help_text="The customer's words, kept with the refusal (never sent to the creditor).",
    )


class DebtorRefusalOut(Serializer):
    refusalId = serializers.CharField(source="id")  # noqa: N815
    inboundEntryId = serializers.CharField(source="inbound_entry_id")  # noqa: N815
    reasonCode = serializers.CharField(  # noqa: N815
        source="inbound_entry.return_code", help_text="MS02 (refusal by the debtor)."
    )
    rejectReason = serializers.CharField(  # noqa: N815
        source="inbound_entry.return_reason", help_text="Normalized: refused_by_customer."
    )
    reason = serializers.CharField(source="note", help_text="The customer's words.")
    amount = serializers.IntegerField(source="inbound_entry.amount")
    currency = serializers.CharField(source="inbound_entry.currency")
    settlementDate = serializers.DateField(source="inbound_entry.settlement_date")  # noqa: N815
    fileId = serializers.CharField(  # noqa: N815
        source="file_id", help_text="TX's pacs.002 rejecting the collection to the clearing."
    )
    createdAt = TimestampField(source="created_at")  # noqa: N815


class InboundEntryRefusalsView(TXView):
    write_scope = scopes.PAYMENTS_WRITE

    @document(
        name="DebtorRefusal",
        resources={V2: DebtorRefusalOut},
        request={V2: DebtorRefusalCreate},
        created=True,
        summary="Refuse a SEPA direct debit presented from a customer's account, before it settles",
        description="The debtor's refusal (the EPC's SDD rulebooks, reason MS02): before the "
        "collection's settlement date, for any reason, the customer tells TX not to pay it. "
        "The entry is `rejected` MS02 (`refused_by_customer`), nothing moves, and TX's pacs.002 "
        "rejects it to the clearing with the payments job's next files. 409 "
        "`invalid_state_transition` for anything but a SEPA direct debit still `received` "
        "before its settlement date (refused or rejected already, debited or returned, on or "
        "after its date: its refund is what is left; an ACH entry, a credit).",
        operation_id="inbound_entry_refusals_create",
        tags=TAGS,
    )
    def post(self, request, inboundEntryId):  # noqa: N803
        inbound = inbound_entry_get(institution=self.institution, inbound_entry_id=inboundEntryId)
        data = self.parse(DebtorRefusalCreate)
        refusal = debtor_refusal_create(
            inbound=inbound, note=data.get("reason", ""), actor=Actor.of_request(request)
        )
        return self.created(DebtorRefusalOut(refusal).data)
