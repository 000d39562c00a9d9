"""An institution's calendar: its business days and its local date (docs/calendar.md).

A business day of an institution is a date that is neither one of its weekend days
(`Institution.weekend_days`, ISO weekday numbers, Saturday and Sunday unless it says otherwise)
nor one of its holidays (`Holiday` rows). Dates are the institution's: an instant becomes a
date in its time zone (`local_date`), never in UTC or in the server's zone.

Deadlines count business days with `business_days_after` (dispute deadlines, issue 32): the
start date is not counted, so "10 business days after the notice" is the 10th business day
following the day of the notice, whatever that day is. It reads the holidays of the range it
walks in one query (a second only if more than a year of holidays lies in the range).
"""

from collections.abc import Callable
from datetime import date, datetime, timedelta
from math import ceil
from zoneinfo import ZoneInfo

from django.utils import timezone

from .models import Holiday, Institution

# The most business days counted at once: ten years and more of any deadline, and a bound on
# the dates a caller can make the walk cover.
MAX_BUSINESS_DAYS = 3660
# Calendar days read beyond the weekday-only estimate of the range, for its holidays.
HOLIDAY_MARGIN = timedelta(days=366)
ONE_DAY = timedelta(days=1)


def local_date(institution: Institution, instant: datetime) -> date:
    """The calendar date of `instant` (aware) in the institution's time zone: 2026-01-02T03:00Z
    is still 2026-01-01 in America/New_York. A naive datetime raises ValueError."""
    return timezone.localdate(instant, ZoneInfo(institution.time_zone))


def is_weekend_day(institution: Institution, day: date) -> bool:
    return day.isoweekday() in institution.weekend_days


def is_business_day(institution: Institution, day: date) -> bool:
    """Neither a weekend day of the institution nor one of its holidays (one query, none on a
    weekend day)."""
    if is_weekend_day(institution, day):
        return False
    return not Holiday.objects.filter(institution=institution, date=day).exists()


def business_days_after(
    institution: Institution,
    start: date,
    days: int,
    *,
    also_open: Callable[[date], bool] | None = None,
) -> date:
    """The date `days` business days after `start`, `start` itself not counted: with a
    Saturday-Sunday weekend, 1 business day after Friday 2026-01-02 is Monday 2026-01-05, and
    1 after Saturday 2026-01-03 is Monday too. `days=0` is `start` when it is a business day,
    else the next business day (the first business day on or after `start`).

    `also_open`: a second calendar a day must be open in too to count (a payment rail's,
    `payments.calendar`: the institution is open, but the rail settles nothing that day). It
    reads no database: the institution's holidays are still read in one query.

    `days` from 0 to MAX_BUSINESS_DAYS (3660); anything else raises ValueError."""
    if isinstance(days, bool) or not isinstance(days, int):
        raise TypeError("days must be an int.")
    if not 0 <= days <= MAX_BUSINESS_DAYS:
        raise ValueError(f"days must be from 0 to {MAX_BUSINESS_DAYS}, not {days}.")
    weekend = frozenset(institution.weekend_days)
    working_days_a_week = 7 - len(weekend)
    if days == 0:
        day, remaining = start - ONE_DAY, 1  # the first business day from `start` on
    else:
        day, remaining = start, days
    holidays: set[date] = set()
    known_until = day  # the holidays of (start, known_until] have been read
    while True:
        day += ONE_DAY
        if day > known_until:
            # Enough weeks for `remaining` business days without holidays, plus a margin.
            weeks = ceil(remaining / working_days_a_week) + 1
            known_until = day + timedelta(weeks=weeks) + HOLIDAY_MARGIN
            holidays.update(
                Holiday.objects.filter(
                    institution=institution, date__gte=day, date__lte=known_until
                ).values_list("date", flat=True)
            )
        if day.isoweekday() in weekend or day in holidays:
            continue
        if also_open is not None and not also_open(day):
            continue
        remaining -= 1
        if remaining == 0:
            return day
