"""Back-valued money caught up (docs/interest.md, "Back-valued money"): money booked after a day
was accrued, with a value instant in that day or before it, changes the day's end-of-day balance
by value date and so its interest. A stored accrual keeps the balance it was accrued on and is
never changed: the difference is an adjustment row (`InterestAdjustment`) found and booked on
the day the run finds it (the institution's today, a day of the current period), and posting
counts it in that period.

After each accrual run, for each institution and currency's books, under the books' lock (one
transaction):

1. the accounts whose entries were posted since the books' watermark (`adjusted_until`) up to
   `SETTLE` ago, with a value instant before the end of the last day accrued (one statement,
   on the entries' (account, created_at, id) index);
2. each such account's days from its earliest such value day to the last day accrued
   recomputed as `GET .../interest/days` computes them now (`interest_days`), compared with its
   accrual rows and earlier adjustments of those days, kind by kind: each difference a row;
3. the rows' sums booked as the accrual job books a batch (`book_sums`): expense -> payable,
   receivable -> income, through the books' running totals;
4. the watermark moved.

Idempotent: a second run starts from the moved watermark, and whatever it looks at again
recomputes to no difference (the rows and adjustments already hold it). `SETTLE` leaves the
last minutes to the next run: a payment's transaction commits after its entries' `created_at`,
and one not yet committed when the window is read would be missed once the watermark passed it.
"""

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from fractions import Fraction
from zoneinfo import ZoneInfo

from django.db import connection, transaction
from django.db.models import Sum
from django.utils import timezone

from accounts.models import Account
from institutions.calendar import local_date

from .booking import book_sums
from .calculation import to_places
from .locks import lock_book
from .models import AccrualBook, AccrualKind, InterestAccrual, InterestAdjustment, InterestBooking
from .selectors import MAX_DAYS, end_of_day, interest_days

ONE_DAY = timedelta(days=1)
# Entries this recent are left to the next run (module docstring).
SETTLE = timedelta(minutes=10)

# Per account of the books (the (account, created_at, id) index): the earliest value instant of
# its entries posted in (since, until] whose value instant is before `before`.
BACK_VALUED_SQL = """
SELECT a.id, MIN(COALESCE(j.value_at, e.created_at))
  FROM accounts_account a
  JOIN accounts_entry e ON e.account_id = a.id
                       AND e.created_at > %(since)s AND e.created_at <= %(until)s
  JOIN accounts_journal j ON j.id = e.journal_id
 WHERE a.institution_id = %(institution)s AND a.currency = %(currency)s
   AND a.kind = 'customer' AND COALESCE(j.value_at, e.created_at) < %(before)s
   AND (%(account)s::text IS NULL OR a.id = %(account)s::text)
 GROUP BY a.id
 ORDER BY a.id
"""


@dataclass
class AdjustmentReport:
    accounts: int = 0  # accounts recomputed
    adjustments: int = 0  # rows written
    journals: int = 0


def interest_adjust(*, now: datetime | None = None) -> AdjustmentReport:
    """Catch up every books' back-valued money (module docstring). Safe to run from several
    processes at once; run by the accrual job after it accrues."""
    now = now or timezone.now()
    report = AdjustmentReport()
    for book_id in (
        AccrualBook.objects.filter(accrued_through__isnull=False)
        .order_by("pk")
        .values_list("pk", flat=True)
    ):
        _adjust_book(book_id, now, report)
    return report


def _adjust_book(book_id: int, now: datetime, report: AdjustmentReport) -> None:
    until = now - SETTLE
    with transaction.atomic():
        book = lock_book(book_id)
        # None yet: from the last batch booked (it read the balances as they were then).
        since = book.adjusted_until or min(book.updated_at, until)
        if since >= until:
            if book.adjusted_until is None:  # the watermark starts here
                AccrualBook.objects.filter(pk=book.pk).update(adjusted_until=until)
            return
        # Found today: in the period being accrued, never one already posted.
        today = local_date(book.institution, now)
        rows, booking = _found(book, since, until, today, None, report)
        _book_rows(book, booking, rows, report)
        AccrualBook.objects.filter(pk=book.pk).update(adjusted_until=until)


def account_adjustments(
    *, book: AccrualBook, account: Account, found_on: date, now: datetime | None = None
) -> tuple[list[InterestAdjustment], InterestBooking | None]:
    """`account`'s back-valued money not caught up yet, up to `now` (no `SETTLE`: the
    settlement before a close and the close check look at the account's own last entries):
    the rows the books' run would write, found on `found_on`, and their booking (both
    unsaved). Reads only."""
    now = now or timezone.now()
    if book.accrued_through is None:
        return [], None
    since = book.adjusted_until or min(book.updated_at, now)
    return _found(book, since, now, found_on, account.pk, AdjustmentReport())


def interest_adjust_account(
    *, book: AccrualBook, account: Account, found_on: date, now: datetime | None = None
) -> AdjustmentReport:
    """Under the books' lock (`lock_book`, the caller's transaction): `account`'s back-valued
    money caught up now, as the books' run would (`account_adjustments`), found on `found_on`
    (the settlement's: the last day it posts), before the settlement posts (docs/interest.md,
    "Closing an account"). The watermark stays: the books' run finds the account again and
    recomputes it to no difference."""
    report = AdjustmentReport()
    rows, booking = account_adjustments(book=book, account=account, found_on=found_on, now=now)
    _book_rows(book, booking, rows, report)
    return report


def _found(book, since, until, found_on, account_id, report):
    """The rows of the differences of the books' (or one account's) accounts with back-valued
    entries posted in (since, until], and their booking of `found_on` (both unsaved)."""
    institution = book.institution
    zone = ZoneInfo(institution.time_zone)
    last = book.accrued_through
    with connection.cursor() as cursor:
        cursor.execute(
            BACK_VALUED_SQL,
            {
                "institution": institution.pk,
                "currency": book.currency,
                "since": since,
                "until": until,
                "before": end_of_day(last, zone),
                "account": account_id,
            },
        )
        found = cursor.fetchall()
    booking = InterestBooking(institution=institution, currency=book.currency, day=found_on)
    rows = []
    accounts = Account.objects.in_bulk([pk for pk, _ in found])
    for pk, value_at in found:
        first = timezone.localtime(value_at, zone).date()
        rows += _differences(accounts[pk], first, last, institution.time_zone, booking)
        report.accounts += 1
    return rows, booking


def _book_rows(book, booking, rows, report) -> None:
    """Book the rows' sums as the accrual job books a batch (`book_sums`) and write them."""
    if not rows:
        return
    sums = {
        kind: sum((Fraction(row.difference) for row in rows if row.kind == kind), Fraction(0))
        for kind in AccrualKind.values
    }
    book_sums(
        book.institution,
        book.currency,
        book,
        booking,
        sums,
        None,  # counts from its posting: today
        f"Interest adjusted on {booking.day.isoformat()} for money booked with an earlier "
        "value date",
    )
    report.journals += booking.journal_id is not None
    InterestAdjustment.objects.bulk_create(rows)
    report.adjustments += len(rows)


def _differences(
    account, first: date, last: date, time_zone: str, booking
) -> list[InterestAdjustment]:
    """`account`'s days [first, last] recomputed now, less their accrual rows and earlier
    adjustments, kind by kind: the rows of the differences (unsaved)."""
    # Summed as fractions (exact: every figure has PLACES places), never in a Decimal context.
    held: dict[tuple[date, str], Fraction] = defaultdict(Fraction)
    for day, kind, amount in InterestAccrual.objects.filter(
        account=account, day__gte=first, day__lte=last
    ).values_list("day", "kind", "accrual"):
        held[(day, kind)] += Fraction(amount)
    for day, kind, amount in (
        InterestAdjustment.objects.filter(account=account, day__gte=first, day__lte=last)
        .values("day", "kind")
        .annotate(total=Sum("difference"))
        .values_list("day", "kind", "total")
    ):
        held[(day, kind)] += Fraction(amount)
    rows = []
    start = first
    while start <= last:
        end = min(last, start + ONE_DAY * (MAX_DAYS - 1))
        for calculated in interest_days(
            account=account, first=start, last=end, time_zone=time_zone
        ):
            # As the accrual job stores them: to PLACES places.
            now = {kind: Fraction(to_places(a)) for kind, a in calculated.accruals().items()}
            for kind in AccrualKind.values:
                difference = now.get(kind, Fraction(0)) - held[(calculated.day, kind)]
                if difference:
                    rows.append(
                        InterestAdjustment(
                            institution_id=account.institution_id,
                            account=account,
                            day=calculated.day,
                            kind=kind,
                            balance=calculated.balance,
                            difference=to_places(difference),  # exact: PLACES places
                            found_on=booking.day,
                            booking=booking,
                        )
                    )
        start = end + ONE_DAY
    return rows
