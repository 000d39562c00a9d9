"""Inbound SEPA direct debits (docs/payments.md, "Inbound direct debits"): another bank's
creditor collects from one of the institution's accounts, named by its IBAN, and the clearing
presents the collection to TX, the debtor's bank, in a pacs.003. Only a bank in the clearing
(an `interbank` profile) receives them (`sepa_files` refuses the document whole otherwise).

Read with the clearing's other documents (`sepa_files`: XSD first, the safe parser, refused
whole, the same bytes once), each collection is an `InboundEntry` of rail `sepa_dd`, a debit.
**When the file is read**, in its transaction, what does not depend on the day decides, in
this order:

| what TX finds | what happens |
|---|---|
| no account of the institution has the IBAN | rejected AC01 |
| the account is closed | rejected AC04 |
| the account is frozen | rejected AC06 |
| the customer blocks the creditor (`debtor_register`) | rejected SL01 |
| no active mandate of the customer's of that creditor and reference | rejected MD01 |
| otherwise | `received`, until its settlement date |

The reference is the mandate's, or the original one an amendment of it names (the customer's
bank knew that one).

A rejection is TX's, the debtor bank's, before settlement: nothing moves, the entry keeps the
code and its normalized reason, and TX answers the clearing with one pacs.002 of the file's
rejected collections (`RJCT` with the code; the group `RJCT` when all are, else `PART`),
validated against its XSD as written and kept as an outbound rail file the payments job
delivers into the `sepa` outbox. Accepted collections are not answered: SEPA's debtor banks tell
only rejections.

**On its settlement date** (the pacs.003's `IntrBkSttlmDt`, the institution's date: the payments
job, `collections_settle`, the entry then its account locked; a day the job missed is caught
up) the clearing has settled it, and TX debits the account or returns it
(`collection_settle`):

| the account | what happens |
|---|---|
| closed by then | returned AC04 |
| frozen by then | returned AC06 |
| less available than the amount | returned AM04 |
| otherwise | applied: account -> `rail_settlement` (a `CashDec` line) |

A return is the debtor bank's after settlement: TX's pacs.004 (`collection_returns`, the writer
of the customer's refunds too), the entry `returned` with the code, the pacs.004 and its return
id. Nothing moves on the ledger: the customer paid nothing, and the clearing's settlement of the
collection out of TX's position and of the pacs.004 back into it cancel there.

**Applied once**: the institution, the rail, the creditor's bank (`CdtrAgt`) and the
transaction id (unique for the bank that gave it) are the inbound entries' unique index
(`inbound_entry_sepa_once`): a collection presented again, in another file, finds its entry,
moves nothing and is not answered twice; the job settles an entry that is `received` only.
"""

from datetime import datetime

from django.db import IntegrityError, transaction

from accounts.locks import lock_accounts

from ..account_ibans import account_of_iban
from ..iso20022 import codes, pacs002
from ..iso20022.pacs003 import InterbankDirectDebit, read_debits
from ..iso20022.status_reasons import StatusReason
from ..models import InboundEntry, Rail, RailFile, SepaProfile
from .collection_returns import ORIGINAL_MESSAGE, collection_return_file
from .debtor_register import creditor_key, register_of
from .inbound import emit_inbound, inbound_apply, inbound_entries_settle, inbound_move
from .outbound_files import outbound_kept
from .sepa_inbound import inbound_reject, refusal_of, remittance_text

BLOCKED_CREDITOR, NO_MANDATE, INSUFFICIENT_FUNDS = "SL01", "MD01", "AM04"
REJECTED = "RJCT"


def inbound_debits_receive(rail_file: RailFile, content: bytes, now: datetime) -> int:
    """Each collection of the pacs.003 `content` kept for its settlement date or rejected
    (module docstring), and TX's pacs.002 of the rejected ones written; return how many
    collections it has."""
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
        rejections_answer(profile, message, rejected, now)
    return len(message.debits)


def _received(profile, rail_file, debit: InterbankDirectDebit, settles_on, now):
    """The collection's entry, received or rejected; None when it was presented before (its
    entry as it was)."""
    account = account_of_iban(profile, debit.debtor_iban)
    if account is not None:  # locked before its status decides (a freeze at the same moment)
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
    return inbound


def _refusal(account, debit: InterbankDirectDebit) -> str:
    """Why the account rejects the collection when it is read (the module docstring's first
    rows, in order); "" when it waits for its settlement date."""
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
    return ""


def collections_settle(*, now: datetime | None = None) -> int:
    """The payments job's step: every received collection whose settlement date has come (a
    day the job missed caught up) debited or returned (`collection_settle`); return how many."""
    return inbound_entries_settle(now=now, rails=[Rail.SEPA_DD], settle=collection_settle)


def collection_settle(*, inbound: InboundEntry, at: datetime) -> InboundEntry:
    """A received collection on its settlement date (module docstring), its entry locked by
    the caller, in its transaction, the account locked next: debited, or returned in TX's
    pacs.004. The register was checked when it was read."""
    account = lock_accounts([inbound.account_id])[inbound.account_id] if inbound.account else None
    code = refusal_of(account)
    if not code and account.available < inbound.amount:
        code = INSUFFICIENT_FUNDS
    if not code:
        inbound_apply(inbound, account, at=at)
        return inbound
    return_id = inbound.pk[-15:]  # the entry's own: a collection is returned at most once
    inbound_move(
        inbound,
        InboundEntry.Status.RETURNED,
        "inbound_entry.returned",
        at=at,
        return_code=code,
        return_reason=codes.reason(code).normalized,
        return_file=collection_return_file(inbound, code=code, return_id=return_id, now=at),
        return_trace_number=return_id,
    )
    return inbound


def rejections_answer(profile, message, rejected: list, now: datetime) -> RailFile:
    """TX's pacs.002 of the pacs.003 `message`'s rejected collections (`rejected`: each debit
    with its entry, `rejected` with its code), kept as an outbound rail file to deliver: those
    rejected when it is read, or one its customer refuses later (`debtor_refusals`)."""
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
    return outbound_kept(
        answer,
        rail=Rail.SEPA_DD,
        name=f"{institution.pk}-pacs002-{answer.pk}.xml",
        content=content,
        entry_count=len(rejected),
    )
