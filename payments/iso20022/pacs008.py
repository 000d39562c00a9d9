"""pacs.008.001.08, the FI to FI customer credit transfer: what a bank in the clearing sends to
move a SEPA Credit Transfer (or a SEPA Instant one) to the creditor's bank.

    Document/FIToFICstmrCdtTrf
      GrpHdr          (interbank.py) MsgId, CreDtTm, NbOfTxs, CtrlSum, TtlIntrBkSttlmAmt,
                      IntrBkSttlmDt, SttlmInf, InstgAgt?, InstdAgt?
      CdtTrfTxInf 1..n
                      PmtId (InstrId?, EndToEndId, TxId), PmtTpInf/SvcLvl/Cd SEPA
                      (+ LclInstrm/Cd INST for SEPA Instant), IntrBkSttlmAmt Ccy=EUR,
                      AccptncDtTm?, ChrgBr SLEV, Dbtr/Nm, DbtrAcct/Id/IBAN, DbtrAgt (BIC),
                      CdtrAgt (BIC), Cdtr/Nm, CdtrAcct/Id/IBAN, RmtInf (Ustrd or Strd/CdtrRefInf)

Between banks both banks are named by their BIC and every transaction has the transaction id
the instructing bank gave it (pacs.002, pacs.004 and camt.056 answer it by that id). The reader
checks NbOfTxs, CtrlSum and the total settlement amount against the transactions, and refuses a
service level other than SEPA. Elements TX does not model (addresses, ultimate parties,
intermediary agents, purposes...) are accepted and not kept.
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
    check_currency,
    check_iban,
    check_text,
    datetime_text,
    parse_amount,
    parse_datetime,
)
from payments.iso20022.interbank import (
    GroupHeader,
    check_header_controls,
    read_header,
    write_header,
)
from payments.iso20022.messages import PACS_008
from payments.iso20022.parties import located, read_account, read_bic, write_account, write_agent
from payments.iso20022.remittance import Remittance, read_remittance, write_remittance

NAME_LIMIT = 70
TOTAL = "TtlIntrBkSttlmAmt"
SEPA = "SEPA"
INSTANT = "INST"


@dataclass(frozen=True, slots=True, kw_only=True)
class InterbankCreditTransfer:
    end_to_end_id: str
    transaction_id: str
    amount: int  # cents
    debtor_name: str
    debtor_iban: str
    debtor_bic: str
    creditor_name: str
    creditor_iban: str
    creditor_bic: str
    instruction_id: str | None = None
    remittance: Remittance | None = None
    instant: bool = False  # SEPA Instant (local instrument INST)
    accepted_at: datetime.datetime | None = None  # AccptncDtTm, SCT Inst's AT-T056
    currency: str = EUR

    def __post_init__(self):
        # Identifiers other banks made are kept as the XSD allows them (Max35Text).
        check_text(self.end_to_end_id, 35, "end-to-end id")
        check_text(self.transaction_id, 35, "transaction id")
        if self.instruction_id is not None:
            check_text(self.instruction_id, 35, "instruction id")
        check_amount(self.amount)
        check_currency(self.currency)
        check_text(self.debtor_name, NAME_LIMIT, "debtor name")
        check_text(self.creditor_name, NAME_LIMIT, "creditor name")
        for name in ("debtor_iban", "creditor_iban"):
            object.__setattr__(self, name, check_iban(getattr(self, name), name))
        for name in ("debtor_bic", "creditor_bic"):
            object.__setattr__(self, name, check_bic(getattr(self, name), name))


@dataclass(frozen=True, slots=True, kw_only=True)
class FIToFICreditTransfer:
    header: GroupHeader
    transfers: tuple[InterbankCreditTransfer, ...]

    def __post_init__(self):
        object.__setattr__(self, "transfers", tuple(self.transfers))
        if not self.transfers:
            raise Iso20022Error("a message has at least one transfer")

    @property
    def total(self) -> int:
        return sum(transfer.amount for transfer in self.transfers)


# --- the writer --------------------------------------------------------------------------------


def write_transfers(message: FIToFICreditTransfer) -> bytes:
    root, body = document(PACS_008)
    write_header(body, message.header, len(message.transfers), message.total, TOTAL)
    for transfer in message.transfers:
        _write_transfer(body, transfer)
    return write(root, PACS_008)


def _write_transfer(body: Element, transfer: InterbankCreditTransfer) -> None:
    item = sub(body, "CdtTrfTxInf")
    identification = sub(item, "PmtId")
    if transfer.instruction_id:
        sub(identification, "InstrId", transfer.instruction_id)
    sub(identification, "EndToEndId", transfer.end_to_end_id)
    sub(identification, "TxId", transfer.transaction_id)
    kind = sub(item, "PmtTpInf")
    sub(kind, "SvcLvl/Cd", SEPA)
    if transfer.instant:
        sub(kind, "LclInstrm/Cd", INSTANT)
    sub(item, "IntrBkSttlmAmt", amount_text(transfer.amount), Ccy=transfer.currency)
    if transfer.accepted_at:
        # To the millisecond: SCT Inst's timeout is counted from this time stamp.
        sub(item, "AccptncDtTm", datetime_text(transfer.accepted_at, milliseconds=True))
    sub(item, "ChrgBr", "SLEV")
    sub(item, "Dbtr/Nm", transfer.debtor_name)
    write_account(item, "DbtrAcct", transfer.debtor_iban)
    write_agent(item, "DbtrAgt", transfer.debtor_bic)
    write_agent(item, "CdtrAgt", transfer.creditor_bic)
    sub(item, "Cdtr/Nm", transfer.creditor_name)
    write_account(item, "CdtrAcct", transfer.creditor_iban)
    write_remittance(item, transfer.remittance)


# --- the reader --------------------------------------------------------------------------------


def read_transfers(data: bytes) -> FIToFICreditTransfer:
    """The transfers in `data`, or an `Iso20022Error`: the document is refused whole."""
    root = read(data, PACS_008)
    body = find(root, PACS_008.root)
    block = find(body, "GrpHdr")
    items = findall(body, "CdtTrfTxInf")
    header = read_header(block, items, PACS_008)
    group_service = text(block, "PmtTpInf/SvcLvl/Cd")
    group_instant = text(block, "PmtTpInf/LclInstrm/Cd") == INSTANT
    transfers = tuple(_read_transfer(item, group_service, group_instant) for item in items)
    message = located(
        block, PACS_008, lambda: FIToFICreditTransfer(header=header, transfers=transfers)
    )
    check_header_controls(block, PACS_008, len(transfers), message.total, TOTAL)
    return message


def _read_transfer(
    item: Element, group_service: str | None, group_instant: bool
) -> InterbankCreditTransfer:
    # The payment type may be given for the whole message (GrpHdr/PmtTpInf) or per transaction.
    service = text(item, "PmtTpInf/SvcLvl/Cd") or group_service
    if service != SEPA:
        raise refusal(item, f"service level {service} is not SEPA", PACS_008)
    instrument = text(item, "PmtTpInf/LclInstrm/Cd")
    instant = instrument == INSTANT if instrument is not None else group_instant
    amount = find(item, "IntrBkSttlmAmt")
    accepted = text(item, "AccptncDtTm")
    return located(
        item,
        PACS_008,
        lambda: InterbankCreditTransfer(
            instruction_id=text(item, "PmtId/InstrId"),
            end_to_end_id=text(item, "PmtId/EndToEndId"),
            transaction_id=required(item, "PmtId/TxId", PACS_008),
            amount=parse_amount(amount.text, "interbank settlement amount"),
            currency=amount.get("Ccy"),
            instant=instant,
            accepted_at=parse_datetime(accepted, "acceptance date and time") if accepted else None,
            debtor_name=required(item, "Dbtr/Nm", PACS_008),
            debtor_iban=read_account(item, "DbtrAcct", PACS_008),
            debtor_bic=read_bic(item, "DbtrAgt", PACS_008),
            creditor_bic=read_bic(item, "CdtrAgt", PACS_008),
            creditor_name=required(item, "Cdtr/Nm", PACS_008),
            creditor_iban=read_account(item, "CdtrAcct", PACS_008),
            remittance=read_remittance(item),
        ),
    )
