"""What a product's accounts would have accrued over a span of ended days under proposed terms,
beside what they accrued under the terms in effect, from the balance history by value date
(docs/interest.md, "Previews"). It writes nothing.

Both sides are computed as the accrual job computes a day: each account's terms of each day by
`terms.terms_in_effect` (its override while one lasts, else the product's; on the proposed
side the product's terms are the proposed ones from the span's first day, an override still
wins), a daily day by `calculation.interest_day`, and an account with a day under average daily
terms by `average.average_days` over its days from the period's first day.

The work is accounts x days read; a page is at most MAX_ACCOUNT_DAYS of it (accounts by id, as
many as fit), and the answer says where the next page starts. Per batch of BATCH_SIZE accounts,
one query reads every balance of the days (`accounts.selectors.value_balances_over`) and one
its overrides. A daily day's interest depends on its day only through its fraction, so each
account-day costs a dictionary count of (terms, fraction, balance), and the exact sums are taken
once per distinct key at the end; an account with average days is computed day by day (its
days depend on each other), in Python, from the same balances.
"""

from collections import Counter
from dataclasses import dataclass, field
from datetime import date, timedelta
from fractions import Fraction
from zoneinfo import ZoneInfo

from django.db.models import Q
from django.utils import timezone

from accounts.models import Account, AccountProduct
from accounts.selectors import value_balances_over

from .average import average_days, is_average, period_first
from .calculation import Kind, interest_day
from .daycount import day_fraction
from .models import InterestTerms
from .selectors import MICROSECOND, end_of_day, terms_of_days
from .terms import overrides_by_account, terms_in_effect

ONE_DAY = timedelta(days=1)
# A page's work: accounts x days read. At most a year of days, so a page holds 1,366 accounts
# or more (500,000 // 366).
MAX_ACCOUNT_DAYS = 500_000
# When average daily terms are in play: such an account's days are computed one by one
# (`average.average_days`, about 30 us of CPU an account-day and side on the shared machine),
# where a daily day is a count; a tenth of the work keeps a page to seconds. The days read are
# then up to 365 more before the span, so a page holds 68 accounts or more (50,000 // 731).
MAX_AVERAGE_ACCOUNT_DAYS = 50_000
# Accounts per balance query: its arrays stay small and its rows few.
BATCH_SIZE = 500
KINDS = (Kind.DEPOSIT, Kind.OVERDRAFT)
AVERAGE_DAILY = InterestTerms.BalanceMethod.AVERAGE_DAILY


@dataclass
class Preview:
    days: int
    accounts: int = 0  # of this page
    next_after: str | None = None  # the last account of the page, when more follow
    current: dict[str, Fraction] = field(default_factory=lambda: dict.fromkeys(KINDS, Fraction(0)))
    proposed: dict[str, Fraction] = field(default_factory=lambda: dict.fromkeys(KINDS, Fraction(0)))


def page_size(days: int, averaged: bool = False) -> int:
    """Accounts a page holds when `days` days of each are read; `averaged`: average daily terms
    are in play."""
    return max(1, (MAX_AVERAGE_ACCOUNT_DAYS if averaged else MAX_ACCOUNT_DAYS) // days)


class _Side:
    """One side of a preview (current or proposed): the product's terms it applies, and its
    running work over the accounts."""

    def __init__(self, product_terms: list[InterestTerms], days: list[date], lead: int):
        self.product_terms = product_terms
        self.days = days  # every day read, from the earliest period's first day
        self.lead = lead  # days read before the span, for averages only
        # (terms id, fraction, balance) -> account-days of daily days; a day of each (terms id,
        # fraction) and the terms, to compute each key once.
        self.counts: Counter = Counter()
        self.day_of: dict = {}
        self.terms_by_id: dict[str, InterestTerms] = {}
        self.totals = dict.fromkeys(KINDS, Fraction(0))
        # Accounts without an override share one plan.
        self.shared = self._plan([])

    def _plan(self, overrides: list[InterestTerms]) -> tuple[list, list | None]:
        """The terms of each day read, and when no day of the account is under average daily
        terms, each span day's key (None: no terms) for the counts; else None."""
        each = [terms_in_effect(self.product_terms, overrides, day) for day in self.days]
        if any(is_average(terms) for terms in each):
            return each, None
        keys = []
        for terms, day in zip(each[self.lead :], self.days[self.lead :], strict=True):
            if terms is None:
                keys.append(None)
                continue
            key = (terms.pk, day_fraction(terms.day_count, day))
            self.day_of.setdefault(key, day)
            self.terms_by_id[terms.pk] = terms
            keys.append(key)
        return each, keys

    def add(self, balances: list[int], overrides: list[InterestTerms], opened: date) -> None:
        """One account: its balance at each day read's end, its overrides, the day it opened."""
        each, keys = self._plan(overrides) if overrides else self.shared
        if keys is None:
            calculated = average_days(list(zip(self.days, balances, each, strict=True)), opened)
            for one in calculated[self.lead :]:
                for kind, accrual in one.accruals().items():
                    self.totals[kind] += accrual
            return
        for balance, key in zip(balances[self.lead :], keys, strict=True):
            if balance != 0 and key is not None:  # a zero balance earns nothing under any terms
                self.counts[(*key, balance)] += 1

    def finish(self) -> dict[str, Fraction]:
        for (terms_id, fraction, balance), count in self.counts.items():
            terms = self.terms_by_id[terms_id]
            one = interest_day(self.day_of[(terms_id, fraction)], balance, terms)
            for kind, accrual in one.accruals().items():
                self.totals[kind] += accrual * count
        return self.totals


def interest_preview(
    *,
    product: AccountProduct,
    proposed: InterestTerms,
    first: date,
    last: date,
    after: str = "",
) -> Preview:
    """The product's customer accounts (those opened by the last day's end, by id after
    `after`, one page) over [first, last] (the institution's dates, at most a year): the
    exact interest of each kind under the terms in effect each day and under `proposed` (an
    unsaved `InterestTerms` of the product, its `effective_date` `first`: the product's terms
    from then, an account's override still applying while it lasts). Reads only."""
    if proposed.effective_date != first:
        raise ValueError("The proposed terms take effect on the span's first day.")
    zone = ZoneInfo(product.institution.time_zone)
    # From the first day's year: an average day's period (a year at most) starts no earlier.
    product_terms = terms_of_days(product_id=product.pk, first=date(first.year, 1, 1), last=last)
    start, averaged = _start(product, [*product_terms, proposed], first, last)
    days = [start + ONE_DAY * n for n in range((last - start).days + 1)]
    # Just before the next day starts, as interest_days and the accrual job read a day.
    instants = [end_of_day(day, zone) - MICROSECOND for day in days]
    lead = (first - start).days
    current = _Side(product_terms, days, lead)
    before = [terms for terms in product_terms if terms.effective_date < first]
    changed = _Side([*before, proposed], days, lead)
    size = page_size(len(days), averaged)
    accounts = list(
        Account.objects.filter(
            institution=product.institution,
            kind=Account.Kind.CUSTOMER,
            product=product,
            created_at__lte=instants[-1],
            pk__gt=after,
        )
        .order_by("pk")
        .values_list("pk", "created_at")[: size + 1]
    )
    preview = Preview(days=len(days) - lead)
    if len(accounts) > size:
        accounts = accounts[:size]
        preview.next_after = accounts[-1][0]
    preview.accounts = len(accounts)
    for position in range(0, len(accounts), BATCH_SIZE):
        batch = dict(accounts[position : position + BATCH_SIZE])
        balances = value_balances_over(account_ids=list(batch), instants=instants)
        overrides = overrides_by_account(account_id__in=list(batch), effective_date__lte=last)
        for account_id, series in balances.items():
            opened = timezone.localtime(batch[account_id], zone).date()
            for side in (current, changed):
                side.add(series, overrides.get(account_id, []), opened)
    preview.current, preview.proposed = current.finish(), changed.finish()
    return preview


def _start(
    product: AccountProduct, terms: list[InterestTerms], first: date, last: date
) -> tuple[date, bool]:
    """The first day to read: `first`, or the earliest first day of a posting period of `first`
    under average daily terms that the product's accounts may have on a day of the span (the
    product's terms, the proposed ones, its accounts' overrides: one query of the overrides'
    frequencies). A period is a calendar month, quarter or year, so a later day's starts no
    earlier. And whether any such terms are in play."""
    frequencies = {row.posting_frequency for row in terms if is_average(row)}
    frequencies.update(
        InterestTerms.objects.filter(
            Q(end_date__isnull=True) | Q(end_date__gte=first),
            account__product=product,
            account__institution=product.institution,
            balance_method=AVERAGE_DAILY,
            effective_date__lte=last,
        )
        .values_list("posting_frequency", flat=True)
        .distinct()
    )
    start = min([first, *(period_first(first, frequency) for frequency in frequencies)])
    return start, bool(frequencies)
