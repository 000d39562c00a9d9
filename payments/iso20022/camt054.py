"""camt.054.001.08, the bank to customer debit/credit notification: what the partner bank tells
a fintech of the money that moved on its accounts (a transfer booked, a credit received, a
transfer returned with its reason).

    Document/BkToCstmrDbtCdtNtfctn
      GrpHdr          MsgId, CreDtTm
      Ntfctn 1..n     Id, CreDtTm?, Acct/Id/IBAN
        Ntry*         NtryRef?, Amt Ccy, CdtDbtInd CRDT|DBIT, RvslInd?, Sts/Cd BOOK|PDNG|INFO,
                      BookgDt/Dt?, ValDt/Dt?, AcctSvcrRef?, BkTxCd/Domn (PMNT/RCDT/ESCT...)
          NtryDtls/TxDtls*
                      Refs (MsgId, AcctSvcrRef, PmtInfId, InstrId, EndToEndId, TxId, MndtId),
                      Amt?, CdtDbtInd?, RltdPties (Dbtr/Pty/Nm, DbtrAcct, Cdtr/Pty/Nm, CdtrAcct),
                      RltdAgts/DbtrAgt/FinInstnId/BICFI?, RmtInf?,
                      RtrInf/Rsn/Cd (a return's reason: AC01, AC04, AM04, MD06...)

A returned SEPA credit transfer is a credit entry whose transaction carries `RtrInf` (bank
transaction code PMNT/ICDT/RRTN); its reason code is kept raw, `codes.reason` normalizes it.
The reader checks what adds up: where every transaction of an entry states its amount, they sum
to the entry's. Elements TX does not model are accepted and not kept.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Literal

from payments.iso20022 import codes
from payments.iso20022.document import (
    Element,
    document,
    find,
    findall,
    read,
    refusal,
    sub,
    text,
    write,
)
from payments.iso20022.errors import Iso20022Error
from payments.iso20022.fields import (
    amount_text,
    check_bic,
    check_iban,
    check_text,
    datetime_text,
    parse_amount,
    parse_date,
    parse_datetime,
)
from payments.iso20022.messages import CAMT_054
from payments.iso20022.parties import located, read_account, write_account
from payments.iso20022.remittance import Remittance, read_remittance, write_remittance
from payments.iso20022.status_reasons import NARRATIVE

Direction = Literal["credit", "debit"]
_DIRECTION_CODES: dict[str, Direction] = {"CRDT": "credit", "DBIT": "debit"}
_CODES_OF_DIRECTION = {direction: code for code, direction in _DIRECTION_CODES.items()}


def _check_optional(value: str | None, limit: int, what: str) -> None:
    if value is not None:
        check_text(value, limit, what)


def _check_amount(cents: int | None, what: str) -> None:
    if cents is not None and (not isinstance(cents, int) or cents < 0):
        raise Iso20022Error(f"{what}: {cents!r} is not a number of cents")


@dataclass(frozen=True, slots=True)
class BankTransactionCode:
    """ISO's bank transaction code: domain, family and sub-family (PMNT / RCDT / ESCT is a
    received SEPA credit transfer, PMNT / ICDT / ESCT an issued one, PMNT / ICDT / RRTN a
    returned one), or a bank's proprietary code."""

    domain: str | None = None
    family: str | None = None
    subfamily: str | None = None
    proprietary: str | None = None

    def __post_init__(self):
        if self.proprietary is None and not (self.domain and self.family and self.subfamily):
            raise Iso20022Error("a bank transaction code has a domain, family and sub-family")


@dataclass(frozen=True, slots=True)
class ReturnReason:
    code: str
    proprietary: bool = False
    additional_information: tuple[str, ...] = ()

    @property
    def normalized(self) -> str:
        return "unknown" if self.proprietary else codes.reason(self.code).normalized


@dataclass(frozen=True, slots=True, kw_only=True)
class TransactionDetails:
    end_to_end_id: str | None = None
    message_id: str | None = None
    payment_information_id: str | None = None
    instruction_id: str | None = None
    transaction_id: str | None = None  # the interbank one (a SEPA Instant credit's key)
    mandate_id: str | None = None
    account_servicer_reference: str | None = None
    amount: int | None = None  # cents
    currency: str | None = None
    direction: Direction | None = None
    debtor_name: str | None = None
    debtor_iban: str | None = None
    creditor_name: str | None = None
    creditor_iban: str | None = None
    debtor_agent_bic: str | None = None
    remittance: Remittance | None = None
    return_reason: ReturnReason | None = None

    def __post_init__(self):
        for name in (
            "end_to_end_id",
            "message_id",
            "payment_information_id",
            "instruction_id",
            "transaction_id",
            "mandate_id",
            "account_servicer_reference",
        ):
            _check_optional(getattr(self, name), 35, name.replace("_", " "))
        _check_optional(self.debtor_name, 140, "debtor name")
        _check_optional(self.creditor_name, 140, "creditor name")
        _check_amount(self.amount, "transaction amount")
        if (self.amount is None) != (self.currency is None):
            raise Iso20022Error("a transaction's amount and currency go together")
        for name in ("debtor_iban", "creditor_iban"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, check_iban(getattr(self, name), name))
        if self.debtor_agent_bic is not None:
            object.__setattr__(
                self, "debtor_agent_bic", check_bic(self.debtor_agent_bic, "debtor agent")
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    amount: int  # cents
    currency: str
    direction: Direction
    status: str  # BOOK, PDNG, INFO
    bank_transaction_code: BankTransactionCode
    reference: str | None = None
    account_servicer_reference: str | None = None
    booking_date: datetime.date | None = None
    value_date: datetime.date | None = None
    reversal: bool = False
    transactions: tuple[TransactionDetails, ...] = ()

    def __post_init__(self):
        _check_amount(self.amount, "entry amount")
        check_text(self.status, 35, "entry status")
        _check_optional(self.reference, 35, "entry reference")
        _check_optional(self.account_servicer_reference, 35, "account servicer reference")
        object.__setattr__(self, "transactions", tuple(self.transactions))


@dataclass(frozen=True, slots=True, kw_only=True)
class AccountNotification:
    id: str
    account_iban: str
    created_at: datetime.datetime | None = None
    entries: tuple[Entry, ...] = ()

    def __post_init__(self):
        check_text(self.id, 35, "notification id")
        object.__setattr__(self, "account_iban", check_iban(self.account_iban, "account IBAN"))
        object.__setattr__(self, "entries", tuple(self.entries))


@dataclass(frozen=True, slots=True, kw_only=True)
class DebitCreditNotification:
    message_id: str
    created_at: datetime.datetime
    notifications: tuple[AccountNotification, ...]

    def __post_init__(self):
        check_text(self.message_id, 35, "message id")
        object.__setattr__(self, "notifications", tuple(self.notifications))

    def entries(self) -> list[Entry]:
        return [entry for each in self.notifications for entry in each.entries]


# --- the writer --------------------------------------------------------------------------------


def write_notification(notification: DebitCreditNotification) -> bytes:
    root, message = document(CAMT_054)
    header = sub(message, "GrpHdr")
    sub(header, "MsgId", notification.message_id)
    sub(header, "CreDtTm", datetime_text(notification.created_at))
    for account in notification.notifications:
        block = sub(message, "Ntfctn")
        sub(block, "Id", account.id)
        if account.created_at is not None:
            sub(block, "CreDtTm", datetime_text(account.created_at))
        write_account(block, "Acct", account.account_iban)
        for entry in account.entries:
            _write_entry(block, entry)
    return write(root, CAMT_054)


def _write_entry(block: Element, entry: Entry) -> None:
    item = sub(block, "Ntry")
    if entry.reference:
        sub(item, "NtryRef", entry.reference)
    sub(item, "Amt", amount_text(entry.amount), Ccy=entry.currency)
    sub(item, "CdtDbtInd", _CODES_OF_DIRECTION[entry.direction])
    if entry.reversal:
        sub(item, "RvslInd", "true")
    sub(item, "Sts/Cd", entry.status)
    if entry.booking_date:
        sub(item, "BookgDt/Dt", entry.booking_date.isoformat())
    if entry.value_date:
        sub(item, "ValDt/Dt", entry.value_date.isoformat())
    if entry.account_servicer_reference:
        sub(item, "AcctSvcrRef", entry.account_servicer_reference)
    code = sub(item, "BkTxCd")
    btc = entry.bank_transaction_code
    if btc.domain:
        domain = sub(code, "Domn")
        sub(domain, "Cd", btc.domain)
        sub(domain, "Fmly/Cd", btc.family)
        sub(find(domain, "Fmly"), "SubFmlyCd", btc.subfamily)
    if btc.proprietary:
        sub(code, "Prtry/Cd", btc.proprietary)
    if entry.transactions:
        details = sub(item, "NtryDtls")
        for transaction in entry.transactions:
            _write_transaction(details, transaction)


_REFERENCES = (
    ("MsgId", "message_id"),
    ("AcctSvcrRef", "account_servicer_reference"),
    ("PmtInfId", "payment_information_id"),
    ("InstrId", "instruction_id"),
    ("EndToEndId", "end_to_end_id"),
    ("TxId", "transaction_id"),
    ("MndtId", "mandate_id"),
)


def _write_transaction(details: Element, transaction: TransactionDetails) -> None:
    item = sub(details, "TxDtls")
    if any(getattr(transaction, name) for _, name in _REFERENCES):
        references = sub(item, "Refs")
        for tag, name in _REFERENCES:  # in the XSD's order
            if getattr(transaction, name):
                sub(references, tag, getattr(transaction, name))
    if transaction.amount is not None:
        sub(item, "Amt", amount_text(transaction.amount), Ccy=transaction.currency)
    if transaction.direction:
        sub(item, "CdtDbtInd", _CODES_OF_DIRECTION[transaction.direction])
    parties = (
        transaction.debtor_name,
        transaction.debtor_iban,
        transaction.creditor_name,
        transaction.creditor_iban,
    )
    if any(parties):
        related = sub(item, "RltdPties")
        if transaction.debtor_name:
            sub(related, "Dbtr/Pty/Nm", transaction.debtor_name)
        if transaction.debtor_iban:
            write_account(related, "DbtrAcct", transaction.debtor_iban)
        if transaction.creditor_name:
            sub(related, "Cdtr/Pty/Nm", transaction.creditor_name)
        if transaction.creditor_iban:
            write_account(related, "CdtrAcct", transaction.creditor_iban)
    if transaction.debtor_agent_bic:
        sub(item, "RltdAgts/DbtrAgt/FinInstnId/BICFI", transaction.debtor_agent_bic)
    write_remittance(item, transaction.remittance)
    if transaction.return_reason:
        reason = transaction.return_reason
        information = sub(item, "RtrInf")
        sub(information, "Rsn/Prtry" if reason.proprietary else "Rsn/Cd", reason.code)
        for line in reason.additional_information:
            sub(information, "AddtlInf", line)


# --- the reader --------------------------------------------------------------------------------


def read_notification(data: bytes) -> DebitCreditNotification:
    """The notification in `data`, or an `Iso20022Error`: the document is refused whole."""
    root = read(data, CAMT_054)
    message = find(root, CAMT_054.root)
    header = find(message, "GrpHdr")
    notifications = tuple(_read_account(block) for block in findall(message, "Ntfctn"))
    return located(
        header,
        CAMT_054,
        lambda: DebitCreditNotification(
            message_id=text(header, "MsgId"),
            created_at=parse_datetime(text(header, "CreDtTm"), "creation date and time"),
            notifications=notifications,
        ),
    )


def _read_account(block: Element) -> AccountNotification:
    created = text(block, "CreDtTm")
    entries = tuple(_read_entry(item) for item in findall(block, "Ntry"))
    return located(
        block,
        CAMT_054,
        lambda: AccountNotification(
            id=text(block, "Id"),
            account_iban=read_account(block, "Acct", CAMT_054),
            created_at=parse_datetime(created, "creation date and time") if created else None,
            entries=entries,
        ),
    )


def _date(element: Element, path: str) -> datetime.date | None:
    """A DateAndDateTime2Choice as a date (a date and time is read as its date)."""
    day = text(element, f"{path}/Dt")
    if day is not None:
        return parse_date(day, path)
    moment = text(element, f"{path}/DtTm")
    return parse_datetime(moment, path).date() if moment is not None else None


def _read_entry(item: Element) -> Entry:
    amount = find(item, "Amt")
    status = text(item, "Sts/Cd") or text(item, "Sts/Prtry")
    transactions = tuple(_read_transaction(each) for each in findall(item, "NtryDtls/TxDtls"))
    entry = located(
        item,
        CAMT_054,
        lambda: Entry(
            reference=text(item, "NtryRef"),
            amount=parse_amount(amount.text, "entry amount"),
            currency=amount.get("Ccy"),
            direction=_DIRECTION_CODES[text(item, "CdtDbtInd")],
            reversal=text(item, "RvslInd") in ("true", "1"),
            status=status,
            booking_date=_date(item, "BookgDt"),
            value_date=_date(item, "ValDt"),
            account_servicer_reference=text(item, "AcctSvcrRef"),
            bank_transaction_code=_read_code(item),
            transactions=transactions,
        ),
    )
    stated = [each.amount for each in transactions]
    if transactions and None not in stated and sum(stated) != entry.amount:
        raise refusal(
            amount,
            f"the entry's amount is {amount.text}, but its transactions add up to "
            f"{amount_text(sum(stated))}",
            CAMT_054,
        )
    return entry


def _read_code(item: Element) -> BankTransactionCode:
    code = find(item, "BkTxCd")
    if code is None:
        raise refusal(item, "BkTxCd is missing", CAMT_054)
    return BankTransactionCode(
        domain=text(code, "Domn/Cd"),
        family=text(code, "Domn/Fmly/Cd"),
        subfamily=text(code, "Domn/Fmly/SubFmlyCd"),
        proprietary=text(code, "Prtry/Cd"),
    )


def _read_transaction(item: Element) -> TransactionDetails:
    amount = find(item, "Amt")
    direction = text(item, "CdtDbtInd")
    return located(
        item,
        CAMT_054,
        lambda: TransactionDetails(
            **{name: text(item, f"Refs/{tag}") for tag, name in _REFERENCES},
            amount=parse_amount(amount.text, "transaction amount") if amount is not None else None,
            currency=amount.get("Ccy") if amount is not None else None,
            direction=_DIRECTION_CODES[direction] if direction else None,
            debtor_name=text(item, "RltdPties/Dbtr/Pty/Nm"),
            debtor_iban=text(item, "RltdPties/DbtrAcct/Id/IBAN"),
            creditor_name=text(item, "RltdPties/Cdtr/Pty/Nm"),
            creditor_iban=text(item, "RltdPties/CdtrAcct/Id/IBAN"),
            debtor_agent_bic=text(item, "RltdAgts/DbtrAgt/FinInstnId/BICFI"),
            remittance=read_remittance(item),
            return_reason=_read_return(item),
        ),
    )


def _read_return(item: Element) -> ReturnReason | None:
    information = find(item, "RtrInf")
    if information is None:
        return None
    additional = tuple(each.text or "" for each in findall(information, "AddtlInf"))
    code = text(information, "Rsn/Cd")
    if code is not None:
        return ReturnReason(code, False, additional)
    proprietary = text(information, "Rsn/Prtry")
    if proprietary is not None:
        return ReturnReason(proprietary, True, additional)
    return ReturnReason(NARRATIVE, False, additional)
