"""camt.029.001.09, the resolution of investigation: the answer to a recall (camt.056). The
beneficiary's bank accepts the recall (`CNCL`, each transaction `ACCR`), and the money comes
back in a pacs.004 with the reason FOCR ("following cancellation request"), or it refuses it
(`RJCR`, each transaction `RJCR`) with one reason from the EPC's list (the account closed,
too little money left, no answer from or refusal by the beneficiary, no original received,
already returned, a legal decision).

    Document/RsltnOfInvstgtn
      Assgnmt     (cases.py) Id, Assgnr/Agt, Assgne/Agt (by BIC), CreDtTm
      RslvdCase?  Id (the recall's case), Cretr/Agt/FinInstnId/BICFI (the bank that recalled)
      Sts/Conf    CNCL | RJCR
      CxlDtls 1..n
        OrgnlGrpInfAndSts? (OrgnlMsgId, OrgnlMsgNmId): the original message of every
                  TxInfAndSts that does not name its own
        TxInfAndSts 1..n  CxlStsId, OrgnlGrpInf (OrgnlMsgId, OrgnlMsgNmId), OrgnlInstrId?,
                  OrgnlEndToEndId, OrgnlTxId, TxCxlSts ACCR|RJCR, CxlStsRsnInf (one when
                  refused, none when accepted: Orgtr/Id/OrgId/AnyBIC?, Rsn/Cd or Rsn/Prtry,
                  AddtlInf*), OrgnlIntrBkSttlmAmt Ccy=EUR, OrgnlIntrBkSttlmDt

The XSD leaves all of the answer's parts optional; the reader requires what makes it an answer
to a recall: the confirmation CNCL or RJCR, at least one original transaction it answers (by
its message, end-to-end and transaction ids), each transaction's status agreeing with the
confirmation. A refusal's code is kept raw and `codes.recall_refusal` normalizes it: a code
outside the EPC's list is read as `unknown`, not refused.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from payments.iso20022 import codes
from payments.iso20022.cases import Assignment, read_assignment, write_assignment
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
from payments.iso20022.messages import CAMT_029
from payments.iso20022.parties import located
from payments.iso20022.status_reasons import StatusReason, read_reasons, write_reasons

ACCEPTED = "CNCL"  # cancelled as per request: a pacs.004 (FOCR) returns the money
REFUSED = "RJCR"  # rejected cancellation request
# The confirmation of the case and the status of each transaction it answers.
TRANSACTION_STATUS = {ACCEPTED: "ACCR", REFUSED: "RJCR"}
REASON = "CxlStsRsnInf"


@dataclass(frozen=True, slots=True, kw_only=True)
class RecallAnswer:
    status_id: str
    original_message_id: str
    original_message_type: str  # pacs.008.001.08
    original_end_to_end_id: str
    original_transaction_id: str
    original_amount: int  # cents
    original_settlement_date: datetime.date
    reason: StatusReason | None = None  # one when the recall is refused, none when accepted
    original_instruction_id: str | None = None
    currency: str = EUR

    def __post_init__(self):
        for name in (
            "status_id",
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
    def reason_name(self) -> str | None:
        """The normalized name of the refusal's reason (`unknown` outside the EPC's list)."""
        if self.reason is None:
            return None
        if self.reason.proprietary:
            return "unknown"
        return codes.recall_refusal(self.reason.code).normalized


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolutionOfInvestigation:
    assignment: Assignment
    status: str  # CNCL or RJCR
    transactions: tuple[RecallAnswer, ...]
    recall_case_id: str | None = None  # RslvdCase/Id, created by the assignee (who recalled)

    def __post_init__(self):
        object.__setattr__(self, "transactions", tuple(self.transactions))
        if self.status not in TRANSACTION_STATUS:
            raise Iso20022Error(
                f"status {self.status!r}: an answer to a recall is {ACCEPTED} (accepted) or "
                f"{REFUSED} (refused)"
            )
        if not self.transactions:
            raise Iso20022Error("an answer to a recall names the transactions it answers")
        if self.recall_case_id is not None:
            check_text(self.recall_case_id, 35, "recall case id")
        for each in self.transactions:
            if self.status == REFUSED and each.reason is None:
                raise Iso20022Error(
                    f"{each.original_end_to_end_id}: a refused recall gives its reason"
                )
            if self.status == ACCEPTED and each.reason is not None:
                raise Iso20022Error(
                    f"{each.original_end_to_end_id}: an accepted recall gives no refusal reason "
                    f"({each.reason.code})"
                )

    @property
    def accepted(self) -> bool:
        """The recall is accepted: a pacs.004 returns each transaction's money (reason FOCR)."""
        return self.status == ACCEPTED


# --- the writer --------------------------------------------------------------------------------


def write_resolution(message: ResolutionOfInvestigation) -> bytes:
    root, body = document(CAMT_029)
    write_assignment(body, message.assignment)
    if message.recall_case_id:
        case = sub(body, "RslvdCase")
        sub(case, "Id", message.recall_case_id)
        sub(case, "Cretr/Agt/FinInstnId/BICFI", message.assignment.assignee_bic)
    sub(body, "Sts/Conf", message.status)
    details = sub(body, "CxlDtls")
    for transaction in message.transactions:
        _write_transaction(details, transaction, TRANSACTION_STATUS[message.status])
    return write(root, CAMT_029)


def _write_transaction(details: Element, transaction: RecallAnswer, status: str) -> None:
    item = sub(details, "TxInfAndSts")
    sub(item, "CxlStsId", transaction.status_id)
    original = sub(item, "OrgnlGrpInf")
    sub(original, "OrgnlMsgId", transaction.original_message_id)
    sub(original, "OrgnlMsgNmId", transaction.original_message_type)
    if transaction.original_instruction_id:
        sub(item, "OrgnlInstrId", transaction.original_instruction_id)
    sub(item, "OrgnlEndToEndId", transaction.original_end_to_end_id)
    sub(item, "OrgnlTxId", transaction.original_transaction_id)
    sub(item, "TxCxlSts", status)
    if transaction.reason is not None:
        write_reasons(item, (transaction.reason,), REASON)
    sub(
        item,
        "OrgnlIntrBkSttlmAmt",
        amount_text(transaction.original_amount),
        Ccy=transaction.currency,
    )
    sub(item, "OrgnlIntrBkSttlmDt", transaction.original_settlement_date.isoformat())


# --- the reader --------------------------------------------------------------------------------


def read_resolution(data: bytes) -> ResolutionOfInvestigation:
    """The answer to a recall in `data`, or an `Iso20022Error`: the document is refused whole."""
    root = read(data, CAMT_029)
    body = find(root, CAMT_029.root)
    assignment = read_assignment(body, CAMT_029)
    status = text(body, "Sts/Conf")
    if status not in TRANSACTION_STATUS:
        raise refusal(
            find(body, "Sts"),
            f"Sts is {status or 'not a confirmation (Conf)'}: TX reads the answer to a recall, "
            f"{ACCEPTED} or {REFUSED}",
            CAMT_029,
        )
    transactions = []
    for details in findall(body, "CxlDtls"):
        group = find(details, "OrgnlGrpInfAndSts")
        for item in findall(details, "TxInfAndSts"):
            transactions.append(_read_transaction(item, group, status))
    if not transactions:
        raise refusal(
            body,
            "names no original transaction (CxlDtls/TxInfAndSts): which recall does it answer?",
            CAMT_029,
        )
    return located(
        body,
        CAMT_029,
        lambda: ResolutionOfInvestigation(
            assignment=assignment,
            status=status,
            transactions=tuple(transactions),
            recall_case_id=text(body, "RslvdCase/Id"),
        ),
    )


def _read_transaction(item: Element, group: Element | None, status: str) -> RecallAnswer:
    original = find(item, "OrgnlGrpInf")
    if original is None:
        original = group
    if original is None:
        raise refusal(item, "OrgnlGrpInf is missing (which message was recalled?)", CAMT_029)
    own = text(item, "TxCxlSts")
    if own is not None and own != TRANSACTION_STATUS[status]:
        raise refusal(
            find(item, "TxCxlSts"),
            f"TxCxlSts is {own}, but the answer is {status} ({TRANSACTION_STATUS[status]})",
            CAMT_029,
        )
    reasons = read_reasons(item, REASON)
    if len(reasons) > 1:
        raise refusal(
            item, f"a refused recall has one reason (CxlStsRsnInf), not {len(reasons)}", CAMT_029
        )
    amount = find(item, "OrgnlIntrBkSttlmAmt")
    if amount is None:
        raise refusal(item, "OrgnlIntrBkSttlmAmt is missing", CAMT_029)
    settled = required(item, "OrgnlIntrBkSttlmDt", CAMT_029)

    def make() -> RecallAnswer:
        return RecallAnswer(
            status_id=required(item, "CxlStsId", CAMT_029),
            original_message_id=text(original, "OrgnlMsgId"),
            original_message_type=text(original, "OrgnlMsgNmId"),
            original_instruction_id=text(item, "OrgnlInstrId"),
            original_end_to_end_id=required(item, "OrgnlEndToEndId", CAMT_029),
            original_transaction_id=required(item, "OrgnlTxId", CAMT_029),
            original_amount=parse_amount(amount.text, "original amount"),
            currency=amount.get("Ccy"),
            original_settlement_date=parse_date(settled, "original settlement date"),
            reason=reasons[0] if reasons else None,
        )

    return located(item, CAMT_029, make)
