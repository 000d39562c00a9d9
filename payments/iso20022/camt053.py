"""camt.053.001.08 (bank to customer statement, end of day) and camt.052.001.08 (bank to customer
account report, intraday): the bank's own account of the money on an account, read by
reconciliation (docs/reconciliation.md, "Statements in"). TX reads them; it writes neither.

    Document/BkToCstmrStmt (camt.053) | BkToCstmrAcctRpt (camt.052)
      GrpHdr          MsgId, CreDtTm
      Stmt | Rpt 1..n Id, ElctrncSeqNb?, FrToDt?, Acct (Id/IBAN or Id/Othr/Id, Ccy?),
                      Bal* (Tp/CdOrPrtry/Cd OPBD|CLBD|ITBD..., Amt Ccy, CdtDbtInd, Dt),
        Ntry*         NtryRef?, Amt Ccy, CdtDbtInd, Sts, BookgDt?, ValDt?, AcctSvcrRef?,
          NtryDtls/Btch/NbOfTxs?   (a batch booking: how many transactions it sums)
          NtryDtls/TxDtls*   Refs/EndToEndId, Refs/AcctSvcrRef, RltdPties (Dbtr|Cdtr Pty Nm,
                             DbtrAcct|CdtrAcct), RmtInf/Ustrd

Amounts are read in the currency's minor units (`core.money.currency_exponent`); an amount with
more decimals than its currency has is refused. Of an account number TX keeps the last four
characters only. The document goes through `document.read` (safe parser, no DOCTYPE, the XSD).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from core.money import currency_exponent
from payments.iso20022.document import Element, find, findall, read, refusal, text
from payments.iso20022.fields import parse_date, parse_datetime
from payments.iso20022.messages import CAMT_052, CAMT_053, MessageType

_DIRECTIONS = {"CRDT": "credit", "DBIT": "debit"}
_OPENING = ("OPBD", "PRCD", "ITBD")
_CLOSING = ("CLBD", "ITBD")


@dataclass(frozen=True, slots=True)
class StatementEntry:
    booking_date: datetime.date | None
    value_date: datetime.date | None
    amount: int  # minor units, positive
    direction: str  # credit | debit
    currency: str
    bank_reference: str
    end_to_end_id: str
    trace_number: str
    remittance: str
    counterparty_name: str
    counterparty_account_last4: str
    batch_count: int | None


@dataclass(frozen=True, slots=True)
class AccountStatement:
    message_type: str
    message_id: str
    statement_id: str
    sequence: str
    account_last4: str
    currency: str
    opening_balance: int | None  # signed minor units
    closing_balance: int | None
    period_start: datetime.datetime | None
    period_end: datetime.datetime | None
    entries: tuple[StatementEntry, ...]


def minor_units(element: Element, message: MessageType, what: str) -> tuple[int, str]:
    currency = element.get("Ccy") or ""
    try:
        value = Decimal(element.text or "")
    except InvalidOperation:
        raise refusal(element, f"{what}: {element.text!r} is not an amount", message) from None
    scaled = value.scaleb(currency_exponent(currency))
    if scaled != scaled.to_integral_value():
        raise refusal(
            element, f"{what}: {element.text} has more decimals than {currency} has", message
        )
    return int(scaled), currency


def last4(value: str | None) -> str:
    return (value or "").replace(" ", "")[-4:]


def read_statements(data: bytes, message: MessageType) -> list[AccountStatement]:
    """Every statement (camt.053) or report (camt.052) of the document, or an `Iso20022Error`:
    the document is refused whole."""
    if message not in (CAMT_053, CAMT_052):
        raise ValueError(f"{message.name} is not a statement")
    root = read(data, message)
    body = find(root, message.root)
    header = find(body, "GrpHdr")
    message_id = text(header, "MsgId") or ""
    blocks = findall(body, "Stmt" if message is CAMT_053 else "Rpt")
    return [_read_block(block, message, message_id) for block in blocks]


def _date(element: Element, path: str) -> datetime.date | None:
    day = text(element, f"{path}/Dt")
    if day is not None:
        return parse_date(day, path)
    moment = text(element, f"{path}/DtTm")
    return parse_datetime(moment, path).date() if moment is not None else None


def _signed(element: Element, message: MessageType, what: str) -> tuple[int, str]:
    amount, currency = minor_units(find(element, "Amt"), message, what)
    return (-amount if text(element, "CdtDbtInd") == "DBIT" else amount), currency


def _read_block(block: Element, message: MessageType, message_id: str) -> AccountStatement:
    account = find(block, "Acct")
    number = text(account, "Id/IBAN") or text(account, "Id/Othr/Id")
    currency = text(account, "Ccy") or ""
    opening = closing = None
    for balance in findall(block, "Bal"):
        code = text(balance, "Tp/CdOrPrtry/Cd") or text(balance, "Tp/CdOrPrtry/Prtry")
        amount, balance_currency = _signed(balance, message, f"balance {code}")
        currency = currency or balance_currency
        if balance_currency != currency:
            raise refusal(balance, f"balance {code} in {balance_currency}, not {currency}", message)
        if code in _OPENING and opening is None:
            opening = amount
        elif code in _CLOSING:
            closing = amount
    entries = tuple(_read_entry(item, message) for item in findall(block, "Ntry"))
    for item, entry in zip(findall(block, "Ntry"), entries, strict=True):
        currency = currency or entry.currency
        if entry.currency != currency:
            raise refusal(item, f"entry in {entry.currency}, the account's is {currency}", message)
    if not currency:
        raise refusal(block, "no currency: neither the account, a balance nor an entry", message)
    start = text(block, "FrToDt/FrDtTm")
    end = text(block, "FrToDt/ToDtTm")
    return AccountStatement(
        message_type=message.name,
        message_id=message_id,
        statement_id=text(block, "Id") or "",
        sequence=text(block, "ElctrncSeqNb") or text(block, "LglSeqNb") or "",
        account_last4=last4(number),
        currency=currency,
        opening_balance=opening,
        closing_balance=closing,
        period_start=parse_datetime(start, "FrDtTm") if start else None,
        period_end=parse_datetime(end, "ToDtTm") if end else None,
        entries=entries,
    )


def _reference(value: str | None) -> str:
    # The EPC's placeholder for a reference the payer did not give.
    return "" if value in (None, "NOTPROVIDED") else value


def _read_entry(item: Element, message: MessageType) -> StatementEntry:
    amount, currency = minor_units(find(item, "Amt"), message, "entry amount")
    details = findall(item, "NtryDtls/TxDtls")
    first = details[0] if details else None
    batch = text(item, "NtryDtls/Btch/NbOfTxs")
    direction = _DIRECTIONS[text(item, "CdtDbtInd")]
    # The other party: the debtor of a credit, the creditor of a debit.
    side = "Dbtr" if direction == "credit" else "Cdtr"
    name = account = ""
    if first is not None:
        name = text(first, f"RltdPties/{side}/Pty/Nm") or ""
        account = text(first, f"RltdPties/{side}Acct/Id/IBAN") or text(
            first, f"RltdPties/{side}Acct/Id/Othr/Id"
        )
    notes = findall(first, "RmtInf/Ustrd") if first is not None else []
    remittance = " ".join((each.text or "").strip() for each in notes)
    return StatementEntry(
        booking_date=_date(item, "BookgDt"),
        value_date=_date(item, "ValDt"),
        amount=amount,
        direction=direction,
        currency=currency,
        bank_reference=text(item, "AcctSvcrRef")
        or (text(first, "Refs/AcctSvcrRef") if first is not None else None)
        or text(item, "NtryRef")
        or "",
        end_to_end_id=_reference(text(first, "Refs/EndToEndId") if first is not None else None),
        trace_number=(text(first, "Refs/ClrSysRef") if first is not None else None) or "",
        remittance=remittance,
        counterparty_name=name,
        counterparty_account_last4=last4(account),
        batch_count=int(batch) if batch else (len(details) if len(details) > 1 else None),
    )
