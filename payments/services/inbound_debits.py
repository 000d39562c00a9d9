"""Inbound SEPA direct debits (docs/payments.md, "Inbound direct debits"): another bank's
creditor collects from one of the institution's accounts, named by its IBAN, and the clearing
presents the collection to TX, the debtor's bank, in a pacs.003. Only a bank in the clearing
(an `interbank` profile) receives them (`sepa_files` refuses the document whole otherwise).

Read with the clearing's other documents (`sepa_files`: XSD first, the safe parser, refused
whole, the same bytes once), each collection is an `InboundEntry` of rail `sepa_dd`, a debit,
decided at once, in the file's transaction, in this order:

| what TX finds | what happens |
|---|---|
| no account of the institution has the IBAN | rejected AC01 |
| the account is closed | rejected AC04 |
| the account is frozen | rejected AC06 |
| the customer blocks the creditor (`debtor_register`) | rejected SL01 |
| no active mandate of the customer's of that creditor and reference | rejected MD01 |
| less available than the amount | rejected AM04 |
| otherwise | applied: account -> `rail_settlement` (a `CashDec` line) |

The reference is the mandate's, or the original one an amendment of it names (the customer's
bank knew that one).

A rejection is TX's, the debtor bank's, before settlement: nothing moves, the entry keeps the
code and its normalized reason, and TX answers the clearing with one pacs.002 of the file's
rejected collections (`RJCT` with the code; the group `RJCT` when all are, else `PART`),
validated against its XSD as written and kept as an outbound rail file the payments job
delivers into the `sepa` outbox. Accepted collections are not answered: SEPA's debtor banks tell
only rejections.

**Applied once**: the institution, the rail, the creditor's bank (`CdtrAgt`) and the
transaction id (unique for the bank that gave it) are the inbound entries' unique index
(`inbound_entry_sepa_once`): a collection presented again, in another file, finds its entry,
moves nothing and is not answered twice.
"""

import hashlib
from datetime import datetime

from django.db import IntegrityError, transaction

from accounts.locks import lock_accounts

from ..account_ibans import account_of_iban
from ..iso20022 import pacs002
from ..iso20022.pacs003 import InterbankDirectDebit, read_debits
from ..iso20022.status_reasons import StatusReason
from ..models import InboundEntry, Rail, RailFile, SepaProfile
from .debtor_register import creditor_key, register_of
from .inbound import emit_inbound, inbound_apply
from .sepa_inbound import inbound_reject, refusal_of, remittance_text

ORIGINAL_MESSAGE = "pacs.003.001.08"
BLOCKED_CREDITOR, NO_MANDATE, INSUFFICIENT_FUNDS = "SL01", "MD01", "AM04"
REJECTED = "RJCT"


def inbound_debits_receive(rail_file: RailFile, content: bytes, now: datetime) -> int:
    """Each collection of the pacs.003 `content` debited or rejected (module docstring), and
    TX's pacs.002 of the rejected ones written; return how many collections it has."""
    message = read_debits(content)
    profile = SepaProfile.objects.select_related("institution").get(
        institution=rail_file.institution
    )
    rejected = []
    for debit in message.debits:
        entry = _received(profile, rail_file, debit, message.header.settlement_date, now)
        if entry is not None and entry.status == InboundEntry.Status.REJECTED:
            rejected.append((debit, entry))
    if rejected:
        _answer(profile, message, rejected, now)
    return len(message.debits)


def _received(profile, rail_file, debit: InterbankDirectDebit, settles_on, now):
    """The collection's entry, debited or rejected; None when it was presented before (its
    entry as it was)."""
    account = account_of_iban(profile, debit.debtor_iban)
    if account is not None:  # locked before its status and funds decide
        account = lock_accounts([account.pk])[account.pk]
    inbound = InboundEntry(
        institution=profile.institution,
        file=rail_file,
        rail=Rail.SEPA_DD,
        direction=InboundEntry.Direction.DEBIT,
        amount=debit.amount,
        currency=debit.currency,
        company_name=debit.creditor_name[:70],
        company_id="",
        company_entry_description="",
        sepa_reference=debit.transaction_id,
        sepa_agent_bic=debit.creditor_bic,
        end_to_end_id=debit.end_to_end_id,
        remittance_info=remittance_text(debit.remittance)[:140],
        account=account,
        settlement_date=settles_on,
        status=InboundEntry.Status.RECEIVED,
    )
    for field, value in inbound.sealed_account_number(debit.debtor_iban).items():
        setattr(inbound, field, value)
    try:
        with transaction.atomic():
            inbound.save(force_insert=True)
    except IntegrityError:  # presented before: as it was
        return None
    emit_inbound(inbound, "inbound_entry.received")
    code = _refusal(account, debit)
    if code:
        inbound_reject(inbound, code, at=now)
    else:
        inbound_apply(inbound, account, at=now)
    return inbound


def _refusal(account, debit: InterbankDirectDebit) -> str:
    """Why the account does not pay the collection (the module docstring's rows, in order);
    "" when it does."""
    code = refusal_of(account)
    if code:
        return code
    blocked, mandates = register_of(account.pk)
    creditor = creditor_key(debit.creditor_id)
    if creditor in blocked:
        return BLOCKED_CREDITOR
    references = {debit.mandate_id}
    if debit.amendment is not None and debit.amendment.original_mandate_id:
        references.add(debit.amendment.original_mandate_id)
    if not any((creditor, reference) in mandates for reference in references):
        return NO_MANDATE
    if account.available < debit.amount:
        return INSUFFICIENT_FUNDS
    return ""


def _answer(profile, message, rejected: list, now: datetime) -> RailFile:
    """TX's pacs.002 of the rejected collections, kept as an outbound rail file to deliver."""
    institution = profile.institution
    answer = RailFile(institution=institution)
    header = message.header
    content = pacs002.write_status_report(  # validated against its XSD as it is written
        pacs002.InterbankStatusReport(
            message_id=answer.pk.replace("_", "-"),  # the SEPA character set has no "_"
            created_at=now.replace(microsecond=0),
            instructing_agent_bic=profile.bic,
            instructed_agent_bic=header.instructing_agent_bic,
            original_message_id=header.message_id,
            original_message_type=ORIGINAL_MESSAGE,
            original_count=len(message.debits),
            original_control_sum=message.total,
            group_status=REJECTED if len(rejected) == len(message.debits) else "PART",
            transactions=tuple(
                pacs002.InterbankTransactionStatus(
                    original_end_to_end_id=debit.end_to_end_id,
                    original_transaction_id=debit.transaction_id,
                    original_instruction_id=debit.instruction_id,
                    status=REJECTED,
                    reasons=(StatusReason(entry.return_code, originator_bic=profile.bic),),
                    original_amount=debit.amount,
                    original_settlement_date=header.settlement_date,
                )
                for debit, entry in rejected
            ),
        )
    )
    answer.rail = Rail.SEPA_DD
    answer.direction = RailFile.Direction.OUTBOUND
    answer.status = RailFile.Status.WRITTEN
    answer.name = f"{institution.pk}-pacs002-{answer.pk}.xml"
    answer.sha256 = hashlib.sha256(content).hexdigest()
    answer.content = content
    answer.entry_count = len(rejected)
    answer.save(force_insert=True)
    return answer
