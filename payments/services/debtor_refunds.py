"""The debtor's refund right of SEPA Core direct debits (docs/payments.md, "Refunds of inbound
direct debits"; the EPC's SDD Core rulebook, 4.3.4): the customer of an account another bank's
creditor collected from (an applied `sepa_dd` inbound entry, "Inbound direct debits") claims
its money back, and TX, the debtor's bank, refunds it and returns the collection to the
creditor's bank with a pacs.004.

- Within **8 weeks** of the collection's settlement date: unconditional, reason **MD06**.
- From then until **13 months**: only for a collection without a valid mandate, reason
  **MD01**: the customer's register (`debtor_register`) holds no active mandate of the
  creditor and reference (or the original reference an amendment named) that it gave before
  the collection was debited. A valid one: 422 `refund_window_closed`.
- After 13 months: 422 `refund_window_closed`. A B2B collection has no refund right, an ACH
  entry or a credit none of these: 422 `refund_not_available`.

In one transaction, under the entry's lock then the account's: the amount from the EUR
`rail_settlement` account to the customer's account (a `CashInc` line), a `DebtorRefund` (one
per collection: the unique index `debtor_refund_once`, 409 `already_exists`), the entry
`returned` with the code in TX's pacs.004, and the event `inbound_entry.refunded` with the
actor. The pacs.004 is validated against its XSD as it is written and kept as an outbound rail
file the payments job delivers into the `sepa` outbox, as TX's pacs.002 answers are.

The collection's facts the pacs.004 names (its message, instruction and mandate, the parties)
are read back from its pacs.003, kept as the inbound rail file: nothing is copied to keep in
step.
"""

import hashlib
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.locks import lock_accounts
from accounts.models import Account, StatementLine
from accounts.posting import credit, debit
from accounts.statement_lines import Line, statement_lines_new
from core.actors import Actor
from core.exceptions import (
    AccountNotActive,
    AlreadyExists,
    BusinessRuleViolation,
    InvalidStateTransition,
)
from core.rows import constraint_of, new_row
from institutions.calendar import local_date

from ..calendar import months_after
from ..iso20022 import codes, pacs004
from ..iso20022.pacs003 import read_debits
from ..iso20022.status_reasons import StatusReason
from ..locks import lock_inbound_entry
from ..models import DebtorMandate, DebtorRefund, InboundEntry, Rail, RailFile, SepaProfile
from .debtor_register import creditor_key
from .inbound import _journal, emit_inbound
from .inbound_debits import ORIGINAL_MESSAGE
from .sepa_inbound import return_header
from .settlement import rail_account, rail_post
from .stop_payments import reason_checked

REFUND, NO_MANDATE = "MD06", "MD01"
UNCONDITIONAL = timedelta(weeks=8)
WINDOW_MONTHS = 13
B2B = "B2B"


class RefundNotAvailable(BusinessRuleViolation):
    code = "refund_not_available"
    message = (
        "Only a SEPA Core direct debit collected from the account (an inbound entry of rail "
        "sepa_dd, a debit) can be refunded: B2B collections have no refund right."
    )


class RefundWindowClosed(BusinessRuleViolation):
    code = "refund_window_closed"
    message = (
        "A collection is refunded within 8 weeks of its settlement date, and until 13 months "
        "only when it had no valid mandate."
    )


def debtor_refund_claim(*, inbound: InboundEntry, note: str = "", actor: Actor) -> DebtorRefund:
    """The customer's refund of the collection `inbound` (module docstring). 422
    `refund_not_available`, `refund_window_closed`, `account_not_active` (a closed account
    receives nothing); 409 `already_exists` (refunded already), `invalid_state_transition` (a
    collection not applied: rejected, nothing moved)."""
    note = reason_checked(note)
    with transaction.atomic(savepoint=False):
        inbound = lock_inbound_entry(inbound.pk)
        if inbound.rail != Rail.SEPA_DD or inbound.direction != InboundEntry.Direction.DEBIT:
            raise RefundNotAvailable(details={"rail": inbound.rail, "direction": inbound.direction})
        there = DebtorRefund.objects.filter(inbound_entry=inbound).first()
        if there is not None:
            raise _refunded(there)
        if inbound.status != InboundEntry.Status.APPLIED:
            raise InvalidStateTransition(
                "Only a collection that was debited can be refunded.",
                from_state=inbound.status,
                to_state=InboundEntry.Status.RETURNED,
            )
        header, collection = _collection(inbound)
        if collection.local_instrument == B2B:
            raise RefundNotAvailable(details={"rail": inbound.rail, "scheme": B2B})
        code = _reason_code(inbound, collection)
        account = lock_accounts([inbound.account_id])[inbound.account_id]
        if account.status == Account.Status.CLOSED:
            raise AccountNotActive(
                "The account is closed: it receives no refund.",
                details={"account_id": account.pk, "status": account.status},
            )
        refund = new_row(
            DebtorRefund,
            institution=inbound.institution,
            inbound_entry=inbound,
            reason_code=code,
            reason=codes.reason(code).normalized,
            note=note,
            **actor.stamp("created_by"),
        )
        refund.return_id = refund.pk[-15:]
        refund.file = _return_file(inbound, refund, header, collection)
        try:
            with transaction.atomic():
                refund.save(force_insert=True)
        except IntegrityError as error:  # the entry's lock makes this the database's word only
            if constraint_of(error) != "debtor_refund_once":
                raise
            raise _refunded(DebtorRefund.objects.filter(inbound_entry=inbound).first()) from None
        _money_back(inbound, account, refund, actor)
    return refund


def _refunded(there: DebtorRefund | None) -> AlreadyExists:
    return AlreadyExists(
        "The collection is refunded already.",
        details={"refund_id": there.pk if there else None},
    )


def _collection(inbound: InboundEntry):
    """The collection as its pacs.003 presented it: the message's header and the debit."""
    message = read_debits(bytes(inbound.file.content))
    for each in message.debits:
        if (each.transaction_id, each.creditor_bic) == (
            inbound.sepa_reference,
            inbound.sepa_agent_bic,
        ):
            return message.header, each
    raise AssertionError(f"{inbound.pk} is not in its file")


def _reason_code(inbound: InboundEntry, collection) -> str:
    """MD06 within 8 weeks of settlement; MD01 until 13 months without a valid mandate; else
    422 `refund_window_closed`."""
    today = local_date(inbound.institution, timezone.now())
    settled_on = inbound.settlement_date
    if today <= settled_on + UNCONDITIONAL:
        return REFUND
    last = months_after(settled_on, WINDOW_MONTHS)
    details = {"settlement_date": settled_on.isoformat()}
    if today > last:
        raise RefundWindowClosed(details={**details, "last_day": last.isoformat()})
    if _mandate_valid(inbound, collection):
        raise RefundWindowClosed(
            "After 8 weeks a collection is refunded only when it had no valid mandate, and "
            "the customer holds one of this creditor and reference.",
            details={
                **details,
                "last_day": (settled_on + UNCONDITIONAL).isoformat(),
                "mandate_valid": True,
            },
        )
    return NO_MANDATE


def _mandate_valid(inbound: InboundEntry, collection) -> bool:
    """Whether the customer's register holds an active mandate of the collection's creditor and
    reference (or the original one its amendment named) given before it was debited."""
    references = {collection.mandate_id}
    if collection.amendment is not None and collection.amendment.original_mandate_id:
        references.add(collection.amendment.original_mandate_id)
    creditor = creditor_key(collection.creditor_id)
    held = DebtorMandate.objects.filter(
        account_id=inbound.account_id,
        status=DebtorMandate.Status.ACTIVE,
        mandate_reference__in=references,
        created_at__lte=inbound.applied_at,
    ).values_list("creditor_identifier", flat=True)
    return any(creditor_key(identifier) == creditor for identifier in held)


def _return_file(inbound: InboundEntry, refund: DebtorRefund, header, collection) -> RailFile:
    """TX's pacs.004 of the refund: the debtor's bank returns the collection to the creditor's
    bank through the clearing, kept as an outbound rail file to deliver."""
    institution = inbound.institution
    profile = SepaProfile.objects.get(institution=institution)
    now = timezone.now()
    rail_file = RailFile(institution=institution)
    content = pacs004.write_return(  # validated against its XSD as it is written
        pacs004.PaymentReturn(
            header=return_header(profile, rail_file.pk, header.instructing_agent_bic, now),
            transactions=(
                pacs004.ReturnedTransaction(
                    return_id=refund.return_id,
                    original_message_id=header.message_id,
                    original_message_type=ORIGINAL_MESSAGE,
                    original_instruction_id=collection.instruction_id,
                    original_end_to_end_id=collection.end_to_end_id,
                    original_transaction_id=collection.transaction_id,
                    original_amount=inbound.amount,
                    returned_amount=inbound.amount,
                    reason=StatusReason(refund.reason_code, originator_bic=profile.bic),
                    original_settlement_date=header.settlement_date,
                    debtor_name=collection.debtor_name,
                    debtor_iban=collection.debtor_iban,
                    creditor_name=collection.creditor_name,
                    creditor_iban=collection.creditor_iban,
                ),
            ),
        )
    )
    rail_file.rail = Rail.SEPA_DD
    rail_file.direction = RailFile.Direction.OUTBOUND
    rail_file.status = RailFile.Status.WRITTEN
    rail_file.name = f"{institution.pk}-pacs004-{rail_file.pk}.xml"
    rail_file.sha256 = hashlib.sha256(content).hexdigest()
    rail_file.content = content
    rail_file.entry_count = 1
    rail_file.save(force_insert=True)
    return rail_file


def _money_back(
    inbound: InboundEntry, account: Account, refund: DebtorRefund, actor: Actor
) -> None:
    """The amount from `rail_settlement` to the account (the clearing brings it back there when
    TX's pacs.004 settles), a `CashInc` line; the entry `returned` in the pacs.004."""
    code = Account.InternalCode.RAIL_SETTLEMENT
    settlement = rail_account(inbound.institution, code, inbound.currency)
    journal = _journal(inbound, f"refunded ({refund.reason_code})")
    description = f"SEPA refund ({refund.reason_code}) to {inbound.company_name.strip()}"
    rail_post(
        inbound=inbound,
        institution_id=inbound.institution_id,
        currency=inbound.currency,
        moves=[credit(account.pk, inbound.amount), debit(settlement.pk, inbound.amount, check="")],
        journal=journal,
        lines=statement_lines_new(
            lines=[Line(account, StatementLine.Type.CASH_INC, inbound.amount, description)],
            currency=inbound.currency,
            journal=journal,
        ),
    )
    now = timezone.now()
    inbound.status = InboundEntry.Status.RETURNED
    inbound.return_code = refund.reason_code
    inbound.return_reason = refund.reason
    inbound.return_file = refund.file
    inbound.return_trace_number = refund.return_id
    inbound.updated_at = now
    inbound.save()
    emit_inbound(inbound, "inbound_entry.refunded", actor, refund_id=refund.pk)
