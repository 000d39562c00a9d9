"""Reads of interest: a product's terms, and an account's days computed from its balances by
value date (docs/interest.md)."""

from datetime import date, datetime, time, timedelta
from fractions import Fraction
from zoneinfo import ZoneInfo

from django.db import connection

from accounts.models import Account, AccountProduct
from accounts.selectors import value_balances_at

from .calculation import Day, interest_day
from .models import InterestPosting, InterestTerms

ONE_DAY = timedelta(days=1)
MICROSECOND = timedelta(microseconds=1)
# The most days one read computes (a year, a leap year's included).
MAX_DAYS = 366


def interest_terms_list(*, product: AccountProduct):
    """A product's terms, in effective date order."""
    return InterestTerms.objects.filter(product=product).order_by("effective_date", "id")


def terms_of_days(*, product_id: str, first: date, last: date) -> list[InterestTerms]:
    """The product's terms in effect on some day of [first, last], in effective date order: the
    last one from `first` or before, and those from a later day up to `last`. One query."""
    rows = list(
        InterestTerms.objects.filter(product_id=product_id, effective_date__lte=last).order_by(
            "effective_date", "id"
        )
    )
    before = [terms for terms in rows if terms.effective_date <= first]
    return before[-1:] + [terms for terms in rows if terms.effective_date > first]


def end_of_day(day: date, zone: ZoneInfo) -> datetime:
    """The instant a day ends in `zone`: the start of the next day there (exclusive), as a
    statement's period ends (accounts.statement_lines.periods)."""
    return datetime.combine(day + ONE_DAY, time.min, zone)


def interest_days(*, account: Account, first: date, last: date, time_zone: str) -> list[Day]:
    """Each day of [first, last] (dates in the institution's `time_zone`, at most MAX_DAYS) of
    `account`: its balance by value date at the day's end, the terms in effect, the
    calculation. Two queries whatever the range: the terms, and the balances
    (`value_balances_at`)."""
    if last < first or (last - first).days + 1 > MAX_DAYS:
        raise ValueError(f"A range of 1 to {MAX_DAYS} days, not {first} to {last}.")
    days = [first + timedelta(days=n) for n in range((last - first).days + 1)]
    zone = ZoneInfo(time_zone)
    # Just before the next day starts: money at exactly midnight is the next day's, as on a
    # statement (PostgreSQL keeps microseconds, so "at or before end - 1 us" is "before end").
    balances = value_balances_at(
        account=account, instants=[end_of_day(d, zone) - MICROSECOND for d in days]
    )
    terms = terms_of_days(product_id=account.product_id, first=first, last=last)
    result, current, position = [], None, 0
    for day, balance in zip(days, balances, strict=True):
        while position < len(terms) and terms[position].effective_date <= day:
            current, position = terms[position], position + 1
        result.append(interest_day(day, balance, current))
    return result


def period_accruals(*, firsts: dict[str, date], last: date) -> dict[tuple[str, str], Fraction]:
    """The postable interest: each account's accruals (`firsts`: account id -> its first day
    not yet posted) from that day through `last`, summed exactly per account and kind, {(account
    id, kind): sum}; a kind with no accrual in the range is absent. The one place that sums what
    a posting posts (docs/interest.md, "Posting"). One query, on the accruals' (account, day,
    kind) index."""
    if not firsts:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT a.account_id, a.kind, SUM(a.accrual)
              FROM unnest(%s::text[], %s::date[]) AS f(account_id, first_day)
              JOIN interest_interestaccrual a
                ON a.account_id = f.account_id AND a.day >= f.first_day AND a.day <= %s
             GROUP BY a.account_id, a.kind
            """,
            [list(firsts), list(firsts.values()), last],
        )
        # numeric sums are exact; a Decimal read into a Fraction stays exact.
        return {(account_id, kind): Fraction(total) for account_id, kind, total in cursor}


def latest_postings(*, account_ids: list[str]) -> dict[tuple[str, str], InterestPosting]:
    """Each account's last posting of each kind, {(account id, kind): row}: its `last_day`
    (what is posted through) and `carried_out` (the residue the next posting carries in)."""
    rows = (
        InterestPosting.objects.filter(account_id__in=account_ids)
        .order_by("account_id", "kind", "-last_day")
        .distinct("account_id", "kind")
    )
    return {(row.account_id, row.kind): row for row in rows}
