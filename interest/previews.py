"""What a product's accounts would have accrued over a span of ended days under proposed terms,
beside what they accrued under the terms in effect, from the balance history by value date
(docs/interest.md, "Previews"). It writes nothing.

The work is accounts x days; a page is at most MAX_ACCOUNT_DAYS of it (accounts by id, as many
as fit), and the answer says where the next page starts. Per batch of BATCH_SIZE accounts, one
query reads every balance of the span (`accounts.selectors.value_balances_over`). The
calculation is `calculation.interest_day`, asked once per distinct (terms, day fraction,
balance): a day's interest depends on its day only through its fraction, so each account-day
costs a dictionary count, and the exact sums are taken once per distinct key at the end.
"""

from collections import Counter
from dataclasses import dataclass, field
from datetime import date, timedelta
from fractions import Fraction
from zoneinfo import ZoneInfo

from accounts.models import Account, AccountProduct
from accounts.selectors import value_balances_over

from .calculation import Kind, interest_day
from .daycount import day_fraction
from .models import InterestTerms
from .selectors import MICROSECOND, end_of_day, terms_of_days

ONE_DAY = timedelta(days=1)
# A page's work: accounts x days. At most a year of days, so a page holds 1,366 accounts or
# more (500,000 // 366).
MAX_ACCOUNT_DAYS = 500_000
# Accounts per balance query: its arrays stay small and its rows few.
BATCH_SIZE = 500
KINDS = (Kind.DEPOSIT, Kind.OVERDRAFT)


@dataclass
class Preview:
    days: int
    accounts: int = 0  # of this page
    next_after: str | None = None  # the last account of the page, when more follow
    current: dict[str, Fraction] = field(default_factory=lambda: dict.fromkeys(KINDS, Fraction(0)))
    proposed: dict[str, Fraction] = field(default_factory=lambda: dict.fromkeys(KINDS, Fraction(0)))


def page_size(days: int) -> int:
    """Accounts a page holds for a span of `days` days."""
    return max(1, MAX_ACCOUNT_DAYS // days)


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
    unsaved `InterestTerms`, applied to every day). Reads only."""
    zone = ZoneInfo(product.institution.time_zone)
    days = [first + ONE_DAY * n for n in range((last - first).days + 1)]
    # Just before the next day starts, as interest_days and the accrual job read a day.
    instants = [end_of_day(day, zone) - MICROSECOND for day in days]
    current_terms = _terms_each_day(product, days)
    # Per day: the current terms and their fraction (None: no terms yet), the proposed
    # fraction; and a day of each such key, to compute its interest once.
    current_keys = [
        None if terms is None else (terms.pk, day_fraction(terms.day_count, day))
        for terms, day in zip(current_terms, days, strict=True)
    ]
    proposed_keys = [("proposed", day_fraction(proposed.day_count, day)) for day in days]
    day_of = {}
    for day, current_key, proposed_key in zip(days, current_keys, proposed_keys, strict=True):
        day_of.setdefault(current_key, day)
        day_of.setdefault(proposed_key, day)
    size = page_size(len(days))
    accounts = list(
        Account.objects.filter(
            institution=product.institution,
            kind=Account.Kind.CUSTOMER,
            product=product,
            created_at__lte=instants[-1],
            pk__gt=after,
        )
        .order_by("pk")
        .values_list("pk", flat=True)[: size + 1]
    )
    preview = Preview(days=len(days))
    if len(accounts) > size:
        accounts = accounts[:size]
        preview.next_after = accounts[-1]
    preview.accounts = len(accounts)
    # (terms id, fraction, balance) -> account-days, current and proposed apart: a day's
    # interest depends on its day only through its fraction.
    current_counts: Counter = Counter()
    proposed_counts: Counter = Counter()
    for start in range(0, len(accounts), BATCH_SIZE):
        balances = value_balances_over(
            account_ids=accounts[start : start + BATCH_SIZE], instants=instants
        )
        for series in balances.values():
            for balance, current_key, proposed_key in zip(
                series, current_keys, proposed_keys, strict=True
            ):
                if balance == 0:
                    continue  # no interest under any terms
                if current_key is not None:
                    current_counts[(*current_key, balance)] += 1
                proposed_counts[(*proposed_key, balance)] += 1
    terms_by_id = {terms.pk: terms for terms in current_terms if terms is not None}
    terms_by_id["proposed"] = proposed
    for totals, counts in ((preview.current, current_counts), (preview.proposed, proposed_counts)):
        for (terms_id, fraction, balance), count in counts.items():
            calculated = interest_day(day_of[(terms_id, fraction)], balance, terms_by_id[terms_id])
            if calculated.kind != Kind.NONE:
                totals[calculated.kind] += calculated.accrual * count
    return preview


def _terms_each_day(product: AccountProduct, days: list[date]) -> list[InterestTerms | None]:
    terms = terms_of_days(product_id=product.pk, first=days[0], last=days[-1])
    result, current, position = [], None, 0
    for day in days:
        while position < len(terms) and terms[position].effective_date <= day:
            current, position = terms[position], position + 1
        result.append(current)
    return result
