"""The exact daily calculation (docs/interest.md, "The daily calculation"), pure: months under
each day count computed by hand, a leap day, tiers whole and banded, a minimum balance, deposit
and overdraft never netted. No database: the terms are rows not saved."""

from datetime import date, timedelta
from decimal import Decimal
from fractions import Fraction

import pytest

from interest.calculation import Band, deposit_bands, interest_day
from interest.daycount import day_fraction, days360
from interest.models import InterestTerms


def terms(day_count="act_365f", tiers=(("0", "3.65"),), tiering="whole", **fields):
    return InterestTerms(
        id="iterm_test",
        deposit_tiers=[{"from_balance": int(start), "rate": rate} for start, rate in tiers],
        tiering=tiering,
        minimum_balance=fields.get("minimum_balance", 0),
        overdraft_rate=Decimal(fields.get("overdraft_rate", "0")),
        day_count=day_count,
    )


def month(first: date) -> list[date]:
    days = [first]
    while (days[-1] + timedelta(days=1)).month == first.month:
        days.append(days[-1] + timedelta(days=1))
    return days


def accrued(t, days, balance) -> Fraction:
    return sum((interest_day(d, balance, t).accrual for d in days), Fraction(0))


BALANCE = 1_000_000  # minor units (10,000.00)


@pytest.mark.parametrize(
    ("day_count", "rate", "first", "expected"),
    [
        # act/365F at 3.65 %: 1,000,000 * 3.65/100 / 365 = 100 a day, leap year or not.
        ("act_365f", "3.65", date(2023, 1, 1), 3100),  # 31 days
        ("act_365f", "3.65", date(2024, 2, 1), 2900),  # 29 days: the leap day counts 1/365
        # act/360 at 3.6 %: 1,000,000 * 3.6/100 / 360 = 100 a day.
        ("act_360", "3.6", date(2023, 1, 1), 3100),
        ("act_360", "3.6", date(2023, 2, 1), 2800),
        # act/act ISDA: a leap year's day is 1/366, so 3.66 % gives 100 a day in 2024 ...
        ("act_act_isda", "3.66", date(2024, 2, 1), 2900),
        # ... and 3.65 % gives 100 a day in 2023.
        ("act_act_isda", "3.65", date(2023, 2, 1), 2800),
        # 30E/360 at 3.6 %: 100 a 30/360 day, every month 30 of them: 3,000 a month.
        ("30_360", "3.6", date(2023, 1, 1), 3000),  # the 30th counts 0, the 31st 1
        ("30_360", "3.6", date(2023, 2, 1), 3000),  # the 28th counts 3
        ("30_360", "3.6", date(2024, 2, 1), 3000),  # the 28th 1, the 29th 2
        ("30_360", "3.6", date(2023, 4, 1), 3000),  # 30 days of 1
    ],
)
def test_a_month_under_each_day_count(day_count, rate, first, expected):
    assert accrued(terms(day_count, (("0", rate),)), month(first), BALANCE) == expected


def test_the_day_fractions():
    leap_day, common = date(2024, 2, 29), date(2023, 3, 1)
    assert day_fraction("act_365f", leap_day) == Fraction(1, 365)
    assert day_fraction("act_360", leap_day) == Fraction(1, 360)
    assert day_fraction("act_act_isda", leap_day) == Fraction(1, 366)
    assert day_fraction("act_act_isda", date(2024, 12, 31)) == Fraction(1, 366)
    assert day_fraction("act_act_isda", date(2025, 1, 1)) == Fraction(1, 365)
    assert day_fraction("act_act_isda", common) == Fraction(1, 365)
    # 30E/360: a 31st is read as the 30th.
    assert day_fraction("30_360", date(2023, 1, 30)) == 0
    assert day_fraction("30_360", date(2023, 1, 31)) == Fraction(1, 360)
    assert day_fraction("30_360", date(2023, 2, 28)) == Fraction(3, 360)
    assert day_fraction("30_360", leap_day) == Fraction(2, 360)
    assert day_fraction("30_360", date(2023, 12, 31)) == Fraction(1, 360)  # into a new year
    # Over any span the day's shares add up to the convention's fraction of the span.
    start = date(2023, 1, 17)
    for length in (1, 14, 15, 44, 400):
        end = start + timedelta(days=length)
        shares = sum(day_fraction("30_360", start + timedelta(days=n)) for n in range(length))
        assert shares == Fraction(days360(start, end), 360)


def test_tiers_whole_and_banded():
    tiers = (("0", "1"), ("100000", "2"), ("500000", "4"))
    # Whole: the whole balance at the rate of the tier it reaches.
    assert deposit_bands(300_000, terms(tiers=tiers).deposit_tiers, "whole") == (
        Band(300_000, Decimal(2)),
    )
    assert deposit_bands(99_999, terms(tiers=tiers).deposit_tiers, "whole") == (
        Band(99_999, Decimal(1)),
    )
    # Banded: 100,000 at 1 %, 200,000 at 2 %.
    assert deposit_bands(300_000, terms(tiers=tiers).deposit_tiers, "banded") == (
        Band(100_000, Decimal(1)),
        Band(200_000, Decimal(2)),
    )
    assert deposit_bands(600_000, terms(tiers=tiers).deposit_tiers, "banded") == (
        Band(100_000, Decimal(1)),
        Band(400_000, Decimal(2)),
        Band(100_000, Decimal(4)),
    )
    day = date(2023, 5, 2)
    # act/360, whole: 300,000 * 2/100 / 360 = 50/3; banded: (1,000 + 4,000) / 360 = 125/9.
    assert interest_day(day, 300_000, terms("act_360", tiers)).accrual == Fraction(50, 3)
    assert interest_day(day, 300_000, terms("act_360", tiers, "banded")).accrual == Fraction(125, 9)


def test_deposit_and_overdraft_days_are_never_netted():
    t = terms("act_360", (("0", "3.6"),), minimum_balance=5_000, overdraft_rate="18")
    day = date(2023, 5, 2)

    deposit = interest_day(day, 720_000, t)
    overdraft = interest_day(day, -720_000, t)
    below_minimum = interest_day(day, 4_999, t)
    zero = interest_day(day, 0, t)

    # 720,000 * 3.6/100 / 360 = 72 owed to the customer.
    assert (deposit.kind, deposit.accrual) == ("deposit", 72)
    # 720,000 * 18/100 / 360 = 360 owed by the customer: the overdraft rate, not the deposit's.
    assert (overdraft.kind, overdraft.accrual, overdraft.bands) == (
        "overdraft",
        360,
        (Band(720_000, Decimal(18)),),
    )
    assert (below_minimum.kind, below_minimum.accrual, below_minimum.bands) == ("none", 0, ())
    assert (zero.kind, zero.accrual) == ("none", 0)
    assert interest_day(day, 720_000, None).kind == "none"  # no terms yet: nothing accrues


def test_a_negative_deposit_rate_charges():
    t = terms("act_360", (("0", "-0.36"),))
    # 1,000,000 * -0.36/100 / 360 = -10 a day: the customer pays.
    assert interest_day(date(2023, 5, 2), 1_000_000, t).accrual == -10


def test_exact_not_rounded():
    # 1 minor unit at 1 % for an act/365F day: 1/36,500 of a minor unit, kept exactly.
    t = terms(tiers=(("0", "1"),))
    assert interest_day(date(2023, 5, 2), 1, t).accrual == Fraction(1, 36_500)
