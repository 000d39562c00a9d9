"""Posting periods and a posting's arithmetic, pure (docs/interest.md, "Posting"): calendar
periods, the three roundings, the tax withheld, and the property the issue asks for: over any
span, the postings are the exact accruals within one minor unit, the residue carried."""

from datetime import date
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interest.periods import is_period_end, period_ends, period_of
from interest.posting import posting_split, round_minor, withholding_tax


def test_calendar_periods_and_their_ends():
    assert period_of("monthly", date(2028, 2, 10)) == (date(2028, 2, 1), date(2028, 2, 29))
    assert period_of("monthly", date(2027, 12, 31)) == (date(2027, 12, 1), date(2027, 12, 31))
    assert period_of("quarterly", date(2027, 5, 31)) == (date(2027, 4, 1), date(2027, 6, 30))
    assert period_of("quarterly", date(2027, 12, 1)) == (date(2027, 10, 1), date(2027, 12, 31))
    assert period_of("yearly", date(2027, 7, 4)) == (date(2027, 1, 1), date(2027, 12, 31))
    assert period_of("at_close", date(2027, 7, 4), opened=date(2027, 3, 2)) == (
        date(2027, 3, 2),
        None,
    )
    with pytest.raises(ValueError):
        period_of("at_close", date(2027, 7, 4))
    assert is_period_end("monthly", date(2027, 2, 28))
    assert not is_period_end("monthly", date(2028, 2, 28))  # a leap year: the 29th
    assert not is_period_end("at_close", date(2027, 12, 31))
    # Catching up: the ends after the 15 January up to the 1 April.
    assert period_ends("monthly", date(2027, 1, 15), date(2027, 4, 1)) == [
        date(2027, 1, 31),
        date(2027, 2, 28),
        date(2027, 3, 31),
    ]
    assert period_ends("quarterly", date(2026, 12, 31), date(2027, 6, 30)) == [
        date(2027, 3, 31),
        date(2027, 6, 30),
    ]
    assert period_ends("yearly", date(2027, 1, 1), date(2027, 12, 30)) == []
    assert period_ends("at_close", date(2027, 1, 1), date(2027, 12, 31)) == []


def test_the_three_roundings_and_the_tax():
    half = Fraction(5, 2)
    assert [round_minor(v, "half_even") for v in (half, -half, Fraction(7, 2))] == [2, -2, 4]
    assert [round_minor(v, "half_up") for v in (half, -half, Fraction(249, 100))] == [3, -3, 2]
    assert [round_minor(v, "down") for v in (Fraction(299, 100), Fraction(-299, 100))] == [2, -2]
    # 11.6 accrued, -0.4 carried in: 11.2 -> 11 (half even), 0.2 carried out.
    assert posting_split(Fraction(116, 10), Fraction(-4, 10), "half_even").amount == 11
    split = posting_split(Fraction(12072, 1000), Fraction(-4, 10), "down")
    assert (split.amount, split.carried_out) == (11, Fraction(672, 1000))
    # 25 % of 30 = 7.5: 7 down, 8 half up; nothing of a negative posting; 100 % is all of it.
    assert withholding_tax(30, Decimal("25"), "down") == 7
    assert withholding_tax(30, Decimal("25"), "half_up") == 8
    assert withholding_tax(30, Decimal("25"), "half_even") == 8
    assert withholding_tax(-3, Decimal("25"), "half_even") == 0
    assert withholding_tax(7, Decimal("100"), "half_up") == 7


# An accrual as the job stores it: to 12 places.
ACCRUALS = st.integers(min_value=0, max_value=10**18).map(lambda n: Fraction(n, 10**12))


@settings(max_examples=60, deadline=None)
@given(
    periods=st.lists(st.lists(ACCRUALS, max_size=31), min_size=1, max_size=24),
    rounding=st.sampled_from(["half_even", "half_up", "down"]),
    sign=st.sampled_from([1, -1]),
)
def test_postings_over_any_span_are_the_accruals_within_one_minor_unit(periods, rounding, sign):
    """A kind's accruals have one sign (overdraft interest is owed, deposit interest earned or,
    under a negative rate, paid); each period rounded once with the residue carried in."""
    carried, amounts, sums = Fraction(0), [], []
    for days in periods:
        accrued = sign * sum(days, Fraction(0))
        split = posting_split(accrued, carried, rounding)
        assert split.amount + split.carried_out == accrued + carried
        carried = split.carried_out
        # The residue never grows past the rounding's bound, however many periods.
        assert abs(carried) < 1 if rounding == "down" else abs(carried) <= Fraction(1, 2)
        amounts.append(split.amount)
        sums.append(accrued)
    # Every span of periods, not only those from the first: within one minor unit.
    for first in range(len(periods)):
        for last in range(first, len(periods)):
            difference = sum(amounts[first : last + 1]) - sum(sums[first : last + 1], Fraction(0))
            assert abs(difference) <= 1 if rounding != "down" else abs(difference) < 1
