"""pain.008.001.08, the customer direct debit initiation: what a fintech on a partner bank sends
it to collect by SEPA Direct Debit (Core or B2B) under its customers' mandates.

    Document/CstmrDrctDbtInitn
      GrpHdr        MsgId, CreDtTm, NbOfTxs, CtrlSum, InitgPty/Nm
      PmtInf 1..n   one per requested collection date, creditor account, local instrument and
                    sequence type: PmtInfId, PmtMtd DD, NbOfTxs, CtrlSum,
                    PmtTpInf (SvcLvl/Cd SEPA, LclInstrm/Cd CORE|B2B, SeqTp FRST|RCUR|OOFF|FNAL),
                    ReqdColltnDt, Cdtr/Nm, CdtrAcct/Id/IBAN, CdtrAgt (BIC or NOTPROVIDED),
                    ChrgBr SLEV, CdtrSchmeId (the SEPA creditor identifier)
        DrctDbtTxInf 1..n
                    PmtId/EndToEndId, InstdAmt Ccy=EUR,
                    DrctDbtTx/MndtRltdInf (MndtId, DtOfSgntr), DbtrAgt (BIC or NOTPROVIDED),
                    Dbtr/Nm, DbtrAcct/Id/IBAN, RmtInf (Ustrd or Strd/CdtrRefInf)

The writer computes the counts and control sums; the reader checks them and refuses a document
whose NbOfTxs or CtrlSum is not what its debits add up to. The creditor identifier is written
in the block; the reader takes it from the block or, where the creditor put it in each
transaction (`DrctDbtTx/CdtrSchmeId`, which the EPC allows), from there, all of them the same.
The amendment details TX writes (`OrgnlMndtId`, `OrgnlDbtrAcct`) are read back; other
elements TX does not model (addresses, ultimate parties, purposes...) are
accepted and not kept.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from payments.iso20022.controls import check_controls
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
    check_sepa_id,
    check_text,
    parse_amount,
    parse_date,
    parse_datetime,
)
from payments.iso20022.initiation import write_group_header
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
from payments.iso20022.messages import PAIN_008
from payments.iso20022.parties import (
    located,
    read_account,
    read_agent,
    write_account,
    write_agent,
)
from payments.iso20022.remittance import Remittance, read_remittance, write_remittance

NAME_LIMIT = 70  # the EPC's limit of a party's name (the XSD's Max140Text allows more)


@dataclass(frozen=True, slots=True, kw_only=True)
class DirectDebit:
    end_to_end_id: str
    amount: int  # cents
    mandate_id: str
    mandate_signed_on: datetime.date
    debtor_name: str
    debtor_iban: str
    debtor_bic: str | None = None
    remittance: Remittance | None = None
    amendment: Amendment | None = None
    currency: str = EUR

    def __post_init__(self):
        check_sepa_id(self.end_to_end_id, "end-to-end id")
        check_amount(self.amount)
        check_currency(self.currency)
        check_mandate_id(self.mandate_id)
        check_text(self.debtor_name, NAME_LIMIT, "debtor name")
        object.__setattr__(self, "debtor_iban", check_iban(self.debtor_iban, "debtor IBAN"))
        if self.debtor_bic is not None:
            object.__setattr__(self, "debtor_bic", check_bic(self.debtor_bic, "debtor BIC"))


@dataclass(frozen=True, slots=True, kw_only=True)
class CollectionInstruction:
    payment_information_id: str
    requested_collection_date: datetime.date
    local_instrument: LocalInstrument
    sequence_type: SequenceType
    creditor_name: str
    creditor_iban: str
    creditor_id: str  # the SEPA creditor identifier (AT-02)
    debits: tuple[DirectDebit, ...]
    creditor_bic: str | None = None

    def __post_init__(self):
        check_sepa_id(self.payment_information_id, "payment information id")
        check_local_instrument(self.local_instrument)
        check_sequence_type(self.sequence_type)
        check_text(self.creditor_name, NAME_LIMIT, "creditor name")
        object.__setattr__(self, "creditor_iban", check_iban(self.creditor_iban, "creditor IBAN"))
        object.__setattr__(self, "creditor_id", check_creditor_identifier(self.creditor_id))
        if self.creditor_bic is not None:
            object.__setattr__(self, "creditor_bic", check_bic(self.creditor_bic, "creditor BIC"))
        object.__setattr__(self, "debits", tuple(self.debits))
        if not self.debits:
            raise Iso20022Error("a collection instruction has at least one direct debit")

    @property
    def control_sum(self) -> int:
        return sum(debit.amount for debit in self.debits)


@dataclass(frozen=True, slots=True, kw_only=True)
class DirectDebitInitiation:
    message_id: str
    created_at: datetime.datetime
    initiating_party: str
    payments: tuple[CollectionInstruction, ...]

    def __post_init__(self):
        check_sepa_id(self.message_id, "message id")
        check_text(self.initiating_party, NAME_LIMIT, "initiating party name")
        object.__setattr__(self, "payments", tuple(self.payments))
        if not self.payments:
            raise Iso20022Error("a message has at least one collection instruction")

    def debits(self) -> list[DirectDebit]:
        return [debit for payment in self.payments for debit in payment.debits]

    @property
    def control_sum(self) -> int:
        return sum(payment.control_sum for payment in self.payments)


# --- the writer --------------------------------------------------------------------------------


def write_initiation(initiation: DirectDebitInitiation) -> bytes:
    root, message = document(PAIN_008)
    write_group_header(
        message,
        message_id=initiation.message_id,
        created_at=initiation.created_at,
        count=len(initiation.debits()),
        control_sum=initiation.control_sum,
        initiating_party=initiation.initiating_party,
    )
    for payment in initiation.payments:
        _write_payment(message, payment)
    return write(root, PAIN_008)


def _write_payment(message: Element, payment: CollectionInstruction) -> None:
    block = sub(message, "PmtInf")
    sub(block, "PmtInfId", payment.payment_information_id)
    sub(block, "PmtMtd", "DD")
    sub(block, "NbOfTxs", str(len(payment.debits)))
    sub(block, "CtrlSum", amount_text(payment.control_sum))
    write_payment_type(block, payment.local_instrument, payment.sequence_type)
    sub(block, "ReqdColltnDt", payment.requested_collection_date.isoformat())
    sub(block, "Cdtr/Nm", payment.creditor_name)
    write_account(block, "CdtrAcct", payment.creditor_iban)
    write_agent(block, "CdtrAgt", payment.creditor_bic)
    sub(block, "ChrgBr", "SLEV")
    write_creditor_scheme_id(block, payment.creditor_id)
    for debit in payment.debits:
        item = sub(block, "DrctDbtTxInf")
        sub(item, "PmtId/EndToEndId", debit.end_to_end_id)
        sub(item, "InstdAmt", amount_text(debit.amount), Ccy=debit.currency)
        write_mandate(item, debit.mandate_id, debit.mandate_signed_on, debit.amendment)
        write_agent(item, "DbtrAgt", debit.debtor_bic)
        sub(item, "Dbtr/Nm", debit.debtor_name)
        write_account(item, "DbtrAcct", debit.debtor_iban)
        write_remittance(item, debit.remittance)


# --- the reader --------------------------------------------------------------------------------


def read_initiation(data: bytes) -> DirectDebitInitiation:
    """The initiation in `data`, or an `Iso20022Error`: the document is refused whole."""
    root = read(data, PAIN_008)
    message = find(root, PAIN_008.root)
    header = find(message, "GrpHdr")
    payments = tuple(_read_payment(block) for block in findall(message, "PmtInf"))
    initiation = located(
        header,
        PAIN_008,
        lambda: DirectDebitInitiation(
            message_id=text(header, "MsgId"),
            created_at=parse_datetime(text(header, "CreDtTm"), "creation date and time"),
            initiating_party=required(header, "InitgPty/Nm", PAIN_008),
            payments=payments,
        ),
    )
    check_controls(header, PAIN_008, len(initiation.debits()), initiation.control_sum)
    return initiation


def _read_payment(block: Element) -> CollectionInstruction:
    items = findall(block, "DrctDbtTxInf")
    debits = tuple(_read_debit(item) for item in items)
    # PmtMtd is DD: the XSD allows nothing else.
    instrument, sequence = read_payment_type(block, PAIN_008)
    creditor_id = _creditor_id(block, items)
    payment = located(
        block,
        PAIN_008,
        lambda: CollectionInstruction(
            payment_information_id=text(block, "PmtInfId"),
            requested_collection_date=parse_date(
                text(block, "ReqdColltnDt"), "requested collection date"
            ),
            local_instrument=instrument,
            sequence_type=sequence,
            creditor_name=required(block, "Cdtr/Nm", PAIN_008),
            creditor_iban=read_account(block, "CdtrAcct", PAIN_008),
            creditor_bic=read_agent(block, "CdtrAgt"),
            creditor_id=creditor_id,
            debits=debits,
        ),
    )
    check_controls(block, PAIN_008, len(debits), payment.control_sum)
    return payment


def _creditor_id(block: Element, items: list[Element]) -> str:
    """The block's creditor identifier, or the one every transaction states; a transaction that
    states another than the block's (or than the others') is refused."""
    found = read_creditor_scheme_id(block, PAIN_008)
    for item in items:
        transaction = find(item, "DrctDbtTx")
        own = None if transaction is None else read_creditor_scheme_id(transaction, PAIN_008)
        if own is None:
            if found is None:
                raise refusal(item, "CdtrSchmeId is missing (in the block or here)", PAIN_008)
            continue
        if found is not None and own != found:
            raise refusal(item, f"creditor identifier {own} is not the block's ({found})", PAIN_008)
        found = own
    if found is None:
        raise refusal(block, "CdtrSchmeId is missing", PAIN_008)
    return found


def _read_debit(item: Element) -> DirectDebit:
    amount = find(item, "InstdAmt")
    mandate_id, signed_on = read_mandate(item, PAIN_008)
    amendment = read_amendment(item, PAIN_008)
    return located(
        item,
        PAIN_008,
        lambda: DirectDebit(
            end_to_end_id=text(item, "PmtId/EndToEndId"),
            amount=parse_amount(amount.text, "instructed amount"),
            currency=amount.get("Ccy"),
            mandate_id=mandate_id,
            mandate_signed_on=signed_on,
            debtor_bic=read_agent(item, "DbtrAgt"),
            debtor_name=required(item, "Dbtr/Nm", PAIN_008),
            debtor_iban=read_account(item, "DbtrAcct", PAIN_008),
            remittance=read_remittance(item),
            amendment=amendment,
        ),
    )
