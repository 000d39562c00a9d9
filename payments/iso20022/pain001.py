"""pain.001.001.09, the customer credit transfer initiation: what a fintech on a partner bank
sends it to pay out by SEPA Credit Transfer (or SEPA Instant).

    Document/CstmrCdtTrfInitn
      GrpHdr        MsgId, CreDtTm, NbOfTxs, CtrlSum, InitgPty/Nm
      PmtInf 1..n   one per requested execution date and debtor account:
                    PmtInfId, PmtMtd TRF, NbOfTxs, CtrlSum,
                    PmtTpInf/SvcLvl/Cd SEPA (+ LclInstrm/Cd INST for SEPA Instant),
                    ReqdExctnDt/Dt, Dbtr/Nm, DbtrAcct/Id/IBAN, DbtrAgt (BIC or NOTPROVIDED),
                    ChrgBr SLEV
        CdtTrfTxInf 1..n
                    PmtId/EndToEndId, Amt/InstdAmt Ccy=EUR, CdtrAgt (BIC, optional),
                    Cdtr/Nm, CdtrAcct/Id/IBAN, RmtInf (Ustrd or Strd/CdtrRefInf)

The writer computes the counts and control sums; the reader checks them (like a NACHA batch
control) and refuses a document whose NbOfTxs or CtrlSum is not what its transactions add up
to. Elements TX does not model (postal addresses, ultimate parties, purpose...) are accepted by
the reader and not kept.
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
    check_currency,
    check_iban,
    check_sepa_id,
    check_text,
    parse_amount,
    parse_date,
    parse_datetime,
)
from payments.iso20022.initiation import write_group_header
from payments.iso20022.messages import PAIN_001
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
class CreditTransfer:
    end_to_end_id: str
    amount: int  # cents
    creditor_name: str
    creditor_iban: str
    creditor_bic: str | None = None
    remittance: Remittance | None = None
    currency: str = EUR

    def __post_init__(self):
        check_sepa_id(self.end_to_end_id, "end-to-end id")
        check_amount(self.amount)
        check_currency(self.currency)
        check_text(self.creditor_name, NAME_LIMIT, "creditor name")
        object.__setattr__(self, "creditor_iban", check_iban(self.creditor_iban, "creditor IBAN"))
        if self.creditor_bic is not None:
            object.__setattr__(self, "creditor_bic", check_bic(self.creditor_bic, "creditor BIC"))


@dataclass(frozen=True, slots=True, kw_only=True)
class PaymentInstruction:
    payment_information_id: str
    requested_execution_date: datetime.date
    debtor_name: str
    debtor_iban: str
    transfers: tuple[CreditTransfer, ...]
    debtor_bic: str | None = None
    instant: bool = False  # SEPA Instant (local instrument INST)

    def __post_init__(self):
        check_sepa_id(self.payment_information_id, "payment information id")
        check_text(self.debtor_name, NAME_LIMIT, "debtor name")
        object.__setattr__(self, "debtor_iban", check_iban(self.debtor_iban, "debtor IBAN"))
        if self.debtor_bic is not None:
            object.__setattr__(self, "debtor_bic", check_bic(self.debtor_bic, "debtor BIC"))
        object.__setattr__(self, "transfers", tuple(self.transfers))
        if not self.transfers:
            raise Iso20022Error("a payment instruction has at least one transfer")

    @property
    def control_sum(self) -> int:
        return sum(transfer.amount for transfer in self.transfers)


@dataclass(frozen=True, slots=True, kw_only=True)
class CreditTransferInitiation:
    message_id: str
    created_at: datetime.datetime
    initiating_party: str
    payments: tuple[PaymentInstruction, ...]

    def __post_init__(self):
        check_sepa_id(self.message_id, "message id")
        check_text(self.initiating_party, NAME_LIMIT, "initiating party name")
        object.__setattr__(self, "payments", tuple(self.payments))
        if not self.payments:
            raise Iso20022Error("a message has at least one payment instruction")

    def transfers(self) -> list[CreditTransfer]:
        return [transfer for payment in self.payments for transfer in payment.transfers]

    @property
    def control_sum(self) -> int:
        return sum(payment.control_sum for payment in self.payments)


# --- the writer --------------------------------------------------------------------------------


def write_initiation(initiation: CreditTransferInitiation) -> bytes:
    root, message = document(PAIN_001)
    write_group_header(
        message,
        message_id=initiation.message_id,
        created_at=initiation.created_at,
        count=len(initiation.transfers()),
        control_sum=initiation.control_sum,
        initiating_party=initiation.initiating_party,
    )
    for payment in initiation.payments:
        _write_payment(message, payment)
    return write(root, PAIN_001)


def _write_payment(message: Element, payment: PaymentInstruction) -> None:
    block = sub(message, "PmtInf")
    sub(block, "PmtInfId", payment.payment_information_id)
    sub(block, "PmtMtd", "TRF")
    sub(block, "NbOfTxs", str(len(payment.transfers)))
    sub(block, "CtrlSum", amount_text(payment.control_sum))
    kind = sub(block, "PmtTpInf")
    sub(kind, "SvcLvl/Cd", "SEPA")
    if payment.instant:
        sub(kind, "LclInstrm/Cd", "INST")
    sub(block, "ReqdExctnDt/Dt", payment.requested_execution_date.isoformat())
    sub(block, "Dbtr/Nm", payment.debtor_name)
    write_account(block, "DbtrAcct", payment.debtor_iban)
    write_agent(block, "DbtrAgt", payment.debtor_bic)
    sub(block, "ChrgBr", "SLEV")
    for transfer in payment.transfers:
        item = sub(block, "CdtTrfTxInf")
        sub(item, "PmtId/EndToEndId", transfer.end_to_end_id)
        sub(item, "Amt/InstdAmt", amount_text(transfer.amount), Ccy=transfer.currency)
        if transfer.creditor_bic:
            write_agent(item, "CdtrAgt", transfer.creditor_bic)
        sub(item, "Cdtr/Nm", transfer.creditor_name)
        write_account(item, "CdtrAcct", transfer.creditor_iban)
        write_remittance(item, transfer.remittance)


# --- the reader --------------------------------------------------------------------------------


def read_initiation(data: bytes) -> CreditTransferInitiation:
    """The initiation in `data`, or an `Iso20022Error`: the document is refused whole."""
    root = read(data, PAIN_001)
    message = find(root, PAIN_001.root)
    header = find(message, "GrpHdr")
    payments = tuple(_read_payment(block) for block in findall(message, "PmtInf"))
    initiation = located(
        header,
        PAIN_001,
        lambda: CreditTransferInitiation(
            message_id=text(header, "MsgId"),
            created_at=parse_datetime(text(header, "CreDtTm"), "creation date and time"),
            initiating_party=required(header, "InitgPty/Nm", PAIN_001),
            payments=payments,
        ),
    )
    check_controls(header, PAIN_001, len(initiation.transfers()), initiation.control_sum)
    return initiation


def _read_payment(block: Element) -> PaymentInstruction:
    transfers = tuple(_read_transfer(item) for item in findall(block, "CdtTrfTxInf"))
    method = text(block, "PmtMtd")
    if method != "TRF":
        raise refusal(find(block, "PmtMtd"), f"payment method {method} is not TRF", PAIN_001)
    date = text(block, "ReqdExctnDt/Dt")
    if date is None:
        raise refusal(block, "ReqdExctnDt/Dt is missing (SEPA executes on a date)", PAIN_001)
    payment = located(
        block,
        PAIN_001,
        lambda: PaymentInstruction(
            payment_information_id=text(block, "PmtInfId"),
            requested_execution_date=parse_date(date, "requested execution date"),
            debtor_name=required(block, "Dbtr/Nm", PAIN_001),
            debtor_iban=read_account(block, "DbtrAcct", PAIN_001),
            debtor_bic=read_agent(block, "DbtrAgt"),
            instant=text(block, "PmtTpInf/LclInstrm/Cd") == "INST",
            transfers=transfers,
        ),
    )
    check_controls(block, PAIN_001, len(transfers), payment.control_sum)
    return payment


def _read_transfer(item: Element) -> CreditTransfer:
    amount = find(item, "Amt/InstdAmt")
    if amount is None:
        raise refusal(item, "Amt/InstdAmt is missing (SEPA instructs an amount)", PAIN_001)
    return located(
        item,
        PAIN_001,
        lambda: CreditTransfer(
            end_to_end_id=text(item, "PmtId/EndToEndId"),
            amount=parse_amount(amount.text, "instructed amount"),
            currency=amount.get("Ccy"),
            creditor_bic=read_agent(item, "CdtrAgt"),
            creditor_name=required(item, "Cdtr/Nm", PAIN_001),
            creditor_iban=read_account(item, "CdtrAcct", PAIN_001),
            remittance=read_remittance(item),
        ),
    )
