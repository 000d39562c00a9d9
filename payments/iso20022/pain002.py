"""pain.002.001.10, the customer payment status report: the bank's answer to a pain.001 (or
pain.008), for the whole message, a payment instruction or a transaction.

    Document/CstmrPmtStsRpt
      GrpHdr              MsgId, CreDtTm
      OrgnlGrpInfAndSts   OrgnlMsgId, OrgnlMsgNmId (pain.001.001.09...), GrpSts?, StsRsnInf*
      OrgnlPmtInfAndSts*  OrgnlPmtInfId, PmtInfSts?, StsRsnInf*,
        TxInfAndSts*      OrgnlEndToEndId, TxSts, StsRsnInf*, AcctSvcrRef?

Statuses (`codes.STATUSES`): ACCP, ACSC, ACSP... accepted; RJCT rejected; PART (a group or
block partly accepted); PDNG pending. A rejected message, block or transaction carries its
reasons (AC01, AC04, AC06, AG01, AM04, MS03...). Codes are kept as sent: a status or reason this
library does not know is read, not refused (a reject is a fact to book).
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
    required,
    sub,
    text,
    write,
)
from payments.iso20022.fields import check_text, datetime_text, parse_datetime
from payments.iso20022.messages import PAIN_002
from payments.iso20022.parties import located
from payments.iso20022.status_reasons import StatusReason, read_reasons, write_reasons


def _check_status(status: str | None, what: str) -> None:
    if status is not None:
        check_text(status, 4, what)


@dataclass(frozen=True, slots=True, kw_only=True)
class TransactionStatus:
    original_end_to_end_id: str
    status: str
    reasons: tuple[StatusReason, ...] = ()
    account_servicer_reference: str | None = None

    def __post_init__(self):
        check_text(self.original_end_to_end_id, 35, "original end-to-end id")
        _check_status(self.status, "transaction status")
        object.__setattr__(self, "reasons", tuple(self.reasons))


@dataclass(frozen=True, slots=True, kw_only=True)
class PaymentStatus:
    original_payment_information_id: str
    status: str | None = None
    reasons: tuple[StatusReason, ...] = ()
    transactions: tuple[TransactionStatus, ...] = ()

    def __post_init__(self):
        check_text(self.original_payment_information_id, 35, "original payment information id")
        _check_status(self.status, "payment information status")
        object.__setattr__(self, "reasons", tuple(self.reasons))
        object.__setattr__(self, "transactions", tuple(self.transactions))


@dataclass(frozen=True, slots=True, kw_only=True)
class PaymentStatusReport:
    message_id: str
    created_at: datetime.datetime
    original_message_id: str
    original_message_type: str  # pain.001.001.09 or pain.008.001.08
    group_status: str | None = None
    reasons: tuple[StatusReason, ...] = ()
    payments: tuple[PaymentStatus, ...] = ()

    def __post_init__(self):
        check_text(self.message_id, 35, "message id")
        check_text(self.original_message_id, 35, "original message id")
        check_text(self.original_message_type, 35, "original message name")
        _check_status(self.group_status, "group status")
        object.__setattr__(self, "reasons", tuple(self.reasons))
        object.__setattr__(self, "payments", tuple(self.payments))

    def transactions(self) -> list[TransactionStatus]:
        return [each for payment in self.payments for each in payment.transactions]


# --- the writer --------------------------------------------------------------------------------


def write_status_report(report: PaymentStatusReport) -> bytes:
    root, message = document(PAIN_002)
    header = sub(message, "GrpHdr")
    sub(header, "MsgId", report.message_id)
    sub(header, "CreDtTm", datetime_text(report.created_at))
    group = sub(message, "OrgnlGrpInfAndSts")
    sub(group, "OrgnlMsgId", report.original_message_id)
    sub(group, "OrgnlMsgNmId", report.original_message_type)
    if report.group_status:
        sub(group, "GrpSts", report.group_status)
    write_reasons(group, report.reasons)
    for payment in report.payments:
        block = sub(message, "OrgnlPmtInfAndSts")
        sub(block, "OrgnlPmtInfId", payment.original_payment_information_id)
        if payment.status:
            sub(block, "PmtInfSts", payment.status)
        write_reasons(block, payment.reasons)
        for transaction in payment.transactions:
            item = sub(block, "TxInfAndSts")
            sub(item, "OrgnlEndToEndId", transaction.original_end_to_end_id)
            sub(item, "TxSts", transaction.status)
            write_reasons(item, transaction.reasons)
            if transaction.account_servicer_reference:
                sub(item, "AcctSvcrRef", transaction.account_servicer_reference)
    return write(root, PAIN_002)


# --- the reader --------------------------------------------------------------------------------


def read_status_report(data: bytes) -> PaymentStatusReport:
    """The report in `data`, or an `Iso20022Error`: the document is refused whole."""
    root = read(data, PAIN_002)
    message = find(root, PAIN_002.root)
    header = find(message, "GrpHdr")
    group = find(message, "OrgnlGrpInfAndSts")
    payments = tuple(_read_payment(block) for block in findall(message, "OrgnlPmtInfAndSts"))
    return located(
        group,
        PAIN_002,
        lambda: PaymentStatusReport(
            message_id=text(header, "MsgId"),
            created_at=parse_datetime(text(header, "CreDtTm"), "creation date and time"),
            original_message_id=text(group, "OrgnlMsgId"),
            original_message_type=text(group, "OrgnlMsgNmId"),
            group_status=text(group, "GrpSts"),
            reasons=read_reasons(group),
            payments=payments,
        ),
    )


def _read_payment(block: Element) -> PaymentStatus:
    return located(
        block,
        PAIN_002,
        lambda: PaymentStatus(
            original_payment_information_id=text(block, "OrgnlPmtInfId"),
            status=text(block, "PmtInfSts"),
            reasons=read_reasons(block),
            transactions=tuple(_read_transaction(item) for item in findall(block, "TxInfAndSts")),
        ),
    )


def _read_transaction(item: Element) -> TransactionStatus:
    # A transaction's status answers one of TX's transactions: without the end-to-end id TX gave
    # it, or without a status, it answers nothing TX can match.
    return located(
        item,
        PAIN_002,
        lambda: TransactionStatus(
            original_end_to_end_id=required(item, "OrgnlEndToEndId", PAIN_002),
            status=required(item, "TxSts", PAIN_002),
            reasons=read_reasons(item),
            account_servicer_reference=text(item, "AcctSvcrRef"),
        ),
    )
