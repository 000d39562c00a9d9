"""Account statements (docs/statements.md), identical in both versions apart from the envelope.

- `GET /accounts/{accountId}/statements?from=YYYY-MM-DD&to=YYYY-MM-DD`: the statement of a
  period of the institution's calendar (at most 366 days): JSON with the first page of its
  lines (`cursor` pages on, oldest first), or with `Accept: text/csv` every line as RFC 4180
  CSV, streamed.
- `GET /accounts/{accountId}/statements/{month}` (`YYYY-MM`): the month's statement, the same
  JSON, or with `Accept: application/pdf` a PDF document.

Errors are JSON whatever `Accept` asks for (`api.negotiation`).
"""

import calendar
import csv
import re
from datetime import date
from urllib.parse import urlencode

from django.conf import settings
from django.core import signing
from django.http import HttpResponse, StreamingHttpResponse
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from accounts.models import Account, StatementLine
from accounts.selectors import account_get
from accounts.statement_lines import periods
from accounts.statement_lines.periods import MAX_DAYS, Period, Statement
from api.pagination import decode_cursor, page_limit
from api.schema import READ_ERRORS, document
from api.serializers import Serializer
from api.versions import V1, V2
from api.views import TXView
from core.exceptions import StatementTooLarge, ValidationFailed
from core.money import currency_exponent

from .apis import TRANSACTION_OUTPUT
from .statement_pdf import statement_pdf

CSV = "text/csv"
PDF = "application/pdf"
JSON = "application/json"
DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
MONTH = re.compile(r"\d{4}-\d{2}")


# --- the JSON document
class TypeTotals(Serializer):
    credits = serializers.IntegerField(help_text="Minor units.")
    debits = serializers.IntegerField(help_text="Minor units.")
    count = serializers.IntegerField(help_text="Posted lines counted in these totals.")


class StatementTotals(Serializer):
    credits = serializers.IntegerField(help_text="Posted money in, minor units.")
    debits = serializers.IntegerField(help_text="Posted money out, minor units.")
    byType = serializers.DictField(  # noqa: N815
        child=TypeTotals(), help_text="Per statement line type (every type, zeros included)."
    )


def _statement_out(name: str, line_out: type) -> type:
    """The statement document, its lines in the shape of the version's transactions."""
    return type(
        name,
        (Serializer,),
        {
            "accountId": serializers.CharField(),
            "currency": serializers.CharField(),
            "from": serializers.DateField(help_text="First day, in the institution's calendar."),
            "to": serializers.DateField(help_text="Last day (inclusive)."),
            "timeZone": serializers.CharField(help_text="The institution's time zone (IANA)."),
            "openingBalance": serializers.IntegerField(
                help_text="Posted balance at the first instant of `from` (minor units)."
            ),
            "closingBalance": serializers.IntegerField(
                help_text="Posted balance at the end of `to`: openingBalance + credits - debits."
            ),
            "totals": StatementTotals(),
            "lineCount": serializers.IntegerField(
                help_text="Lines made in the period (every page)."
            ),
            "lines": line_out(many=True, help_text="A page of the lines, oldest first."),
            "nextCursor": serializers.CharField(
                allow_null=True, help_text="Pass as `cursor` for the next lines; null at the end."
            ),
            "hasMore": serializers.BooleanField(),
            "__module__": __name__,
        },
    )


STATEMENT_OUTPUT = {
    V1: _statement_out("StatementOut", TRANSACTION_OUTPUT[V1]),
    V2: _statement_out("StatementOutV2", TRANSACTION_OUTPUT[V2]),
}


def document_of(statement: Statement, lines: list, next_cursor: str | None, line_out: type) -> dict:
    period = statement.period
    return {
        "accountId": statement.account.pk,
        "currency": statement.account.currency,
        "from": period.first.isoformat(),
        "to": period.last.isoformat(),
        "timeZone": period.time_zone,
        "openingBalance": statement.opening_balance,
        "closingBalance": statement.closing_balance,
        "totals": {
            "credits": statement.credits,
            "debits": statement.debits,
            "byType": statement.by_type,
        },
        "lineCount": statement.line_count,
        "lines": line_out(lines, many=True).data,
        "nextCursor": next_cursor,
        "hasMore": next_cursor is not None,
    }


# --- the cursor of a statement's next page
# A statement's balances, totals and line count are computed for its first page only: the
# cursor of the next page carries them with the last line's position, signed with SECRET_KEY
# (django.core.signing, this salt) so that a client can neither alter them nor carry them to
# another account or period. docs/statements.md, "Paging".
CURSOR_SALT = "tx.statements.cursor"


def statement_cursor(statement: Statement, after: str) -> str:
    period = statement.period
    return signing.dumps(
        {
            "account": statement.account.pk,
            "from": period.first.isoformat(),
            "to": period.last.isoformat(),
            "after": after,
            "opening": statement.opening_balance,
            "closing": statement.closing_balance,
            # Only the types with lines: every other one is zeros.
            "types": {
                kind: [totals["credits"], totals["debits"], totals["count"]]
                for kind, totals in statement.by_type.items()
                if totals["count"] or totals["credits"] or totals["debits"]
            },
            "lines": statement.line_count,
        },
        salt=CURSOR_SALT,
        compress=True,
    )


def _statement_of_cursor(value: dict, account: Account, period: Period) -> Statement:
    by_type = {kind: {"credits": 0, "debits": 0, "count": 0} for kind in StatementLine.Type.values}
    for kind, (credits, debits, count) in value["types"].items():
        by_type[kind] = {"credits": credits, "debits": debits, "count": count}
    return Statement(
        account=account,
        period=period,
        opening_balance=value["opening"],
        closing_balance=value["closing"],
        credits=sum(totals["credits"] for totals in by_type.values()),
        debits=sum(totals["debits"] for totals in by_type.values()),
        by_type=by_type,
        line_count=value["lines"],
    )


def _page(request, account_id: str, first: date, last: date) -> tuple[int, str | None, dict | None]:
    """(limit, the position to page after, the signed figures of the statement or None): a bad
    `limit` or `cursor` is refused before any work. A cursor without a signature (a plain
    position, as before figures travelled in it) is still read: its page computes them."""
    limit = page_limit(request)
    cursor = request.query_params.get("cursor")
    if not cursor:
        return limit, None, None
    if ":" not in cursor:  # base64url has no ":", a signed value always has one
        return limit, decode_cursor(cursor), None
    try:
        value = signing.loads(cursor, salt=CURSOR_SALT)
    except signing.BadSignature:
        raise ValidationFailed(details={"cursor": "Not a valid cursor."}) from None
    if (value.get("account"), value.get("from"), value.get("to")) != (
        account_id,
        first.isoformat(),
        last.isoformat(),
    ):
        raise ValidationFailed(details={"cursor": "Not a cursor of this statement."})
    return limit, value["after"], value


# --- what the client accepts
def wanted(request, offered: tuple[str, ...]) -> str:
    """The media type of `offered` (JSON first) the `Accept` header prefers: the highest `q`,
    then the order given; JSON for `*/*`, no header or nothing offered."""
    best, best_q = JSON, -1.0
    for part in request.META.get("HTTP_ACCEPT", "").split(","):
        media, *params = (piece.strip() for piece in part.split(";"))
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        media = media.lower()
        if media in offered and q > 0 and q > best_q:
            best, best_q = media, q
        elif media in ("*/*", "application/*") and q > 0 and q > best_q:
            best, best_q = JSON, q
    return best


# --- input
def _day(request, name: str) -> date:
    value = request.query_params.get(name)
    if value is None:
        raise ValidationFailed(details={name: "Required: a date, YYYY-MM-DD."})
    try:
        if not DAY.fullmatch(value):
            raise ValueError
        return date.fromisoformat(value)
    except ValueError:
        raise ValidationFailed(details={name: "Must be a date, YYYY-MM-DD."}) from None


def _range(request) -> tuple[date, date]:
    first, last = _day(request, "from"), _day(request, "to")
    if last < first:
        raise ValidationFailed(details={"to": "Must not be before from."})
    if (last - first).days + 1 > MAX_DAYS:
        raise ValidationFailed(details={"to": f"A statement covers at most {MAX_DAYS} days."})
    return first, last


def _month(value: str) -> tuple[date, date]:
    try:
        if not MONTH.fullmatch(value):
            raise ValueError
        first = date(int(value[:4]), int(value[5:]), 1)
    except ValueError:
        raise ValidationFailed(details={"month": "Must be a month, YYYY-MM."}) from None
    return first, first.replace(day=calendar.monthrange(first.year, first.month)[1])


# --- CSV
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
    for line in periods.statement_lines_stream(account=account, period=period):
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


def _filename(account_id: str, period: Period, extension: str) -> str:
    return (
        f"statement-{account_id}-{period.first.isoformat()}-{period.last.isoformat()}.{extension}"
    )


# --- views
STATEMENT_PARAMETERS = [
    OpenApiParameter("from", str, required=True, description="First day, YYYY-MM-DD."),
    OpenApiParameter(
        "to", str, required=True, description="Last day, YYYY-MM-DD (inclusive; 366 days max)."
    ),
    OpenApiParameter(
        "limit",
        {"type": "integer", "minimum": 1, "maximum": 100},
        description="Lines per page, 1 to 100 (default 20).",
    ),
    OpenApiParameter("cursor", str, description="`nextCursor` of the previous page."),
]


class _StatementView(TXView):
    def _json(self, account_id: str, first: date, last: date):
        limit, after, figures = _page(self.request, account_id, first, last)
        account = account_get(institution=self.institution, account_id=account_id)
        period = periods.period_of(account=account, first=first, last=last)
        if figures is None:
            statement = periods.statement_build(account=account, period=period)
        else:
            statement = _statement_of_cursor(figures, account, period)
        lines, last_position = periods.statement_lines_page(
            account=account, period=period, limit=limit, after=after
        )
        cursor = statement_cursor(statement, last_position) if last_position is not None else None
        return self.respond(
            document_of(statement, lines, cursor, self.for_version(TRANSACTION_OUTPUT))
        )


class AccountStatementView(_StatementView):
    @document(
        name="Statement",
        resources=STATEMENT_OUTPUT,
        parameters=STATEMENT_PARAMETERS,
        summary="An account's statement for a period",
        description="Opening and closing posted balance, the posted credits and debits of the "
        "period (per line type) and its lines, in the institution's calendar and time zone "
        "(docs/statements.md). `Accept: text/csv` streams every line of the period as RFC 4180 "
        "CSV instead (a file to download). 400 `validation_error` unless `from` <= `to` within "
        "366 days.",
        operation_id="accounts_statements_retrieve",
        tags=["Accounts"],
    )
    def get(self, request, accountId):  # noqa: N803
        first, last = _range(request)
        if wanted(request, (JSON, CSV)) != CSV:
            return self._json(accountId, first, last)
        account = account_get(institution=self.institution, account_id=accountId)
        period = periods.period_of(account=account, first=first, last=last)
        response = StreamingHttpResponse(
            csv_rows(account, period), content_type=f"{CSV}; charset=utf-8"
        )
        response["Content-Disposition"] = (
            f'attachment; filename="{_filename(account.pk, period, "csv")}"'
        )
        return response


class AccountMonthlyStatementView(_StatementView):
    @document(
        name="Statement",
        resources=STATEMENT_OUTPUT,
        parameters=STATEMENT_PARAMETERS[2:],
        summary="An account's statement for a month",
        description="The statement of `from` = the month's first day to `to` = its last (as "
        "`GET /accounts/{accountId}/statements`). `Accept: application/pdf`: a PDF document "
        "with the institution, the account (its number masked), the balances, the totals and "
        "every line, up to `STATEMENT_PDF_MAX_LINES` lines (default 1,000): a longer month is "
        "422 `statement_too_large`, whose `details.csvPath` is the same statement as CSV "
        "(`Accept: text/csv`). 400 `validation_error` unless `month` is YYYY-MM.",
        errors=(*READ_ERRORS, 422),
        operation_id="accounts_statements_month_retrieve",
        tags=["Accounts"],
    )
    def get(self, request, accountId, month):  # noqa: N803
        first, last = _month(month)
        if wanted(request, (JSON, PDF)) != PDF:
            return self._json(accountId, first, last)
        account = account_get(institution=self.institution, account_id=accountId)
        period = periods.period_of(account=account, first=first, last=last)
        # Counted before anything is laid out, and no further than one line past the bound.
        most = settings.STATEMENT_PDF_MAX_LINES
        count = periods.statement_line_count(account=account, period=period, at_most=most + 1)
        if count > most:
            csv_path = request.path.rsplit("/", 1)[0]
            query = urlencode({"from": first.isoformat(), "to": last.isoformat()})
            raise StatementTooLarge(
                details={"max_lines": most, "csv_path": f"{csv_path}?{query}", "accept": CSV}
            )
        statement = periods.statement_build(account=account, period=period, line_count=count)
        lines = periods.statement_lines_stream(account=statement.account, period=statement.period)
        content = statement_pdf(statement, lines)
        response = HttpResponse(content, content_type=PDF)
        response["Content-Disposition"] = (
            f'attachment; filename="{_filename(statement.account.pk, statement.period, "pdf")}"'
        )
        return response
