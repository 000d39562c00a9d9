"""The group header the interbank messages share (pacs.008, pacs.003, pacs.004): the message id
and creation time, the number of transactions and their total settlement amount, the
interbank settlement date and how the money settles, and the instructing and instructed banks.

    GrpHdr  MsgId, CreDtTm, NbOfTxs, CtrlSum?, TtlIntrBkSttlmAmt Ccy=EUR (TtlRtrdIntrBkSttlmAmt
            in pacs.004), IntrBkSttlmDt, SttlmInf (SttlmMtd CLRG|INDA|INGA, ClrSys/Prtry?),
            InstgAgt?, InstdAgt? (by BIC)

SEPA settles through a clearing system (CLRG, the clearing system named by its proprietary
code: ST2, RT1, TIPS...) or between the banks' accounts (INDA, INGA); COVE is not SEPA's and is
refused (the EPC's interbank guidelines, EPC115-06 for SCT). The writer puts the settlement date
in the header; the reader takes it from there or, where a bank put it in each transaction
(which SCT Inst does), from the transactions, all the same day.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from payments.iso20022.controls import check_controls
from payments.iso20022.document import Element, find, refusal, sub, text
from payments.iso20022.errors import Iso20022Error
from payments.iso20022.fields import (
    EUR,
    amount_text,
    check_bic,
    check_text,
    datetime_text,
    parse_date,
    parse_datetime,
)
from payments.iso20022.messages import MessageType
from payments.iso20022.parties import located, read_agent

SETTLEMENT_METHODS = frozenset({"CLRG", "INDA", "INGA"})


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupHeader:
    message_id: str
    created_at: datetime.datetime
    settlement_date: datetime.date
    settlement_method: str = "CLRG"
    clearing_system: str | None = None  # ClrSys/Prtry: ST2, RT1, TIPS...
    instructing_agent_bic: str | None = None
    instructed_agent_bic: str | None = None

    def __post_init__(self):
        check_text(self.message_id, 35, "message id")
        if self.settlement_method not in SETTLEMENT_METHODS:
            raise Iso20022Error(
                f"settlement method {self.settlement_method!r} is not SEPA's (CLRG, INDA, INGA)"
            )
        if self.clearing_system is not None:
            check_text(self.clearing_system, 35, "clearing system")
        for name in ("instructing_agent_bic", "instructed_agent_bic"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, check_bic(getattr(self, name), name))


def write_header(
    message: Element, header: GroupHeader, count: int, total: int, total_tag: str
) -> Element:
    block = sub(message, "GrpHdr")
    sub(block, "MsgId", header.message_id)
    sub(block, "CreDtTm", datetime_text(header.created_at))
    sub(block, "NbOfTxs", str(count))
    sub(block, "CtrlSum", amount_text(total))
    sub(block, total_tag, amount_text(total), Ccy=EUR)
    sub(block, "IntrBkSttlmDt", header.settlement_date.isoformat())
    settlement = sub(block, "SttlmInf")
    sub(settlement, "SttlmMtd", header.settlement_method)
    if header.clearing_system:
        sub(settlement, "ClrSys/Prtry", header.clearing_system)
    if header.instructing_agent_bic:
        sub(block, "InstgAgt/FinInstnId/BICFI", header.instructing_agent_bic)
    if header.instructed_agent_bic:
        sub(block, "InstdAgt/FinInstnId/BICFI", header.instructed_agent_bic)
    return block


def read_header(block: Element, items: list[Element], message: MessageType) -> GroupHeader:
    return located(
        block,
        message,
        lambda: GroupHeader(
            message_id=text(block, "MsgId"),
            created_at=parse_datetime(text(block, "CreDtTm"), "creation date and time"),
            settlement_date=_settlement_date(block, items, message),
            settlement_method=text(block, "SttlmInf/SttlmMtd"),
            clearing_system=text(block, "SttlmInf/ClrSys/Prtry")
            or text(block, "SttlmInf/ClrSys/Cd"),
            instructing_agent_bic=read_agent(block, "InstgAgt"),
            instructed_agent_bic=read_agent(block, "InstdAgt"),
        ),
    )


def _settlement_date(block: Element, items: list[Element], message: MessageType) -> datetime.date:
    stated = text(block, "IntrBkSttlmDt")
    if stated is not None:
        day = parse_date(stated, "interbank settlement date")
    else:
        days = {text(item, "IntrBkSttlmDt") for item in items}
        if None in days or not days:
            raise refusal(
                block, "IntrBkSttlmDt is missing (in the header or in every transaction)", message
            )
        if len(days) > 1:
            raise refusal(
                block, f"the transactions settle on different days: {sorted(days)}", message
            )
        day = parse_date(days.pop(), "interbank settlement date")
    for item in items:
        own = text(item, "IntrBkSttlmDt")
        if own is not None and parse_date(own, "interbank settlement date") != day:
            raise refusal(
                find(item, "IntrBkSttlmDt"),
                f"the transaction settles on {own}, the message on {day.isoformat()}",
                message,
            )
    return day


def check_header_controls(
    block: Element, message: MessageType, count: int, total: int, total_tag: str
) -> None:
    check_controls(block, message, count, total, sums=("CtrlSum", total_tag))
