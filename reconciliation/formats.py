"""The bank's statements read into one shape, whatever their format (docs/reconciliation.md,
"Statements in"): camt.053 and camt.052 (ISO 20022, `payments.iso20022.camt053`: lxml and the
official XSD), BAI2 (the `bai2` library) and MT940 (the `mt-940` library).

Every reader refuses the whole file with a `StatementRefused` naming what is wrong; nothing is
half read. Of an account number only the last four characters are kept.

Free text in BAI2 (a detail's text) and MT940 (`:86:`) is read with the SEPA-style keys German
and Dutch banks use in `:86:`: `/EREF/` end-to-end id, `/REMI/` remittance, `/NAME/`
counterparty name, `/TRCE/` trace number, `/NBTX/` batch count; text without keys is the
remittance.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import asdict, dataclass
from decimal import Decimal

from core.money import currency_exponent
from payments.iso20022.camt053 import last4, read_statements
from payments.iso20022.errors import Iso20022Error
from payments.iso20022.messages import CAMT_052, CAMT_053

CAMT_053_FORMAT = "camt.053"
CAMT_052_FORMAT = "camt.052"
BAI2_FORMAT = "bai2"
MT940_FORMAT = "mt940"
FORMATS = (CAMT_053_FORMAT, CAMT_052_FORMAT, BAI2_FORMAT, MT940_FORMAT)


class StatementRefused(Exception):  # noqa: N818 (reads as what happened)
    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


@dataclass(frozen=True, slots=True)
class Line:
    booking_date: datetime.date | None
    value_date: datetime.date | None
    amount: int
    direction: str
    currency: str
    bank_reference: str = ""
    end_to_end_id: str = ""
    trace_number: str = ""
    remittance: str = ""
    counterparty_name: str = ""
    counterparty_account_last4: str = ""
    batch_count: int | None = None

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Statement:
    format: str
    statement_id: str
    sequence: str
    account_last4: str
    currency: str
    opening_balance: int | None
    closing_balance: int | None
    period_start: datetime.date | None
    period_end: datetime.date | None
    lines: tuple[Line, ...]


def sniff(data: bytes) -> str | None:
    """The statement format `data` looks like by its first bytes, None when it looks like no
    statement (a rail file: NACHA starts `101`, the SEPA messages have their own namespaces).
    Only a guess of which reader to ask: `read` decides whether it is valid."""
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"<"):
        if b"camt.053.001" in head:
            return CAMT_053_FORMAT
        if b"camt.052.001" in head:
            return CAMT_052_FORMAT
        return None
    if head.startswith(b"01,"):
        return BAI2_FORMAT
    if head.startswith((b":20:", b"{1:")):
        return MT940_FORMAT
    return None


def read(data: bytes, fmt: str) -> Statement:
    """The one statement in `data`, or `StatementRefused`."""
    if fmt in (CAMT_053_FORMAT, CAMT_052_FORMAT):
        return _camt(data, fmt)
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError as error:
        raise StatementRefused(f"{fmt}: byte {error.start} is not ASCII") from None
    if fmt == BAI2_FORMAT:
        return _bai2(text)
    if fmt == MT940_FORMAT:
        return _mt940(text)
    raise StatementRefused(f"unknown format {fmt!r}")


def _one(statements: list, fmt: str):
    if len(statements) != 1:
        raise StatementRefused(
            f"{fmt}: holds {len(statements)} account statements; TX takes one a file"
        )
    return statements[0]


# --- camt ---------------------------------------------------------------------------------------


def _camt(data: bytes, fmt: str) -> Statement:
    message = CAMT_053 if fmt == CAMT_053_FORMAT else CAMT_052
    try:
        parsed = _one(read_statements(data, message), fmt)
    except Iso20022Error as error:
        raise StatementRefused(error.describe()) from None
    dates = [e.booking_date for e in parsed.entries if e.booking_date]
    return Statement(
        format=fmt,
        statement_id=parsed.statement_id,
        sequence=parsed.sequence,
        account_last4=parsed.account_last4,
        currency=parsed.currency,
        opening_balance=parsed.opening_balance,
        closing_balance=parsed.closing_balance,
        period_start=(
            parsed.period_start.date() if parsed.period_start else min(dates, default=None)
        ),
        period_end=parsed.period_end.date() if parsed.period_end else max(dates, default=None),
        lines=tuple(
            Line(
                booking_date=e.booking_date,
                value_date=e.value_date,
                amount=e.amount,
                direction=e.direction,
                currency=e.currency,
                bank_reference=e.bank_reference,
                end_to_end_id=e.end_to_end_id,
                trace_number=e.trace_number,
                remittance=e.remittance,
                counterparty_name=e.counterparty_name,
                counterparty_account_last4=e.counterparty_account_last4,
                batch_count=e.batch_count,
            )
            for e in parsed.entries
        ),
    )


# --- free text (BAI2 detail text, MT940 :86:) ----------------------------------------------------

_KEYS = {"EREF": "end_to_end_id", "REMI": "remittance", "NAME": "counterparty_name",
         "TRCE": "trace_number", "NBTX": "batch_count"}  # fmt: skip
_KEYED = re.compile(r"/(EREF|REMI|NAME|TRCE|NBTX)/")


def _free_text(value: str, fmt: str) -> dict:
    value = " ".join((value or "").split())
    if not _KEYED.search(value):
        return {"remittance": value}
    parts = _KEYED.split(value)
    found: dict = {}
    if parts[0].strip():
        found["remittance"] = parts[0].strip()
    for key, content in zip(parts[1::2], parts[2::2], strict=True):
        content = content.strip().rstrip("/").strip()
        found[_KEYS[key]] = content
    if "end_to_end_id" in found and found["end_to_end_id"] == "NOTPROVIDED":
        found["end_to_end_id"] = ""
    if "batch_count" in found:
        if not found["batch_count"].isdigit():
            raise StatementRefused(f"{fmt}: /NBTX/ {found['batch_count']!r} is not a number")
        found["batch_count"] = int(found["batch_count"])
    return found


# --- BAI2 ----------------------------------------------------------------------------------------


def _bai2(text: str) -> Statement:
    from bai2 import bai2
    from bai2 import exceptions as bai2_errors
    from bai2.constants import TypeCodeTransaction

    try:
        parsed = bai2.parse_from_string(text, check_integrity=True)
    except (
        bai2_errors.ParsingException,
        bai2_errors.IntegrityException,
        bai2_errors.NotSupportedYetException,
    ) as error:
        raise StatementRefused(f"bai2: {error}") from None
    except (ValueError, IndexError, KeyError, TypeError, AttributeError) as error:
        raise StatementRefused(f"bai2: not a BAI2 file ({type(error).__name__}: {error})") from None
    group = _one(parsed.children, "bai2 (groups)")
    account = _one(group.children, "bai2")
    header = account.header
    currency = header.currency or group.header.currency or "USD"
    day = group.header.as_of_date
    opening = closing = None
    for summary in header.summary_items:
        if summary.type_code.code == "010":
            opening = summary.amount
        elif summary.type_code.code == "015":
            closing = summary.amount
    lines = []
    for detail in account.children:
        kind = detail.type_code.transaction
        if kind not in (TypeCodeTransaction.credit, TypeCodeTransaction.debit):
            raise StatementRefused(
                f"bai2: type code {detail.type_code.code} is neither a credit nor a debit"
            )
        if detail.amount is None or detail.amount < 0:
            raise StatementRefused(f"bai2: a detail's amount {detail.amount!r} is not an amount")
        lines.append(
            Line(
                booking_date=day,
                value_date=day,
                amount=detail.amount,
                direction=kind.value,
                currency=currency,
                bank_reference=detail.bank_reference or "",
                **_free_text(detail.text or "", "bai2"),
            )
        )
    return Statement(
        format=BAI2_FORMAT,
        statement_id=parsed.header.file_id or "",
        sequence=parsed.header.file_id or "",
        account_last4=last4(header.customer_account_number),
        currency=currency,
        opening_balance=opening,
        closing_balance=closing,
        period_start=day,
        period_end=day,
        lines=tuple(lines),
    )


# --- MT940 ---------------------------------------------------------------------------------------


def _minor(amount: Decimal, currency: str) -> int:
    scaled = amount.scaleb(currency_exponent(currency))
    if scaled != scaled.to_integral_value():
        raise StatementRefused(f"mt940: {amount} has more decimals than {currency} has")
    return int(scaled)


def _mt940(text: str) -> Statement:
    import mt940

    if ":20:" not in text or ":61:" not in text and ":62F:" not in text:
        raise StatementRefused("mt940: not an MT940 statement (no :20: or :62F: field)")
    statements = mt940.models.Transactions()
    try:
        statements.parse(text)
    except Exception as error:  # noqa: BLE001 (the library raises what it meets)
        raise StatementRefused(f"mt940: {type(error).__name__}: {error}") from None
    data = statements.data
    opening = data.get("final_opening_balance")
    closing = data.get("final_closing_balance")
    if opening is None or closing is None:
        raise StatementRefused(
            "mt940: an opening (:60F:) and a closing (:62F:) balance are required"
        )
    currency = closing.amount.currency
    lines = []
    for transaction in statements:
        each = transaction.data
        amount = each["amount"]
        if amount.currency != currency:
            raise StatementRefused(
                f"mt940: a line in {amount.currency}, the statement's is {currency}"
            )
        if each.get("status") not in ("C", "D"):
            raise StatementRefused(
                f"mt940: status {each.get('status')!r}: a reversal (RC/RD) is not taken"
            )
        value = _minor(abs(amount.amount), currency)
        booked = each.get("entry_date") or each.get("date")
        lines.append(
            Line(
                booking_date=datetime.date(booked.year, booked.month, booked.day),
                value_date=datetime.date(each["date"].year, each["date"].month, each["date"].day),
                amount=value,
                direction="credit" if each["status"] == "C" else "debit",
                currency=currency,
                bank_reference=each.get("bank_reference") or "",
                **_free_text(each.get("transaction_details") or "", "mt940"),
            )
        )
    opening_date = datetime.date(opening.date.year, opening.date.month, opening.date.day)
    closing_date = datetime.date(closing.date.year, closing.date.month, closing.date.day)
    return Statement(
        format=MT940_FORMAT,
        statement_id=data.get("transaction_reference") or "",
        sequence="/".join(
            part for part in (data.get("statement_number"), data.get("sequence_number")) if part
        ),
        account_last4=last4(data.get("account_identification")),
        currency=currency,
        opening_balance=_minor(opening.amount.amount, currency),
        closing_balance=_minor(closing.amount.amount, currency),
        period_start=opening_date,
        period_end=closing_date,
        lines=tuple(lines),
    )
