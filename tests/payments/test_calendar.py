"""The rails' calendars (payments.calendar; docs/calendar.md, "A rail's calendar"): the
Federal Reserve's business days, from its published rule: the federal holidays, a Sunday one
closing the Monday after, a Saturday one closing nothing; and TARGET2's: weekdays but its six
closing days, on their own dates."""

from datetime import date, timedelta

import pytest

from payments.calendar import (
    FEDERAL_HOLIDAYS,
    federal_holidays,
    is_fed_business_day,
    is_target2_business_day,
    target2_closing_days,
)

D = date.fromisoformat


@pytest.mark.parametrize(
    ("day", "open_"),
    [
        ("2026-07-03", True),  # Friday; 4 July 2026 is a Saturday: the Fed opens the Friday
        ("2026-07-06", True),  # nor does it close the Monday after a Saturday holiday
        ("2027-07-05", False),  # Monday; 4 July 2027 is a Sunday: closed the Monday after
        ("2026-06-19", False),  # Juneteenth, a Friday
        ("2027-06-18", True),  # Friday; Juneteenth 2027 is a Saturday
        ("2027-10-11", False),  # Columbus Day, the second Monday of October
        ("2027-11-11", False),  # Veterans Day, a Thursday
        ("2028-11-10", True),  # Friday; Veterans Day 2028 is a Saturday
        ("2027-12-24", True),  # Friday; Christmas 2027 is a Saturday
        ("2027-12-27", True),  # and the Monday after it
        ("2027-12-31", True),  # Friday; New Year's Day 2028 is a Saturday
        ("2022-12-26", False),  # Monday; Christmas 2022 was a Sunday
        ("2023-01-02", False),  # Monday; New Year's Day 2023 was a Sunday
        ("2026-11-26", False),  # Thanksgiving
        ("2026-11-27", True),  # the day after Thanksgiving: open
        ("2026-04-03", True),  # Good Friday: the stock exchanges close, the Fed does not
        # Federal offices closed by executive order, the Fed's services ran:
        ("2024-12-24", True),  # Christmas Eve 2024
        ("2025-01-09", True),  # the national day of mourning for President Carter
        ("2026-11-28", False),  # a Saturday
        ("2026-11-29", False),  # a Sunday
        ("2026-11-30", True),  # a Monday
    ],
)
def test_the_feds_business_days(day, open_):
    assert is_fed_business_day(D(day)) is open_


@pytest.mark.parametrize("year", range(2022, 2041))
def test_the_eleven_federal_holidays_are_found_every_year(year):
    """A holiday `holidays` renamed would be missing here (and the rail open on it)."""
    assert sorted(federal_holidays(year).values()) == sorted(FEDERAL_HOLIDAYS)


@pytest.mark.parametrize(
    ("day", "open_"),
    [
        ("2026-01-01", False),  # New Year's Day, a Thursday
        ("2026-01-02", True),
        ("2026-04-03", False),  # Good Friday
        ("2026-04-06", False),  # Easter Monday
        ("2026-04-07", True),
        ("2026-05-01", False),  # 1 May, a Friday
        ("2027-05-01", False),  # a Saturday: closed as every Saturday
        ("2027-05-03", True),  # nothing moves to the Monday after
        ("2026-12-24", True),  # Christmas Eve: open
        ("2026-12-25", False),
        ("2026-12-26", False),  # a Saturday
        ("2027-12-27", True),  # 25 and 26 December 2027 are a weekend: Monday opens
        ("2026-12-31", True),  # New Year's Eve: open (closed in 1999 and 2001 only)
        ("2001-12-31", False),
        ("2026-11-26", True),  # Thanksgiving: the Fed's holiday, not TARGET2's
        ("2026-10-03", False),  # a Saturday (German Unity Day: not TARGET2's)
        ("2026-06-04", True),  # Corpus Christi: a national holiday, TARGET2 is open
    ],
)
def test_target2s_business_days(day, open_):
    assert is_target2_business_day(D(day)) is open_


@pytest.mark.parametrize("year", range(2002, 2041))
def test_the_six_closing_days_are_found_every_year(year):
    """A closing day `holidays` renamed or dropped would be missing here (and the rail open)."""
    found = target2_closing_days(year)
    assert len(found) == 6, found
    assert {(day.month, day.day) for day in found} >= {(1, 1), (5, 1), (12, 25), (12, 26)}
    easter = [day for day in found if day.month in (3, 4)]
    assert len(easter) == 2 and easter[1] - easter[0] == timedelta(days=3)  # Friday, Monday
