"""Posting periods (docs/interest.md, "Posting"): pure functions of dates in the institution's
time zone (the days the accrual job stores are such dates already).

- `monthly`, `quarterly`, `yearly`: calendar periods, a month, a quarter (January, April, July,
  October) or a year, the last day included;
- `at_close`: one period from the account's opening to its close, which only the settlement at
  close posts (`period_of` answers it up to an open end, `None`).
"""

from datetime import date, timedelta

from .models import InterestTerms

Frequency = InterestTerms.PostingFrequency
ONE_DAY = timedelta(days=1)
MONTHS = {Frequency.MONTHLY: 1, Frequency.QUARTERLY: 3, Frequency.YEARLY: 12}


def _month_start(day: date, months: int) -> date:
    """The first day of the period of `months` months holding `day` (periods start in January)."""
    return date(day.year, (day.month - 1) // months * months + 1, 1)


def _months_later(day: date, months: int) -> date:
    index = day.month - 1 + months
    return date(day.year + index // 12, index % 12 + 1, 1)


def period_of(frequency: str, day: date, *, opened: date | None = None) -> tuple[date, date | None]:
    """(first, last) days of the posting period of `frequency` holding `day`. `at_close`: from
    `opened` (the account's opening day) with no last day (None: it ends when the account
    closes)."""
    if frequency == Frequency.AT_CLOSE:
        if opened is None:
            raise ValueError("An at_close period starts on the account's opening day.")
        return opened, None
    months = MONTHS[frequency]
    first = _month_start(day, months)
    return first, _months_later(first, months) - ONE_DAY


def is_period_end(frequency: str, day: date) -> bool:
    """Whether `day` is the last day of a period of `frequency` (never for `at_close`)."""
    if frequency == Frequency.AT_CLOSE:
        return False
    return period_of(frequency, day)[1] == day


def period_ends(frequency: str, after: date, through: date) -> list[date]:
    """The last days of the periods of `frequency` that end in (after, through], in order: the
    periods a posting run after `after` up to `through` has to post (none for `at_close`)."""
    if frequency == Frequency.AT_CLOSE or through <= after:
        return []
    ends = []
    last = period_of(frequency, after + ONE_DAY)[1]
    while last <= through:
        ends.append(last)
        last = period_of(frequency, last + ONE_DAY)[1]
    return ends
