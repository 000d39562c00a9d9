"""Day-count fractions of one day (docs/interest.md, "Day counts"): the share of a year that
a day's interest is for. Exact (`Fraction`), pure.

- `act_365f`: 1/365 every day, leap years too.
- `act_360`: 1/360 every day.
- `act_act_isda`: 1/366 on a day of a leap year, else 1/365 (ISDA 2006 4.16(b): the days of a
  period in each year over that year's length).
- `30_360`: 30E/360 (ISDA 2006 4.16(g), the Eurobond basis). Day d's share is
  days360(d, d + 1)/360, where days360 counts with every month 30 days and a 31st read as the
  30th. So the 30th of a 31-day month counts 0 and the 31st counts 1 (from the "30th" to the
  1st of the next month); February's last day counts what makes the month 30 days (3 on the
  28th of a common year, 2 on the 29th of a leap year). Summed over any span of days, the
  shares are exactly days360(first, day after last)/360: the fraction of the span under the
  convention, whatever the span.
"""

import calendar
from datetime import date, timedelta
from fractions import Fraction

from .models import InterestTerms

ONE_DAY = timedelta(days=1)
DayCount = InterestTerms.DayCount


def days360(start: date, end: date) -> int:
    """30E/360's days from `start` to `end`: a 31st is the 30th, months are 30 days."""
    d1, d2 = min(start.day, 30), min(end.day, 30)
    return 360 * (end.year - start.year) + 30 * (end.month - start.month) + d2 - d1


def day_fraction(day_count: str, day: date) -> Fraction:
    """The share of a year of `day` under `day_count` (a `DayCount` value)."""
    if day_count == DayCount.ACT_365F:
        return Fraction(1, 365)
    if day_count == DayCount.ACT_360:
        return Fraction(1, 360)
    if day_count == DayCount.ACT_ACT_ISDA:
        return Fraction(1, 366 if calendar.isleap(day.year) else 365)
    if day_count == DayCount.THIRTY_360:
        return Fraction(days360(day, day + ONE_DAY), 360)
    raise ValueError(f"Unknown day count {day_count!r}.")
