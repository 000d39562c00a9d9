"""TX's pacs.004 of a collection it paid or was to pay (docs/payments.md, "Inbound direct
debits" and "Refunds of inbound direct debits"): the debtor's bank returns the collection to the
creditor's bank through the clearing, on the customer's refund (`debtor_refunds`: MD06, MD01) or
on its own at the settlement date (`inbound_debits.collection_settle`: AM04, AC04, AC06).

The collection's facts the pacs.004 names (its message, instruction and mandate, the parties)
are read back from its pacs.003, kept as the inbound rail file: nothing is copied into the entry
to keep in step. The message is validated against its XSD as it is written and kept as an
outbound rail file of rail `sepa_dd`, which the payments job delivers into the `sepa` outbox.
"""

from datetime import datetime

from ..iso20022 import pacs004
from ..iso20022.pacs003 import read_debits
from ..iso20022.status_reasons import StatusReason
from ..models import InboundEntry, Rail, RailFile, SepaProfile
from .outbound_files import outbound_kept
from .sepa_inbound import return_header

ORIGINAL_MESSAGE = "pacs.003.001.08"


def presented(inbound: InboundEntry):
    """The pacs.003 message that presented the collection `inbound`, and its debit."""
    message = read_debits(bytes(inbound.file.content))
    for each in message.debits:
        if (each.transaction_id, each.creditor_bic) == (
            inbound.sepa_reference,
            inbound.sepa_agent_bic,
        ):
            return message, each
    raise AssertionError(f"{inbound.pk} is not in its file")


def collection_return_file(
    inbound: InboundEntry, *, code: str, return_id: str, now: datetime
) -> RailFile:
    """TX's pacs.004 returning the collection `inbound` with the reason `code` (TX's BIC its
    originator) under the return id `return_id` (`RtrId`), settled through the clearing on the
    first SEPA day from `now`'s date; kept as an outbound rail file to deliver."""
    message, collection = presented(inbound)
    header = message.header
    institution = inbound.institution
    profile = SepaProfile.objects.get(institution=institution)
    rail_file = RailFile(institution=institution)
    content = pacs004.write_return(  # validated against its XSD as it is written
        pacs004.PaymentReturn(
            header=return_header(profile, rail_file.pk, header.instructing_agent_bic, now),
            transactions=(
                pacs004.ReturnedTransaction(
                    return_id=return_id,
                    original_message_id=header.message_id,
                    original_message_type=ORIGINAL_MESSAGE,
                    original_instruction_id=collection.instruction_id,
                    original_end_to_end_id=collection.end_to_end_id,
                    original_transaction_id=collection.transaction_id,
                    original_amount=inbound.amount,
                    returned_amount=inbound.amount,
                    reason=StatusReason(code, originator_bic=profile.bic),
                    original_settlement_date=header.settlement_date,
                    debtor_name=collection.debtor_name,
                    debtor_iban=collection.debtor_iban,
                    creditor_name=collection.creditor_name,
                    creditor_iban=collection.creditor_iban,
                ),
            ),
        )
    )
    return outbound_kept(
        rail_file,
        rail=Rail.SEPA_DD,
        name=f"{institution.pk}-pacs004-{rail_file.pk}.xml",
        content=content,
        entry_count=1,
    )
