"""pacs.002.001.10, the FI to FI payment status report: one bank's answer to another's pacs.008
or pacs.003 (a reject, or for SEPA Instant the creditor bank's acceptance or reject), for the
whole message and per transaction.

    Document/FIToFIPmtStsRpt
      GrpHdr              MsgId, CreDtTm, InstgAgt?, InstdAgt? (by BIC)
      OrgnlGrpInfAndSts   OrgnlMsgId, OrgnlMsgNmId (pacs.008.001.08...), OrgnlNbOfTxs?,
                          OrgnlCtrlSum?, GrpSts?, StsRsnInf*, NbOfTxsPerSts*
      TxInfAndSts*        StsId?, OrgnlInstrId?, OrgnlEndToEndId, OrgnlTxId, TxSts, StsRsnInf*,
                          AccptncDtTm?, OrgnlTxRef (IntrBkSttlmAmt Ccy=EUR?, IntrBkSttlmDt?)

The EPC's interbank guidelines give a SEPA status report one original group; the reader reads
the first and refuses a report with more. What adds up is checked: the transactions a report
lists are no more than the original count it states; the counts per status (`NbOfTxsPerSts`,
accepted and not kept) add up to that count and, where each states its sum, to the original
control sum; no status lists more transactions than its count. Codes are kept as sent; a status
or reason this library does not know is read, not refused.
"""

from __future__ import annotations

import datetime
from collections import Counter
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
    check_text,
    datetime_text,
    parse_amount,
    parse_date,
    parse_datetime,
)
from payments.iso20022.messages import PACS_002
from payments.iso20022.parties import located, read_agent
from payments.iso20022.status_reasons import StatusReason, read_reasons, write_reasons


def _check_optional(value: str | None, limit: int, what: str) -> None:
    if value is not None:
        check_text(value, limit, what)


@dataclass(frozen=True, slots=True, kw_only=True)
class InterbankTransactionStatus:
    original_end_to_end_id: str
    original_transaction_id: str
    status: str
    reasons: tuple[StatusReason, ...] = ()
    status_id: str | None = None
    original_instruction_id: str | None = None
    accepted_at: datetime.datetime | None = None
    original_amount: int | None = None  # cents, OrgnlTxRef/IntrBkSttlmAmt
    original_settlement_date: datetime.date | None = None

    def __post_init__(self):
        check_text(self.original_end_to_end_id, 35, "original end-to-end id")
        check_text(self.original_transaction_id, 35, "original transaction id")
        check_text(self.status, 4, "transaction status")
        _check_optional(self.status_id, 35, "status id")
        _check_optional(self.original_instruction_id, 35, "original instruction id")
        if self.original_amount is not None:
            check_amount(self.original_amount, "original amount")
        object.__setattr__(self, "reasons", tuple(self.reasons))


@dataclass(frozen=True, slots=True, kw_only=True)
class InterbankStatusReport:
    message_id: str
    created_at: datetime.datetime
    original_message_id: str
    original_message_type: str  # pacs.008.001.08 or pacs.003.001.08
    group_status: str | None = None
    reasons: tuple[StatusReason, ...] = ()
    transactions: tuple[InterbankTransactionStatus, ...] = ()
    original_count: int | None = None
    original_control_sum: int | None = None  # cents
    instructing_agent_bic: str | None = None
    instructed_agent_bic: str | None = None

    def __post_init__(self):
        check_text(self.message_id, 35, "message id")
        check_text(self.original_message_id, 35, "original message id")
        check_text(self.original_message_type, 35, "original message name")
        _check_optional(self.group_status, 4, "group status")
        object.__setattr__(self, "reasons", tuple(self.reasons))
        object.__setattr__(self, "transactions", tuple(self.transactions))
        for name in ("instructing_agent_bic", "instructed_agent_bic"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, check_bic(getattr(self, name), name))
        if self.original_count is not None and len(self.transactions) > self.original_count:
            raise Iso20022Error(
                f"the report answers {len(self.transactions)} transactions of an original "
                f"message of {self.original_count}"
            )


# --- the writer --------------------------------------------------------------------------------


def write_status_report(report: InterbankStatusReport) -> bytes:
    root, message = document(PACS_002)
    header = sub(message, "GrpHdr")
    sub(header, "MsgId", report.message_id)
    sub(header, "CreDtTm", datetime_text(report.created_at))
    if report.instructing_agent_bic:
        sub(header, "InstgAgt/FinInstnId/BICFI", report.instructing_agent_bic)
    if report.instructed_agent_bic:
        sub(header, "InstdAgt/FinInstnId/BICFI", report.instructed_agent_bic)
    group = sub(message, "OrgnlGrpInfAndSts")
    sub(group, "OrgnlMsgId", report.original_message_id)
    sub(group, "OrgnlMsgNmId", report.original_message_type)
    if report.original_count is not None:
        sub(group, "OrgnlNbOfTxs", str(report.original_count))
    if report.original_control_sum is not None:
        sub(group, "OrgnlCtrlSum", amount_text(report.original_control_sum))
    if report.group_status:
        sub(group, "GrpSts", report.group_status)
    write_reasons(group, report.reasons)
    for transaction in report.transactions:
        _write_transaction(message, transaction)
    return write(root, PACS_002)


def _write_transaction(message: Element, transaction: InterbankTransactionStatus) -> None:
    item = sub(message, "TxInfAndSts")
    if transaction.status_id:
        sub(item, "StsId", transaction.status_id)
    if transaction.original_instruction_id:
        sub(item, "OrgnlInstrId", transaction.original_instruction_id)
    sub(item, "OrgnlEndToEndId", transaction.original_end_to_end_id)
    sub(item, "OrgnlTxId", transaction.original_transaction_id)
    sub(item, "TxSts", transaction.status)
    write_reasons(item, transaction.reasons)
    if transaction.accepted_at:
        sub(item, "AccptncDtTm", datetime_text(transaction.accepted_at))
    if transaction.original_amount is not None or transaction.original_settlement_date:
        reference = sub(item, "OrgnlTxRef")
        if transaction.original_amount is not None:
            sub(reference, "IntrBkSttlmAmt", amount_text(transaction.original_amount), Ccy=EUR)
        if transaction.original_settlement_date:
            sub(reference, "IntrBkSttlmDt", transaction.original_settlement_date.isoformat())


# --- the reader --------------------------------------------------------------------------------


def read_status_report(data: bytes) -> InterbankStatusReport:
    """The report in `data`, or an `Iso20022Error`: the document is refused whole."""
    root = read(data, PACS_002)
    message = find(root, PACS_002.root)
    header = find(message, "GrpHdr")
    groups = findall(message, "OrgnlGrpInfAndSts")
    if not groups:
        raise refusal(
            message, "OrgnlGrpInfAndSts is missing (which message is answered?)", PACS_002
        )
    if len(groups) > 1:
        raise refusal(groups[1], "a SEPA status report answers one original message", PACS_002)
    group = groups[0]
    transactions = tuple(_read_transaction(item) for item in findall(message, "TxInfAndSts"))
    count = text(group, "OrgnlNbOfTxs")
    control = text(group, "OrgnlCtrlSum")
    report = located(
        group,
        PACS_002,
        lambda: InterbankStatusReport(
            message_id=text(header, "MsgId"),
            created_at=parse_datetime(text(header, "CreDtTm"), "creation date and time"),
            instructing_agent_bic=read_agent(header, "InstgAgt"),
            instructed_agent_bic=read_agent(header, "InstdAgt"),
            original_message_id=text(group, "OrgnlMsgId"),
            original_message_type=text(group, "OrgnlMsgNmId"),
            original_count=int(count) if count is not None else None,
            original_control_sum=parse_amount(control, "original control sum")
            if control is not None
            else None,
            group_status=text(group, "GrpSts"),
            reasons=read_reasons(group),
            transactions=transactions,
        ),
    )
    _check_counts_per_status(group, report)
    return report


def _check_counts_per_status(group: Element, report: InterbankStatusReport) -> None:
    per_status = findall(group, "NbOfTxsPerSts")
    if not per_status:
        return
    listed = Counter(each.status for each in report.transactions)
    counts, sums = 0, []
    for element in per_status:
        status = text(element, "DtldSts")
        count = int(text(element, "DtldNbOfTxs"))
        if listed[status] > count:
            raise refusal(
                element,
                f"{count} transactions are {status}, but the report lists {listed[status]}",
                PACS_002,
            )
        counts += count
        stated = text(element, "DtldCtrlSum")
        sums.append(None if stated is None else parse_amount(stated, "detailed control sum"))
    if report.original_count is not None and counts != report.original_count:
        raise refusal(
            find(group, "OrgnlNbOfTxs"),
            f"OrgnlNbOfTxs is {report.original_count}, but the counts per status add up to "
            f"{counts}",
            PACS_002,
        )
    if report.original_control_sum is not None and None not in sums:
        if sum(sums) != report.original_control_sum:
            raise refusal(
                find(group, "OrgnlCtrlSum"),
                f"OrgnlCtrlSum is {amount_text(report.original_control_sum)}, but the sums per "
                f"status add up to {amount_text(sum(sums))}",
                PACS_002,
            )


def _read_transaction(item: Element) -> InterbankTransactionStatus:
    # A status answers one transaction: by the end-to-end id and the transaction id the
    # instructing bank gave it (both mandatory in the EPC's guidelines), with a status.
    amount = find(item, "OrgnlTxRef/IntrBkSttlmAmt")
    settled = text(item, "OrgnlTxRef/IntrBkSttlmDt")
    accepted = text(item, "AccptncDtTm")

    def make() -> InterbankTransactionStatus:
        if amount is not None:
            check_currency(amount.get("Ccy"), "original interbank settlement amount")
        return InterbankTransactionStatus(
            status_id=text(item, "StsId"),
            original_instruction_id=text(item, "OrgnlInstrId"),
            original_end_to_end_id=required(item, "OrgnlEndToEndId", PACS_002),
            original_transaction_id=required(item, "OrgnlTxId", PACS_002),
            status=required(item, "TxSts", PACS_002),
            reasons=read_reasons(item),
            accepted_at=parse_datetime(accepted, "acceptance date and time") if accepted else None,
            original_amount=parse_amount(amount.text, "original amount")
            if amount is not None
            else None,
            original_settlement_date=parse_date(settled, "original settlement date")
            if settled
            else None,
        )

    return located(item, PACS_002, make)
