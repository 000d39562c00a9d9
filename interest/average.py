"""Interest on the average daily balance (docs/interest.md, "Average daily balance"): pure, exact
(`Fraction`).

A day under terms of `balance_method` `average_daily` belongs to its posting period (the
calendar month, quarter or year of the terms' `posting_frequency`, in the institution's dates;
`period_first`). The period's days so far that are averaged, S, are those under such terms on
which the account was open. Never netted, each side is averaged over all of S:

- the deposit average A+ = (sum over S of max(balance, 0)) / |S|;
- the overdraft average A- = (sum over S of max(-balance, 0)) / |S|.

The period's interest to a day is what each day of S, under its own terms and day count, earns
on the averages: sum over S of interest(A+ under the day's tiers, minimum and rate) * fraction
and of A- * overdraft rate * fraction. The day's accrual, per side, is the period's interest to
it less the period's interest to the day before (0 on the period's first day). So a period's
accruals add up to the interest on its average daily balances, tiers and minimum chosen by the
average; a day's accrual may be negative (a lower average); a day may have both sides when the
period had positive and negative days.
"""

from dataclasses import dataclass
from datetime import date
from fractions import Fraction

from .calculation import Band, Day, Kind, accrual_of, deposit_bands, interest_day
from .daycount import day_fraction
from .models import InterestTerms
from .periods import period_of


def period_first(day: date, frequency: str) -> date:
    """The first day of the posting period of `day` under `frequency` (`interest.periods`:
    calendar months, quarters, years; `day` a date in the institution's time zone). `at_close`
    has no calendar period (ValueError): average daily balances are refused with it
    (`interest.services`)."""
    return period_of(frequency, day)[0]


@dataclass(frozen=True)
class Side:
    """One side of an average day: deposit (what positive balances earn) or overdraft (what
    negative ones owe, positive)."""

    balance: Fraction  # the period-to-date average, exact (minor units)
    bands: tuple[Band, ...]  # its parts and their rates (the day's terms); none: nothing accrues
    to_date: Fraction  # the period's interest through the day
    accrual: Fraction  # to_date less the day before's


@dataclass(frozen=True)
class Average:
    first: date  # the period's first day
    days: int  # the days averaged so far (S)
    deposit: Side
    overdraft: Side


class _Period:
    """The running sums of one period's averaged days."""

    def __init__(self, first: date):
        self.first = first
        self.days = 0
        self.positive = 0  # sum of max(balance, 0)
        self.negative = 0  # sum of max(-balance, 0)
        self.fractions: dict[str, tuple[InterestTerms, Fraction]] = {}  # terms id -> sum
        self.to_date = {Kind.DEPOSIT: Fraction(0), Kind.OVERDRAFT: Fraction(0)}

    def add(self, balance: int, terms: InterestTerms, fraction: Fraction) -> None:
        balance = int(balance)  # a sum read from the database may be a Decimal
        self.days += 1
        self.positive += max(balance, 0)
        self.negative += max(-balance, 0)
        held = self.fractions.get(terms.pk, (terms, Fraction(0)))[1]
        self.fractions[terms.pk] = (terms, held + fraction)

    def interest(self, terms: InterestTerms) -> tuple[Fraction, Fraction, tuple, tuple]:
        """(A+, A-, the bands of each under `terms`) and the period's interest to date of each
        side, as {kind: Fraction}, set on the period."""
        positive = Fraction(self.positive, self.days) if self.days else Fraction(0)
        negative = Fraction(self.negative, self.days) if self.days else Fraction(0)
        totals = {Kind.DEPOSIT: Fraction(0), Kind.OVERDRAFT: Fraction(0)}
        for row, fraction in self.fractions.values():
            totals[Kind.DEPOSIT] += accrual_of(_deposit(positive, row), fraction)
            totals[Kind.OVERDRAFT] += accrual_of(_overdraft(negative, row), fraction)
        self.to_date = totals
        return positive, negative, _deposit(positive, terms), _overdraft(negative, terms)


def _deposit(average: Fraction, terms: InterestTerms) -> tuple[Band, ...]:
    if average > 0 and average >= terms.minimum_balance:
        return deposit_bands(average, terms.deposit_tiers, terms.tiering)
    return ()


def _overdraft(average: Fraction, terms: InterestTerms) -> tuple[Band, ...]:
    return (Band(average, terms.overdraft_rate),) if average > 0 else ()


def is_average(terms: InterestTerms | None) -> bool:
    return terms is not None and terms.balance_method == InterestTerms.BalanceMethod.AVERAGE_DAILY


def average_days(
    days: list[tuple[date, int, InterestTerms | None]], opened: date | None = None
) -> list[Day]:
    """Each of `days` (consecutive (day, end-of-day balance, terms in effect)) calculated: by
    `interest_day` under daily terms, on the averages under average daily terms (module
    docstring; `Day.kind` "average", `Day.average` the sides). The list must start on or before
    the period's first day of every average day in it (`period_first`), else the averages would
    miss days. Days before `opened` (the account's first day) are not averaged."""
    result, period = [], None
    for day, balance, terms in days:
        if not is_average(terms):
            result.append(interest_day(day, balance, terms))
            continue
        first = period_first(day, terms.posting_frequency)
        if period is None or period.first != first:
            period = _Period(first)
        before = dict(period.to_date)
        fraction = day_fraction(terms.day_count, day)
        if opened is None or day >= opened:
            period.add(balance, terms, fraction)
        positive, negative, deposit, overdraft = period.interest(terms)
        average = Average(
            first,
            period.days,
            Side(
                positive,
                deposit,
                period.to_date[Kind.DEPOSIT],
                period.to_date[Kind.DEPOSIT] - before[Kind.DEPOSIT],
            ),
            Side(
                negative,
                overdraft,
                period.to_date[Kind.OVERDRAFT],
                period.to_date[Kind.OVERDRAFT] - before[Kind.OVERDRAFT],
            ),
        )
        result.append(Day(day, balance, Kind.AVERAGE, (), fraction, Fraction(0), terms.pk, average))
    return result
