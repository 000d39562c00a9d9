"""The rails' calendars: the Federal Reserve's business days and an institution's ACH days, and
TARGET2's business days and an institution's SEPA days (docs/calendar.md, "A rail's calendar";
docs/payments.md, "Cut-offs").

ACH settles only on the days the Federal Reserve Banks are open: Monday to Friday but the
federal holidays (5 U.S.C. 6103). A holiday on a Sunday closes the Monday after; one on a
Saturday closes nothing: the Fed is open the Friday before, where federal offices close it. The
holidays come from the `holidays` library's US federal calendar (its "government" category), on
their own dates, without the closings of federal offices by executive order it also lists
(Christmas Eve 2024, the national day of mourning of 9 January 2025): the Fed's services ran on
those. Nothing is stored: the calendar is computed, and a newer `holidays` brings a new holiday.

An **ACH day** of an institution is a day that is both its own business day
(`institutions.calendar`: it is closed otherwise) and a Fed business day (the rail settles
nothing otherwise). Windows run, effective entry dates fall, and the banking days of return
windows are counted, on ACH days only.

SEPA credit transfers and direct debits settle on **TARGET2 business days**: Monday to Friday
but TARGET2's closing days, New Year's Day, Good Friday, Easter Monday, 1 May, 25 and 26
December, on their own dates (a closing day on a weekend moves nothing). They come from the
`holidays` library's financial calendar of the European Central Bank (`ECB`), whose every day
is a closing day of TARGET2 (and of its "additional closing days" of 1999 and 2001). A **SEPA
day** of an institution is both its business day and TARGET2's. SEPA Instant runs every day of
the year and has no calendar.
"""

from datetime import date, datetime, time, timedelta
from functools import cache
from zoneinfo import ZoneInfo

import holidays
from django.utils import timezone

from cards.dates import add_months
from institutions.calendar import business_days_after, is_business_day
from institutions.models import Institution

# The federal holidays as `holidays` names them (language en_US): anything else in its federal
# calendar is a closing of federal offices, not of the Fed. tests/payments/test_calendar.py
# finds the eleven in every year, so a renamed one fails there rather than opening the rail.
FEDERAL_HOLIDAYS = frozenset(
    {
        "New Year's Day",
        "Birthday of Martin Luther King, Jr.",
        "Washington's Birthday",
        "Memorial Day",
        "Juneteenth National Independence Day",
        "Independence Day",
        "Labor Day",
        "Columbus Day",
        "Veterans Day",
        "Thanksgiving Day",
        "Christmas Day",
    }
)
SATURDAY, SUNDAY = 6, 7


@cache
def federal_holidays(year: int) -> dict[date, str]:
    """The federal holidays of `year` on their own dates (not moved off a weekend)."""
    calendar = holidays.US(
        years=year, observed=False, categories=holidays.GOVERNMENT, language="en_US"
    )
    found = {}
    for day in calendar:
        names = FEDERAL_HOLIDAYS.intersection(calendar.get_list(day))
        if names:
            found[day] = "; ".join(sorted(names))
    return found


@cache
def fed_closed_days(year: int) -> frozenset[date]:
    """The weekdays of `year` the Fed is closed: its holidays on a weekday, and the Monday after
    each on a Sunday (none falls on 31 December, so the Monday is in the same year)."""
    closed = set()
    for day in federal_holidays(year):
        if day.isoweekday() == SUNDAY:
            closed.add(day + timedelta(days=1))
        elif day.isoweekday() != SATURDAY:
            closed.add(day)
    return frozenset(closed)


def is_fed_business_day(day: date) -> bool:
    """A weekday the Federal Reserve Banks are open (module docstring)."""
    return day.isoweekday() < SATURDAY and day not in fed_closed_days(day.year)


def is_ach_day(institution: Institution, day: date) -> bool:
    """Both the institution's business day and the Fed's (the Fed's first: it reads nothing)."""
    return is_fed_business_day(day) and is_business_day(institution, day)


@cache
def target2_closing_days(year: int) -> dict[date, str]:
    """TARGET2's closing days of `year` (weekends aside), with their names."""
    calendar = holidays.financial_holidays("ECB", years=year)
    return {day: "; ".join(sorted(calendar.get_list(day))) for day in calendar}


def is_target2_business_day(day: date) -> bool:
    """A weekday TARGET2 is open (module docstring)."""
    return day.isoweekday() < SATURDAY and day not in target2_closing_days(day.year)


def target2_days_after(start: date, days: int) -> date:
    """The date `days` TARGET2 business days after `start`, `start` not counted (the EPC's
    windows count TARGET2's days, whatever the institution's)."""
    day = start
    while days > 0:
        day += timedelta(days=1)
        if is_target2_business_day(day):
            days -= 1
    return day


def is_sepa_day(institution: Institution, day: date) -> bool:
    """Both the institution's business day and TARGET2's (TARGET2's first: it reads nothing)."""
    return is_target2_business_day(day) and is_business_day(institution, day)


def sepa_days_after(institution: Institution, start: date, days: int) -> date:
    """`ach_days_after` on TARGET2's calendar: `days=0` is the first SEPA day on or after
    `start`."""
    return business_days_after(institution, start, days, also_open=is_target2_business_day)


def ach_days_after(institution: Institution, start: date, days: int) -> date:
    """The date `days` ACH days after `start`, `start` not counted; `days=0`: the first ACH day
    on or after `start` (`institutions.calendar.business_days_after`'s contract, on both
    calendars)."""
    return business_days_after(institution, start, days, also_open=is_fed_business_day)


def months_after(start: date, months: int) -> date:
    """The same day `months` calendar months after `start` (the 31st of a shorter month: its
    last day), the last day of the EPC's windows counted in months."""
    year, month = add_months(start.year, start.month, months)
    for day in range(start.day, 0, -1):
        try:
            return date(year, month, day)
        except ValueError:
            continue
    raise AssertionError("unreachable")


def window_instant(institution, window_date: date, window: str) -> datetime:
    """The cut-off's instant: `window` ("HH:MM") on `window_date` in the institution's zone (on
    a day the clocks change, the wall-clock time as it is that day)."""
    hours, minutes = (int(part) for part in window.split(":"))
    return datetime.combine(window_date, time(hours, minutes), ZoneInfo(institution.time_zone))


def local_now(institution) -> datetime:
    """Now, in the institution's zone."""
    return timezone.now().astimezone(ZoneInfo(institution.time_zone))
