"""SEPA Credit Transfers to a bank in the clearing (docs/payments.md, "Inbound SEPA"): another
bank's customer pays one of the institution's accounts at its IBAN, and the clearing (EBA
STEP2) delivers the transfer to TX, the creditor's bank, in a pacs.008 file. Only an
`interbank` profile receives them (`sepa_files` refuses the document whole otherwise, and a
SEPA Instant transfer, which the clearing offers in real time: `instant_credits`).

Read with the clearing's other documents (`sepa_files`: XSD first, the safe parser, refused
whole, the same bytes once), each transfer is an `InboundEntry` of rail `sepa_ct`, a credit
(`sepa_inbound.sepa_credit_receive`, the instant credits' code), in the file's transaction:

- the account its IBAN names is active: **applied** (`rail_settlement` -> the account);
- it cannot take it (none AC01, closed AC04, frozen AC06): **returned** to the clearing in TX's
  one pacs.004 of the file's returns (the whole amount, TX's BIC the reason's originator, the
  original transfer as the pacs.008 told it, its return id the entry's id's last 15
  characters), validated against its XSD as it is written and kept as an outbound rail file the
  payments job delivers into the `sepa` outbox; `returning` (its code kept), then `returned`
  in that file, in the same transaction. Nothing is booked: settled money that goes back the
  way it came, the same day (`verify_ledger` counts a returned credit in neither rail
  account).

**Decision: applied when read.** The transfer settles through the clearing on the file's
interbank settlement date, and the clearing delivers it on that day: TX credits the customer
as it reads it, as a beneficiary bank does on D, rather than keeping it `received` for a job.
The entry keeps the file's settlement date.

**Applied once**: the institution, the rail, the debtor's bank and the transaction id are the
inbound entries' unique index (`inbound_entry_sepa_once`): the same transfer in another file
finds its entry, moves nothing and is not returned twice.
"""

from datetime import datetime

from ..iso20022 import pacs004
from ..iso20022.pacs008 import FIToFICreditTransfer
from ..models import InboundEntry, Rail, RailFile, SepaProfile
from .inbound import inbound_move
from .outbound_files import outbound_kept
from .sepa_inbound import (
    credit_of,
    credit_returned,
    original_transfer,
    return_header,
    sepa_credit_receive,
)

Status = InboundEntry.Status


def interbank_credits_receive(
    rail_file: RailFile, message: FIToFICreditTransfer, now: datetime
) -> int:
    """Each transfer of the pacs.008 `message` applied or returned (module docstring), and
    TX's pacs.004 of the returned ones written; return how many transfers it has."""
    profile = SepaProfile.objects.select_related("institution").get(
        institution=rail_file.institution
    )
    returned = []
    for transfer in message.transfers:
        entry, new = sepa_credit_receive(
            profile=profile,
            rail_file=rail_file,
            credit=credit_of(transfer, message.header.settlement_date),
            at=now,
            refused=Status.RETURNING,
        )
        if new and entry.status == Status.RETURNING:
            returned.append((transfer, entry))
    if returned:
        answer = _return_file(profile, message, returned, now)
        for _, entry in returned:
            inbound_move(
                entry,
                Status.RETURNED,
                "inbound_entry.returned",
                at=now,
                return_file=answer,
                return_trace_number=_return_id(entry),
            )
    return len(message.transfers)


def _return_id(entry: InboundEntry) -> str:
    """The pacs.004's return id (`RtrId`) of a credit, its `returnInfo.traceNumber`."""
    return entry.pk[-15:]


def _return_file(profile, message, returned: list, now: datetime) -> RailFile:
    """TX's pacs.004 of the returned transfers, to the clearing that instructed the pacs.008,
    kept as an outbound rail file to deliver."""
    institution = profile.institution
    rail_file = RailFile(institution=institution)
    content = pacs004.write_return(  # validated against its XSD as it is written
        pacs004.PaymentReturn(
            header=return_header(profile, rail_file.pk, message.header.instructing_agent_bic, now),
            transactions=tuple(
                credit_returned(
                    profile,
                    return_id=_return_id(entry),
                    amount=entry.amount,
                    currency=entry.currency,
                    code=entry.return_code,
                    original=original_transfer(message, transfer),
                )
                for transfer, entry in returned
            ),
        )
    )
    return outbound_kept(
        rail_file,
        rail=Rail.SEPA_CT,
        name=f"{institution.pk}-pacs004-{rail_file.pk}.xml",
        content=content,
        entry_count=len(returned),
    )
