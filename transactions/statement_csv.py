"""A statement as RFC 4180 CSV (docs/statements.md): a header, then one row per line of the
period, oldest first, generated as it is sent (`StreamingHttpResponse`): the lines are read in
keyset chunks (`statement_lines_stream`), so memory holds one chunk whatever the period."""

import csv

from accounts.statement_lines.periods import Period, statement_lines_stream
from core.money import currency_exponent

CSV_HEADER = [
    "date",
    "createdAt",
    "transactionId",
    "type",
    "settlementStatus",
    "status",
    "direction",
    "amount",
    "currency",
    "description",
    "merchantName",
    "cardId",
    "authorizationId",
    "transferId",
]


class _Echo:
    """A file-like object whose `write` returns what it is given (csv.writer writes one row)."""

    def write(self, value):
        return value


def decimal_amount(amount: int, currency: str) -> str:
    exponent = currency_exponent(currency)
    if exponent == 0:
        return str(amount)
    whole, fraction = divmod(amount, 10**exponent)
    return f"{whole}.{fraction:0{exponent}d}"


def _cell(text: str) -> str:
    """A text a spreadsheet would take for a formula (`=`, `+`, `-`, `@`) starts with `'`."""
    return f"'{text}" if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def csv_rows(account, period: Period):
    """The header, then one row per line of the period: a generator, read as it is sent."""
    writer = csv.writer(_Echo(), lineterminator="\r\n")
    yield writer.writerow(CSV_HEADER)
    zone = period.start.tzinfo
    for line in statement_lines_stream(account=account, period=period):
        yield writer.writerow(
            [
                line.created_at.astimezone(zone).date().isoformat(),
                line.created_at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                line.pk,
                line.type,
                line.settlement_status,
                line.status,
                "credit" if line.is_credit else "debit",
                decimal_amount(line.amount, line.currency),
                line.currency,
                _cell(line.description),
                _cell((line.merchant or {}).get("name") or ""),
                line.card_id or "",
                line.authorization_id or "",
                line.transfer_id or "",
            ]
        )
