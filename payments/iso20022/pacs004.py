"""pacs.004.001.09, the payment return: a bank sends back the money of a credit transfer it
could not credit (AC01, AC04, AC06, MS03...) or of a direct debit the debtor's bank returns or
the debtor has refunded (AM04, MD01, MD06...), with the reason.

    Document/PmtRtr
      GrpHdr      (interbank.py) MsgId, CreDtTm, NbOfTxs, CtrlSum, TtlRtrdIntrBkSttlmAmt,
                  IntrBkSttlmDt, SttlmInf, InstgAgt?, InstdAgt?
      TxInf 1..n  RtrId, OrgnlGrpInf (OrgnlMsgId, OrgnlMsgNmId), OrgnlInstrId?, OrgnlEndToEndId,
                  OrgnlTxId, OrgnlIntrBkSttlmAmt Ccy=EUR, RtrdIntrBkSttlmAmt Ccy=EUR,
                  ChrgBr SLEV, RtrRsnInf 1 (Orgtr/Id/OrgId/AnyBIC?, Rsn/Cd or Rsn/Prtry,
                  AddtlInf*), OrgnlTxRef? (IntrBkSttlmDt, Dbtr/Pty/Nm, DbtrAcct, Cdtr/Pty/Nm,
                  CdtrAcct)

Each return answers one original transaction, by the message and the ids it came with; the
returned amount is at most the original (a bank may deduct its charges, the EPC's rulebooks
say, never add). The EPC's guidelines give a return exactly one reason; its code is kept raw and
`codes.reason` normalizes it (a code this library does not know is read, not refused). The
reader checks NbOfTxs, CtrlSum and the total returned amount against the transactions.
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
    check_currency,
    check_iban,
    check_text,
    parse_amount,
    parse_date,
)
from payments.iso20022.interbank import (
    GroupHeader,
    check_header_controls,
    read_header,
    write_header,
)
from payments.iso20022.messages import PACS_004
from payments.iso20022.parties import located, write_account
from payments.iso20022.status_reasons import StatusReason, read_reasons, write_reasons

TOTAL = "TtlRtrdIntrBkSttlmAmt"
REASON = "RtrRsnInf"


def _check_optional(value: str | None, limit: int, what: str) -> None:
    if value is not None:
        check_text(value, limit, what)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReturnedTransaction:
    return_id: str
    original_message_id: str
    original_message_type: str  # pacs.008.001.08 or pacs.003.001.08
    original_end_to_end_id: str
    original_transaction_id: str
    original_amount: int  # cents
    returned_amount: int  # cents
    reason: StatusReason
    original_instruction_id: str | None = None
    original_settlement_date: datetime.date | None = None
    debtor_name: str | None = None
    debtor_iban: str | None = None
    creditor_name: str | None = None
    creditor_iban: str | None = None
    currency: str = EUR

    def __post_init__(self):
        for name in (
            "return_id",
            "original_message_id",
            "original_message_type",
            "original_end_to_end_id",
            "original_transaction_id",
        ):
            check_text(getattr(self, name), 35, name.replace("_", " "))
        _check_optional(self.original_instruction_id, 35, "original instruction id")
        check_amount(self.original_amount, "original amount")
        check_amount(self.returned_amount, "returned amount")
        check_currency(self.currency)
        if self.returned_amount > self.original_amount:
            raise Iso20022Error(
                f"the returned amount {amount_text(self.returned_amount)} is more than the "
                f"original {amount_text(self.original_amount)}"
            )
        _check_optional(self.debtor_name, 140, "debtor name")
        _check_optional(self.creditor_name, 140, "creditor name")
        for name in ("debtor_iban", "creditor_iban"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, check_iban(getattr(self, name), name))

    @property
    def charges(self) -> int:
        """What the returning bank kept of the original amount, in cents."""
        return self.original_amount - self.returned_amount


@dataclass(frozen=True, slots=True, kw_only=True)
class PaymentReturn:
    header: GroupHeader
    transactions: tuple[ReturnedTransaction, ...]

    def __post_init__(self):
        object.__setattr__(self, "transactions", tuple(self.transactions))
        if not self.transactions:
            raise Iso20022Error("a return has at least one transaction")

    @property
    def total(self) -> int:
        return sum(each.returned_amount for each in self.transactions)


# --- the writer --------------------------------------------------------------------------------


def write_return(message: PaymentReturn) -> bytes:
    root, body = document(PACS_004)
    write_header(body, message.header, len(message.transactions), message.total, TOTAL)
    for transaction in message.transactions:
        _write_transaction(body, transaction)
    return write(root, PACS_004)


def _write_transaction(body: Element, transaction: ReturnedTransaction) -> None:
    item = sub(body, "TxInf")
    sub(item, "RtrId", transaction.return_id)
    original = sub(item, "OrgnlGrpInf")
    sub(original, "OrgnlMsgId", transaction.original_message_id)
    sub(original, "OrgnlMsgNmId", transaction.original_message_type)
    if transaction.original_instruction_id:
        sub(item, "OrgnlInstrId", transaction.original_instruction_id)
    sub(item, "OrgnlEndToEndId", transaction.original_end_to_end_id)
    sub(item, "OrgnlTxId", transaction.original_transaction_id)
    currency = transaction.currency
    sub(item, "OrgnlIntrBkSttlmAmt", amount_text(transaction.original_amount), Ccy=currency)
    sub(item, "RtrdIntrBkSttlmAmt", amount_text(transaction.returned_amount), Ccy=currency)
    sub(item, "ChrgBr", "SLEV")
    write_reasons(item, (transaction.reason,), REASON)
    parties = (
        transaction.original_settlement_date,
        transaction.debtor_name,
        transaction.debtor_iban,
        transaction.creditor_name,
        transaction.creditor_iban,
    )
    if not any(parties):
        return
    reference = sub(item, "OrgnlTxRef")
    if transaction.original_settlement_date:
        sub(reference, "IntrBkSttlmDt", transaction.original_settlement_date.isoformat())
    if transaction.debtor_name:
        sub(reference, "Dbtr/Pty/Nm", transaction.debtor_name)
    if transaction.debtor_iban:
        write_account(reference, "DbtrAcct", transaction.debtor_iban)
    if transaction.creditor_name:
        sub(reference, "Cdtr/Pty/Nm", transaction.creditor_name)
    if transaction.creditor_iban:
        write_account(reference, "CdtrAcct", transaction.creditor_iban)


# --- the reader --------------------------------------------------------------------------------


def read_return(data: bytes) -> PaymentReturn:
    """The return in `data`, or an `Iso20022Error`: the document is refused whole."""
    root = read(data, PACS_004)
    body = find(root, PACS_004.root)
    block = find(body, "GrpHdr")
    items = findall(body, "TxInf")
    header = read_header(block, items, PACS_004)
    group = find(body, "OrgnlGrpInf")
    transactions = tuple(_read_transaction(item, group) for item in items)
    message = located(
        block, PACS_004, lambda: PaymentReturn(header=header, transactions=transactions)
    )
    check_header_controls(block, PACS_004, len(transactions), message.total, TOTAL)
    return message


def _read_transaction(item: Element, group: Element | None) -> ReturnedTransaction:
    # The original message is named per transaction (OrgnlGrpInf) or, for all of them, in the
    # message's own OrgnlGrpInf (a return of a whole message).
    original = find(item, "OrgnlGrpInf")
    if original is None:
        original = group
    if original is None:
        raise refusal(item, "OrgnlGrpInf is missing (which message is returned?)", PACS_004)
    reasons = read_reasons(item, REASON)
    if len(reasons) != 1:
        raise refusal(
            item, f"a return has one reason (RtrRsnInf with Rsn), not {len(reasons)}", PACS_004
        )
    original_amount = find(item, "OrgnlIntrBkSttlmAmt")
    if original_amount is None:
        raise refusal(item, "OrgnlIntrBkSttlmAmt is missing", PACS_004)
    returned = find(item, "RtrdIntrBkSttlmAmt")
    settled = text(item, "OrgnlTxRef/IntrBkSttlmDt")

    def make() -> ReturnedTransaction:
        check_currency(original_amount.get("Ccy"), "original interbank settlement amount")
        return ReturnedTransaction(
            return_id=required(item, "RtrId", PACS_004),
            original_message_id=text(original, "OrgnlMsgId"),
            original_message_type=text(original, "OrgnlMsgNmId"),
            original_instruction_id=text(item, "OrgnlInstrId"),
            original_end_to_end_id=required(item, "OrgnlEndToEndId", PACS_004),
            original_transaction_id=required(item, "OrgnlTxId", PACS_004),
            original_amount=parse_amount(original_amount.text, "original amount"),
            returned_amount=parse_amount(returned.text, "returned amount"),
            currency=returned.get("Ccy"),
            reason=reasons[0],
            original_settlement_date=parse_date(settled, "original settlement date")
            if settled
            else None,
            debtor_name=text(item, "OrgnlTxRef/Dbtr/Pty/Nm"),
            debtor_iban=text(item, "OrgnlTxRef/DbtrAcct/Id/IBAN"),
            creditor_name=text(item, "OrgnlTxRef/Cdtr/Pty/Nm"),
            creditor_iban=text(item, "OrgnlTxRef/CdtrAcct/Id/IBAN"),
        )

    return located(item, PACS_004, make)
