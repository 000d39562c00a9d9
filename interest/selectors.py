"""Reads of interest: a product's terms, and an account's days computed from its balances by
value date (docs/interest.md)."""

from datetime import date, datetime, time, timedelta
from fractions import Fraction
from zoneinfo import ZoneInfo

from django.db import connection
from django.utils import timezone

from accounts.models import Account, AccountProduct
from accounts.selectors import value_balances_at

from .average import average_days, is_average, period_first
from .calculation import Day
from .models import InterestAdjustment, InterestPosting, InterestTerms
from .terms import overrides_by_account, terms_in_effect

ONE_DAY = timedelta(days=1)
MICROSECOND = timedelta(microseconds=1)
# The most days one read computes (a year, a leap year's included).
MAX_DAYS = 366


def interest_terms_list(*, product: AccountProduct):
    """A product's terms, in effective date order."""
    return InterestTerms.objects.filter(product=product).order_by("effective_date", "id")


def interest_overrides_list(*, account: Account):
    """An account's overrides of its product's terms, in effective date order."""
    return InterestTerms.objects.filter(account=account).order_by("effective_date", "id")


def terms_of_days(*, product_id: str | None, first: date, last: date) -> list[InterestTerms]:
    """The product's terms in effect on some day of [first, last], in effective date order: the
    last one from `first` or before, and those from a later day up to `last`. One query."""
    if product_id is None:  # an account without a product (filtering on None: the overrides)
        return []
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
    calculation. Three queries whatever the range: the product's terms, the account's overrides
    (`interest.terms.terms_in_effect` picks each day's), and the balances
    (`value_balances_at`), from the first day's posting period's start when a day of the range
    is under average daily balances (`interest.average`)."""
    if last < first or (last - first).days + 1 > MAX_DAYS:
        raise ValueError(f"A range of 1 to {MAX_DAYS} days, not {first} to {last}.")
    zone = ZoneInfo(time_zone)
    # From the first day's year: an average day's period (a year at most) starts no earlier.
    terms = terms_of_days(product_id=account.product_id, first=date(first.year, 1, 1), last=last)
    overrides = overrides_by_account(account=account, effective_date__lte=last).get(account.pk, [])
    start = first
    for n in range((last - first).days + 1):
        day = first + timedelta(days=n)
        in_effect = terms_in_effect(terms, overrides, day)
        if is_average(in_effect):
            start = min(start, period_first(day, in_effect.posting_frequency))
    days = [start + timedelta(days=n) for n in range((last - start).days + 1)]
    # Just before the next day starts: money at exactly midnight is the next day's, as on a
    # statement (PostgreSQL keeps microseconds, so "at or before end - 1 us" is "before end").
    balances = value_balances_at(
        account=account, instants=[end_of_day(d, zone) - MICROSECOND for d in days]
    )
    calculated = average_days(
        [
            (day, balance, terms_in_effect(terms, overrides, day))
            for day, balance in zip(days, balances, strict=True)
        ],
        opened=timezone.localtime(account.created_at, zone).date(),
    )
    return [day for day in calculated if day.day >= first]


def adjustments_in(
    *, account_ids: list[str], first: date, last: date
) -> dict[tuple[str, str], Fraction]:
    """The adjustments of back-valued money (`InterestAdjustment`) found on a day of [first,
    last], summed exactly per (account, kind): what a posting of that period adds to the
    period's accruals (docs/interest.md, "Back-valued money"). One query on
    (account, found_on)."""
    sums: dict[tuple[str, str], Fraction] = {}
    for account_id, kind, difference in InterestAdjustment.objects.filter(
        account_id__in=list(account_ids), found_on__gte=first, found_on__lte=last
    ).values_list("account_id", "kind", "difference"):
        # Summed as fractions (exact: the rows have PLACES places), never in a Decimal context.
        sums[(account_id, kind)] = sums.get((account_id, kind), Fraction(0)) + Fraction(difference)
    return sums


def period_accruals(*, firsts: dict[str, date], last: date) -> dict[tuple[str, str], Fraction]:
    """The postable interest: each account's accruals (`firsts`: account id -> its first day
    not yet posted) from that day through `last`, plus its adjustments of back-valued money
    found on those days (`adjustments_in`, by `found_on`: docs/interest.md, "Back-valued
    money"), summed exactly per account and kind, {(account id, kind): sum}; a kind with
    neither in the range is absent. The one place that sums what a posting posts
    (docs/interest.md, "Posting"). One query on the accruals' (account, day, kind) index, and
    one on the adjustments' (account, found_on) per distinct first day (a period's accounts
    share one; first postings start on their opening days)."""
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
        sums = {(account_id, kind): Fraction(total) for account_id, kind, total in cursor}
    by_first: dict[date, list[str]] = {}
    for account_id, first in firsts.items():
        by_first.setdefault(first, []).append(account_id)
    for first, account_ids in by_first.items():
        if first > last:
            continue
        for key, total in adjustments_in(account_ids=account_ids, first=first, last=last).items():
            sums[key] = sums.get(key, Fraction(0)) + total
    return sums


def period_balances(*, firsts: dict[str, date], last: date) -> dict[tuple[str, str], int]:
    """The sum over each account's days from its first day (`firsts`) through `last` of the
    part of the day's end-of-day balance by value date that earned (deposit: above 0) or owed
    (overdraft: below 0) interest of each kind, {(account id, kind): sum of minor units}: a
    day's balance as its accrual row holds it, or as its last adjustment found by `last` holds
    it (the day as it is now); a day with neither counts 0. What a posting's effective rate
    divides by (docs/interest.md, "On statements"). One query on the accruals' (account, day,
    kind) index and one pass over the accounts' adjustments."""
    if not firsts:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT account_id, kind,
                   SUM(CASE WHEN kind = 'deposit' THEN GREATEST(balance, 0)
                            ELSE GREATEST(-balance, 0) END)
              FROM (
                SELECT DISTINCT ON (x.account_id, x.day, x.kind) x.account_id, x.kind, x.balance
                  FROM (
                    SELECT a.account_id, a.day, a.kind, a.balance, 0 AS later, NULL::bigint AS n
                      FROM unnest(%(ids)s::text[], %(firsts)s::date[]) AS f(account_id, first_day)
                      JOIN interest_interestaccrual a
                        ON a.account_id = f.account_id AND a.day >= f.first_day
                       AND a.day <= %(last)s
                    UNION ALL
                    SELECT j.account_id, j.day, j.kind, j.balance, 1, j.id
                      FROM unnest(%(ids)s::text[], %(firsts)s::date[]) AS f(account_id, first_day)
                      JOIN interest_interestadjustment j
                        ON j.account_id = f.account_id AND j.day >= f.first_day
                       AND j.day <= %(last)s AND j.found_on <= %(last)s
                  ) AS x
                 ORDER BY x.account_id, x.day, x.kind, x.later DESC, x.n DESC
              ) AS d
             GROUP BY account_id, kind
            """,
            {"ids": list(firsts), "firsts": list(firsts.values()), "last": last},
        )
        return {(account_id, kind): int(total) for account_id, kind, total in cursor}


def latest_postings(*, account_ids: list[str]) -> dict[tuple[str, str], InterestPosting]:
    """Each account's last posting of each kind, {(account id, kind): row}: its `last_day`
    (what is posted through) and `carried_out` (the residue the next posting carries in)."""
    rows = (
        InterestPosting.objects.filter(account_id__in=account_ids)
        .order_by("account_id", "kind", "-last_day")
        .distinct("account_id", "kind")
    )
    return {(row.account_id, row.kind): row for row in rows}
