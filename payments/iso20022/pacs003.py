"""pacs.003.001.08, the FI to FI customer direct debit: what the creditor's bank sends, through
the clearing, to collect a SEPA Direct Debit (Core or B2B) from the debtor's bank.

    Document/FIToFICstmrDrctDbt
      GrpHdr          (interbank.py) MsgId, CreDtTm, NbOfTxs, CtrlSum, TtlIntrBkSttlmAmt,
                      IntrBkSttlmDt (the due date), SttlmInf, InstgAgt?, InstdAgt?
      DrctDbtTxInf 1..n
                      PmtId (InstrId?, EndToEndId, TxId), PmtTpInf (SvcLvl/Cd SEPA,
                      LclInstrm/Cd CORE|B2B, SeqTp FRST|RCUR|OOFF|FNAL),
                      IntrBkSttlmAmt Ccy=EUR, ChrgBr SLEV,
                      DrctDbtTx (MndtRltdInf (MndtId, DtOfSgntr, AmdmntInd?,
                      AmdmntInfDtls?), CdtrSchmeId),
                      Cdtr/Nm, CdtrAcct/Id/IBAN, CdtrAgt (BIC),
                      Dbtr/Nm, DbtrAcct/Id/IBAN, DbtrAgt (BIC), RmtInf

Between banks each transaction carries its own payment type and creditor identifier (the EPC's
interbank guidelines, EPC114-06 for Core), both banks are named by their BIC and every
transaction has its transaction id. The debtor's bank checks a collection against the mandates
its customer holds by the creditor identifier and the mandate id read here. The reader checks
NbOfTxs, CtrlSum and the total settlement amount against the transactions. A mandate amended
since the last collection carries what the debtor's bank knew (the original mandate id and
debtor account, `mandates.Amendment`), as in a pain.008. Elements TX does not model
(addresses, ultimate parties, pre-notification...) are accepted and not kept.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from payments.iso20022.document import (
    Element,
    document,
    find,
    findall,
    read,
    refusal,
    required,
    sub,
    text,
    write,
)
from payments.iso20022.errors import Iso20022Error
from payments.iso20022.fields import (
    EUR,
    amount_text,
    check_amount,
    check_bic,
    check_creditor_identifier,
    check_currency,
    check_iban,
    check_text,
    parse_amount,
)
from payments.iso20022.interbank import (
    GroupHeader,
    check_header_controls,
    read_header,
    write_header,
)
from payments.iso20022.mandates import (
    Amendment,
    LocalInstrument,
    SequenceType,
    check_local_instrument,
    check_mandate_id,
    check_sequence_type,
    read_amendment,
    read_creditor_scheme_id,
    read_mandate,
    read_payment_type,
    write_creditor_scheme_id,
    write_mandate,
    write_payment_type,
)
from payments.iso20022.messages import PACS_003
from payments.iso20022.parties import located, read_account, read_bic, write_account, write_agent
from payments.iso20022.remittance import Remittance, read_remittance, write_remittance

NAME_LIMIT = 70
TOTAL = "TtlIntrBkSttlmAmt"


@dataclass(frozen=True, slots=True, kw_only=True)
class InterbankDirectDebit:
    end_to_end_id: str
    transaction_id: str
    amount: int  # cents
    local_instrument: LocalInstrument
    sequence_type: SequenceType
    mandate_id: str
    mandate_signed_on: datetime.date
    creditor_id: str  # the SEPA creditor identifier (AT-02)
    creditor_name: str
    creditor_iban: str
    creditor_bic: str
    debtor_name: str
    debtor_iban: str
    debtor_bic: str
    instruction_id: str | None = None
    remittance: Remittance | None = None
    amendment: Amendment | None = None
    currency: str = EUR

    def __post_init__(self):
        # Identifiers other banks made are kept as the XSD allows them (Max35Text).
        check_text(self.end_to_end_id, 35, "end-to-end id")
        check_text(self.transaction_id, 35, "transaction id")
        if self.instruction_id is not None:
            check_text(self.instruction_id, 35, "instruction id")
        check_amount(self.amount)
        check_currency(self.currency)
        check_local_instrument(self.local_instrument)
        check_sequence_type(self.sequence_type)
        check_mandate_id(self.mandate_id)
        object.__setattr__(self, "creditor_id", check_creditor_identifier(self.creditor_id))
        check_text(self.creditor_name, NAME_LIMIT, "creditor name")
        check_text(self.debtor_name, NAME_LIMIT, "debtor name")
        for name in ("debtor_iban", "creditor_iban"):
            object.__setattr__(self, name, check_iban(getattr(self, name), name))
        for name in ("debtor_bic", "creditor_bic"):
            object.__setattr__(self, name, check_bic(getattr(self, name), name))


@dataclass(frozen=True, slots=True, kw_only=True)
class FIToFIDirectDebit:
    header: GroupHeader
    debits: tuple[InterbankDirectDebit, ...]

    def __post_init__(self):
        object.__setattr__(self, "debits", tuple(self.debits))
        if not self.debits:
            raise Iso20022Error("a message has at least one direct debit")

    @property
    def total(self) -> int:
        return sum(debit.amount for debit in self.debits)


# --- the writer --------------------------------------------------------------------------------


def write_debits(message: FIToFIDirectDebit) -> bytes:
    root, body = document(PACS_003)
    write_header(body, message.header, len(message.debits), message.total, TOTAL)
    for debit in message.debits:
        _write_debit(body, debit)
    return write(root, PACS_003)


def _write_debit(body: Element, debit: InterbankDirectDebit) -> None:
    item = sub(body, "DrctDbtTxInf")
    identification = sub(item, "PmtId")
    if debit.instruction_id:
        sub(identification, "InstrId", debit.instruction_id)
    sub(identification, "EndToEndId", debit.end_to_end_id)
    sub(identification, "TxId", debit.transaction_id)
    write_payment_type(item, debit.local_instrument, debit.sequence_type)
    sub(item, "IntrBkSttlmAmt", amount_text(debit.amount), Ccy=debit.currency)
    sub(item, "ChrgBr", "SLEV")
    transaction = write_mandate(item, debit.mandate_id, debit.mandate_signed_on, debit.amendment)
    write_creditor_scheme_id(transaction, debit.creditor_id)
    sub(item, "Cdtr/Nm", debit.creditor_name)
    write_account(item, "CdtrAcct", debit.creditor_iban)
    write_agent(item, "CdtrAgt", debit.creditor_bic)
    sub(item, "Dbtr/Nm", debit.debtor_name)
    write_account(item, "DbtrAcct", debit.debtor_iban)
    write_agent(item, "DbtrAgt", debit.debtor_bic)
    write_remittance(item, debit.remittance)


# --- the reader --------------------------------------------------------------------------------


def read_debits(data: bytes) -> FIToFIDirectDebit:
    """The direct debits in `data`, or an `Iso20022Error`: the document is refused whole."""
    root = read(data, PACS_003)
    body = find(root, PACS_003.root)
    block = find(body, "GrpHdr")
    items = findall(body, "DrctDbtTxInf")
    header = read_header(block, items, PACS_003)
    debits = tuple(_read_debit(item) for item in items)
    message = located(block, PACS_003, lambda: FIToFIDirectDebit(header=header, debits=debits))
    check_header_controls(block, PACS_003, len(debits), message.total, TOTAL)
    return message


def _read_debit(item: Element) -> InterbankDirectDebit:
    instrument, sequence = read_payment_type(item, PACS_003)
    mandate_id, signed_on = read_mandate(item, PACS_003)
    amendment = read_amendment(item, PACS_003)
    creditor_id = read_creditor_scheme_id(find(item, "DrctDbtTx"), PACS_003)
    if creditor_id is None:
        raise refusal(find(item, "DrctDbtTx"), "CdtrSchmeId is missing", PACS_003)
    amount = find(item, "IntrBkSttlmAmt")
    return located(
        item,
        PACS_003,
        lambda: InterbankDirectDebit(
            instruction_id=text(item, "PmtId/InstrId"),
            end_to_end_id=text(item, "PmtId/EndToEndId"),
            transaction_id=required(item, "PmtId/TxId", PACS_003),
            local_instrument=instrument,
            sequence_type=sequence,
            amount=parse_amount(amount.text, "interbank settlement amount"),
            currency=amount.get("Ccy"),
            mandate_id=mandate_id,
            mandate_signed_on=signed_on,
            amendment=amendment,
            creditor_id=creditor_id,
            creditor_name=required(item, "Cdtr/Nm", PACS_003),
            creditor_iban=read_account(item, "CdtrAcct", PACS_003),
            creditor_bic=read_bic(item, "CdtrAgt", PACS_003),
            debtor_name=required(item, "Dbtr/Nm", PACS_003),
            debtor_iban=read_account(item, "DbtrAcct", PACS_003),
            debtor_bic=read_bic(item, "DbtrAgt", PACS_003),
            remittance=read_remittance(item),
        ),
    )
