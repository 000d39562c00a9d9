"""Statement lines read by period: account statements (issue 15), the lines of a period of the
institution's calendar with the posted balance at its two ends and the posted money in between
(docs/statements.md).

- The period: from the first instant of `from` to the first instant of the day after `to`
  (exclusive), both in the institution's time zone (`Institution.time_zone`): a line made at
  23:59:59.999 Berlin time belongs to that day, one at 00:00:00.000 to the next.
- `lines`: the lines *made* in the period (their position, `core.ids`: one range scan of
  `txn_account_idx`), whatever their status now, oldest first: what the holder saw happen.
- Balances and totals count posted money only. `openingBalance` and `closingBalance` are the
  posted balances at the period's two ends (`accounts.selectors.balance_at`). The totals are the
  lines whose ledger entry on the account is in the period (the entry's `created_at`, the instant
  `balance_at` reads: the journal's, or later when the posting waited for the account's lock,
  accounts/sql/balance_after.sql), so that opening + credits - debits = closing, always. A card
  authorization's `Unsettled` line moves no posted money; its presentment turns that line into a
  `Presentment` with the journal of the presentment, maybe in a later period than the line: its
  money counts in the period of the presentment. A line waits for its journal at most the longest
  life of a hold (HOLD_LINE_WAIT), which bounds the range scan of the totals.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db.models import Count, Sum

from core.ids import bound

from ..models import Account, StatementLine
from ..models.holds import MAX_LIFETIME
from ..models.statement import POSITION
from ..selectors import balance_at

PREFIX = "txn"
MAX_DAYS = 366
CHUNK = 500

# How long a statement line can wait for the journal of its money: an authorization's or a
# pending transfer's hold lives at most this long (its line becomes a `Presentment` within it).
HOLD_LINE_WAIT = max(MAX_LIFETIME, timedelta(days=settings.AUTHORIZATION_HOLD_DAYS)) + timedelta(
    days=1
)
# A line is made in the same operation as its journal, a little after (or before) it.
OPERATION_SLACK = timedelta(minutes=5)


@dataclass(frozen=True)
class Period:
    first: date
    last: date
    time_zone: str

    @property
    def start(self) -> datetime:
        return datetime.combine(self.first, time.min, tzinfo=ZoneInfo(self.time_zone))

    @property
    def end(self) -> datetime:
        """The first instant after the period (exclusive)."""
        return datetime.combine(
            self.last + timedelta(days=1), time.min, tzinfo=ZoneInfo(self.time_zone)
        )


@dataclass(frozen=True)
class Statement:
    account: Account
    period: Period
    opening_balance: int
    closing_balance: int
    credits: int
    debits: int
    by_type: dict  # {type: {"credits", "debits", "count"}}
    line_count: int


def period_of(*, account: Account, first: date, last: date) -> Period:
    return Period(first=first, last=last, time_zone=account.institution.time_zone)


def period_lines(*, account: Account, period: Period):
    """The lines made in the period, with `position` to page on (oldest first: order by it)."""
    return (
        StatementLine.objects.filter(account=account)
        .prefetch_related("hold")
        .annotate(position=POSITION)
        .filter(
            position__gte=bound(PREFIX, period.start, upper=False),
            position__lt=bound(PREFIX, period.end, upper=False),
        )
    )


def statement_line_count(*, account: Account, period: Period, at_most: int | None = None) -> int:
    """How many lines the period has, counting no further than `at_most`: one COUNT over a
    range scan of `txn_account_idx` that stops there (the PDF's bound is checked this way
    before anything is laid out)."""
    lines = period_lines(account=account, period=period).order_by()
    if at_most is not None:
        lines = lines[:at_most]
    return lines.count()


def statement_lines_page(*, account: Account, period: Period, limit: int, after: str | None):
    """(lines, the position of the last one when more follow): keyset paging, oldest first."""
    lines = period_lines(account=account, period=period)
    if after is not None:
        lines = lines.filter(position__gt=after)
    rows = list(lines.order_by("position")[: limit + 1])
    if len(rows) > limit:
        rows = rows[:limit]
        return rows, rows[-1].pk
    return rows, None


def statement_lines_stream(*, account: Account, period: Period) -> Iterator[StatementLine]:
    """Every line of the period, oldest first, read in keyset chunks of CHUNK lines: memory holds
    one chunk whatever the period's size, and no cursor stays open between two chunks."""
    after = None
    while True:
        lines = period_lines(account=account, period=period)
        if after is not None:
            lines = lines.filter(position__gt=after)
        chunk = list(lines.order_by("position")[:CHUNK])
        yield from chunk
        if len(chunk) < CHUNK:
            return
        after = chunk[-1].pk
        del chunk


def _posted_lines(*, account: Account, period: Period):
    """The lines whose posted money moved in the period (see the module's docstring)."""
    return (
        StatementLine.objects.filter(account=account, journal__isnull=False)
        .annotate(position=POSITION)
        .filter(
            position__gte=bound(PREFIX, period.start - HOLD_LINE_WAIT, upper=False),
            position__lt=bound(PREFIX, period.end + OPERATION_SLACK, upper=False),
            # The instant of the line's own ledger entry (one per account and journal), the
            # instant `balance_at` reads: after a lock wait it can be later than the journal's.
            journal__entries__account=account,
            journal__entries__created_at__gte=period.start,
            journal__entries__created_at__lt=period.end,
        )
    )


def _posted_at(account: Account, moment: datetime) -> int:
    """The posted balance just before `moment`: money that moved at `moment` or later is not in
    it (a period's end is the next period's start)."""
    posted, _pending = balance_at(account=account, at=moment - timedelta(microseconds=1))
    return posted


def statement_build(
    *, account: Account, period: Period, line_count: int | None = None
) -> Statement:
    """The period's balances, totals and line count (`line_count`: already counted)."""
    by_type = {kind: {"credits": 0, "debits": 0, "count": 0} for kind in StatementLine.Type.values}
    rows = (
        _posted_lines(account=account, period=period)
        .order_by()
        .values("type")
        .annotate(total=Sum("amount"), count=Count("id"))
    )
    for row in rows:
        totals = by_type.setdefault(row["type"], {"credits": 0, "debits": 0, "count": 0})
        side = "credits" if row["type"] in StatementLine.CREDIT_TYPES else "debits"
        totals[side] += row["total"]
        totals["count"] += row["count"]
    return Statement(
        account=account,
        period=period,
        opening_balance=_posted_at(account, period.start),
        closing_balance=_posted_at(account, period.end),
        credits=sum(totals["credits"] for totals in by_type.values()),
        debits=sum(totals["debits"] for totals in by_type.values()),
        by_type=by_type,
        line_count=(
            statement_line_count(account=account, period=period)
            if line_count is None
            else line_count
        ),
    )
