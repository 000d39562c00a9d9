"""camt.056.001.08, the FI to FI payment cancellation request: a recall. The bank that sent a
credit transfer asks the beneficiary's bank for the money back, after settlement, with the
reason (the EPC's SCT and SCT Inst rulebooks: a duplicate, a technical problem, fraud, or the
originator's request: a wrong account, a wrong amount, no reason).

    Document/FIToFIPmtCxlReq
      Assgnmt     (cases.py) Id, Assgnr/Agt, Assgne/Agt (by BIC), CreDtTm
      CtrlData    NbOfTxs, CtrlSum?
      Undrlyg 1..n
        OrgnlGrpInfAndCxl? (OrgnlMsgId, OrgnlMsgNmId): the original message of every TxInf
                  that does not name its own
        TxInf 1..n  CxlId, OrgnlGrpInf (OrgnlMsgId, OrgnlMsgNmId), OrgnlInstrId?,
                  OrgnlEndToEndId, OrgnlTxId, OrgnlIntrBkSttlmAmt Ccy=EUR, OrgnlIntrBkSttlmDt,
                  CxlRsnInf 1 (Orgtr/Id/OrgId/AnyBIC?, Rsn/Cd or Rsn/Prtry, AddtlInf*)

Each recall names one original transaction by the message and the ids it came with, its amount
and settlement day. The EPC's guidelines give a recall exactly one reason; its code is kept raw
and `codes.recall_reason` normalizes it: a code outside the EPC's list of recall reasons is read
as `unknown`, not refused. A cancellation of a whole message (`Undrlyg` without `TxInf`) is not
SEPA's and is refused. The reader checks NbOfTxs and CtrlSum against the transactions.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from payments.iso20022 import codes
from payments.iso20022.cases import Assignment, read_assignment, write_assignment
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
    check_currency,
    check_text,
    parse_amount,
    parse_date,
)
from payments.iso20022.messages import CAMT_056
from payments.iso20022.parties import located
from payments.iso20022.status_reasons import StatusReason, read_reasons, write_reasons

REASON = "CxlRsnInf"


@dataclass(frozen=True, slots=True, kw_only=True)
class RecalledTransaction:
    cancellation_id: str
    original_message_id: str
    original_message_type: str  # pacs.008.001.08
    original_end_to_end_id: str
    original_transaction_id: str
    original_amount: int  # cents
    original_settlement_date: datetime.date
    reason: StatusReason
    original_instruction_id: str | None = None
    currency: str = EUR

    def __post_init__(self):
        for name in (
            "cancellation_id",
            "original_message_id",
            "original_message_type",
            "original_end_to_end_id",
            "original_transaction_id",
        ):
            check_text(getattr(self, name), 35, name.replace("_", " "))
        if self.original_instruction_id is not None:
            check_text(self.original_instruction_id, 35, "original instruction id")
        check_amount(self.original_amount, "original amount")
        check_currency(self.currency)

    @property
    def reason_name(self) -> str:
        """The normalized name of the recall's reason (`unknown` outside the EPC's list)."""
        if self.reason.proprietary:
            return "unknown"
        return codes.recall_reason(self.reason.code).normalized


@dataclass(frozen=True, slots=True, kw_only=True)
class CancellationRequest:
    assignment: Assignment
    transactions: tuple[RecalledTransaction, ...]

    def __post_init__(self):
        object.__setattr__(self, "transactions", tuple(self.transactions))
        if not self.transactions:
            raise Iso20022Error("a recall names at least one transaction")

    @property
    def total(self) -> int:
        return sum(each.original_amount for each in self.transactions)


# --- the writer --------------------------------------------------------------------------------


def write_cancellation_request(message: CancellationRequest) -> bytes:
    root, body = document(CAMT_056)
    write_assignment(body, message.assignment)
    control = sub(body, "CtrlData")
    sub(control, "NbOfTxs", str(len(message.transactions)))
    sub(control, "CtrlSum", amount_text(message.total))
    underlying = sub(body, "Undrlyg")
    for transaction in message.transactions:
        _write_transaction(underlying, transaction)
    return write(root, CAMT_056)


def _write_transaction(underlying: Element, transaction: RecalledTransaction) -> None:
    item = sub(underlying, "TxInf")
    sub(item, "CxlId", transaction.cancellation_id)
    original = sub(item, "OrgnlGrpInf")
    sub(original, "OrgnlMsgId", transaction.original_message_id)
    sub(original, "OrgnlMsgNmId", transaction.original_message_type)
    if transaction.original_instruction_id:
        sub(item, "OrgnlInstrId", transaction.original_instruction_id)
    sub(item, "OrgnlEndToEndId", transaction.original_end_to_end_id)
    sub(item, "OrgnlTxId", transaction.original_transaction_id)
    sub(
        item,
        "OrgnlIntrBkSttlmAmt",
        amount_text(transaction.original_amount),
        Ccy=transaction.currency,
    )
    sub(item, "OrgnlIntrBkSttlmDt", transaction.original_settlement_date.isoformat())
    write_reasons(item, (transaction.reason,), REASON)


# --- the reader --------------------------------------------------------------------------------


def read_cancellation_request(data: bytes) -> CancellationRequest:
    """The recall in `data`, or an `Iso20022Error`: the document is refused whole."""
    root = read(data, CAMT_056)
    body = find(root, CAMT_056.root)
    assignment = read_assignment(body, CAMT_056)
    transactions = []
    for underlying in findall(body, "Undrlyg"):
        items = findall(underlying, "TxInf")
        if not items:
            raise refusal(
                underlying,
                "names no transaction (TxInf): a cancellation of a whole message is not SEPA's",
                CAMT_056,
            )
        group = find(underlying, "OrgnlGrpInfAndCxl")
        transactions += [_read_transaction(item, group) for item in items]
    message = located(
        body,
        CAMT_056,
        lambda: CancellationRequest(assignment=assignment, transactions=tuple(transactions)),
    )
    control = find(body, "CtrlData")
    if control is not None:
        check_controls(control, CAMT_056, len(transactions), message.total)
    return message


def _read_transaction(item: Element, group: Element | None) -> RecalledTransaction:
    original = find(item, "OrgnlGrpInf")
    if original is None:
        original = group
    if original is None:
        raise refusal(item, "OrgnlGrpInf is missing (which message is recalled?)", CAMT_056)
    reasons = read_reasons(item, REASON)
    if len(reasons) != 1:
        raise refusal(
            item, f"a recall has one reason (CxlRsnInf with Rsn), not {len(reasons)}", CAMT_056
        )
    amount = find(item, "OrgnlIntrBkSttlmAmt")
    if amount is None:
        raise refusal(item, "OrgnlIntrBkSttlmAmt is missing", CAMT_056)
    settled = required(item, "OrgnlIntrBkSttlmDt", CAMT_056)

    def make() -> RecalledTransaction:
        return RecalledTransaction(
            cancellation_id=required(item, "CxlId", CAMT_056),
            original_message_id=text(original, "OrgnlMsgId"),
            original_message_type=text(original, "OrgnlMsgNmId"),
            original_instruction_id=text(item, "OrgnlInstrId"),
            original_end_to_end_id=required(item, "OrgnlEndToEndId", CAMT_056),
            original_transaction_id=required(item, "OrgnlTxId", CAMT_056),
            original_amount=parse_amount(amount.text, "original amount"),
            currency=amount.get("Ccy"),
            original_settlement_date=parse_date(settled, "original settlement date"),
            reason=reasons[0],
        )

    return located(item, CAMT_056, make)
