"""Account statements (docs/statements.md), identical in both versions apart from the envelope.

- `GET /accounts/{accountId}/statements?from=YYYY-MM-DD&to=YYYY-MM-DD`: the statement of a
  period of the institution's calendar (at most 366 days): JSON with the first page of its
  lines (`cursor` pages on, oldest first), or with `Accept: text/csv` every line as RFC 4180
  CSV, streamed.
- `GET /accounts/{accountId}/statements/{month}` (`YYYY-MM`): the month's statement, the same
  JSON, or with `Accept: application/pdf` a PDF document.

The views parse the request (the period, the page), read the statement through
`accounts.statement_lines.periods` and render it: the JSON document
(`statement_serializers`, its next page's `statement_cursor`), the CSV (`statement_csv`) or
the PDF (`statement_pdf`). Errors are JSON whatever `Accept` asks for (`api.negotiation`).
"""

import calendar
import re
from datetime import date
from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpResponse, StreamingHttpResponse
from drf_spectacular.utils import OpenApiParameter

from accounts.selectors import account_get
from accounts.statement_lines import periods
from accounts.statement_lines.periods import MAX_DAYS, Period
from api.negotiation import JSON, wanted
from api.pagination import page_limit
from api.schema import READ_ERRORS, document
from api.serializers import query_date
from api.views import TXView
from core.exceptions import StatementTooLarge, ValidationFailed

from .apis import TRANSACTION_OUTPUT
from .statement_csv import csv_rows
from .statement_cursor import cursor_read, statement_cursor, statement_of_cursor
from .statement_pdf import statement_pdf
from .statement_serializers import STATEMENT_OUTPUT, document_of

CSV = "text/csv"
PDF = "application/pdf"
MONTH = re.compile(r"\d{4}-\d{2}")


# --- input
def _range(request) -> tuple[date, date]:
    first, last = query_date(request, "from"), query_date(request, "to")
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


def _page(request, account_id: str, first: date, last: date) -> tuple[int, str | None, dict | None]:
    """(limit, the position to page after, the signed figures of the statement or None): a bad
    `limit` or `cursor` is refused before any work."""
    limit = page_limit(request)
    after, figures = cursor_read(
        request.query_params.get("cursor"), account_id=account_id, first=first, last=last
    )
    return limit, after, figures


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
            statement = statement_of_cursor(figures, account, period)
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
