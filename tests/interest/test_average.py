"""Average daily balances (docs/interest.md, "Average daily balance"): each day's accrual is the
posting period's interest to date on the period's averages less the interest to the day before,
tiers and minimum chosen by the average, deposit and overdraft averaged apart. Months computed
by hand: one pure (30E/360, crossing zero mid-month), one through the accrual job and the API."""

from datetime import date
from decimal import Decimal
from fractions import Fraction
from types import SimpleNamespace

import pytest

from accounts.verification import ledger_breaches
from interest.accrual import interest_accrue
from interest.average import average_days, period_first
from interest.models import InterestAccrual
from tests.accounts.api.helpers import adjust
from tests.accounts.api.test_statements import Clock

from .accruing import accruing_world, utc
from .helpers import days_of


def test_periods():
    day = date(2027, 8, 19)
    assert period_first(day, "monthly") == date(2027, 8, 1)
    assert period_first(day, "quarterly") == date(2027, 7, 1)
    assert period_first(date(2027, 3, 31), "quarterly") == date(2027, 1, 1)
    assert period_first(day, "yearly") == date(2027, 1, 1)
    with pytest.raises(ValueError):
        period_first(day, "at_close")


def test_a_month_crossing_zero_under_30e_360():
    """January 2027, 30E/360, monthly: 36,000 on the 1st to 15th, -36,000 on the 16th to 31st;
    3.6 % on deposits, 7.2 % on overdrafts. The month's averages: 36,000 * 15/31 positive and
    36,000 * 16/31 owed, for 30/360 of a year: 1,620/31 earned and 3,456/31 owed."""
    terms = SimpleNamespace(
        pk="iterm_jan",
        balance_method="average_daily",
        posting_frequency="monthly",
        day_count="30_360",
        deposit_tiers=[{"from_balance": 0, "rate": "3.6"}],
        tiering="whole",
        minimum_balance=0,
        overdraft_rate=Decimal("7.2"),
    )
    days = [(date(2027, 1, n), 36_000 if n <= 15 else -36_000, terms) for n in range(1, 32)] + [
        (date(2027, 2, 1), 36_000, terms)
    ]

    calculated = average_days(days)

    january = calculated[:31]
    assert {d.kind for d in calculated} == {"average"}
    deposit = [d.average.deposit.accrual for d in january]
    overdraft = [d.average.overdraft.accrual for d in january]
    # To the 15th as the daily method: 36,000 * 3.6 % / 360 = 3.6 a day.
    assert deposit[:15] == [Fraction(18, 5)] * 15 and overdraft[:15] == [0] * 15
    # The 16th: 54 earned to date on 36,000 * 15/16 for 16 days, as on the 15th: 0.
    assert deposit[15] == 0 and overdraft[15] == Fraction(36_000 * 72, 1000 * 360)
    # The 30th counts 0 days: the averages move, the interest to date with them, both sides.
    jan30 = calculated[29].average
    assert (jan30.days, jan30.deposit.balance, jan30.overdraft.balance) == (30, 18_000, 18_000)
    assert jan30.deposit.to_date == Fraction(261, 5)  # 18,000 * 3.6 % * 29/360 = 52.2
    assert jan30.deposit.accrual == Fraction(261, 5) - 54  # -1.8
    assert jan30.overdraft.accrual == Fraction(522, 5) - Fraction(504, 5)  # 104.4 - 100.8
    assert calculated[29].accruals() == {
        "deposit": Fraction(-9, 5),
        "overdraft": Fraction(18, 5),
    }
    # The month's accruals add up to the interest on its averages.
    assert sum(deposit) == calculated[30].average.deposit.to_date == Fraction(1_620, 31)
    assert sum(overdraft) == calculated[30].average.overdraft.to_date == Fraction(3_456, 31)
    # February starts a new period: its first day alone, 36,000 for 1/360.
    february = calculated[31].average
    assert (february.first, february.days, february.deposit.accrual) == (
        date(2027, 2, 1),
        1,
        Fraction(18, 5),
    )


@pytest.mark.django_db
def test_the_average_chooses_the_tier(api_v2, institution):
    """March 2027, act/365F, monthly: nothing below an average of 5,000, 3.65 % on the whole
    average from 5,000. `c` holds 20,000 on the 1st and 2,000 from the 2nd: the daily method
    would pay 2 on the 1st and nothing after; the average pays 2 on the 1st, then 0.2 a day
    while the average is 5,000 or more (11,000, 8,000, 6,500, 5,600, 5,000: 2.2, 2.4, 2.6, 2.8,
    3.0 to date), and takes the 3.0 back on the 7th (32,000 / 7 is below 5,000): the month's
    average, 80,000 / 31, earns nothing."""
    with Clock(utc("2027-03-01T09:00:00")) as clock:
        world = accruing_world(
            api_v2,
            three=True,
            balanceMethod="average_daily",
            postingFrequency="monthly",
            depositTiers=[{"fromBalance": 0, "rate": "0"}, {"fromBalance": 5_000, "rate": "3.65"}],
        )
        clock.set(utc("2027-03-02T12:00:00"))
        assert adjust(api_v2, world["c"], "debit", 18_000).status_code == 201
        # a goes 2,000 overdrawn on the 3rd: 0.4 a day owed, on the average as by the day.
        clock.set(utc("2027-03-03T12:00:00"))
        assert adjust(api_v2, world["a"], "debit", 3_000).status_code == 201

        clock.set(utc("2027-04-01T01:00:00"))
        report = interest_accrue()
        shown = days_of(api_v2, world["c"], "2027-03-01", "2027-03-08")
        owed = days_of(api_v2, world["a"], "2027-03-03", "2027-03-04")

    def accruals(account):
        return {
            (r.day.day, r.kind): r.accrual
            for r in InterestAccrual.objects.filter(account_id=world[account])
        }

    tenth = Decimal("0.2")
    assert accruals("c") == {
        (1, "deposit"): 2,
        **{(day, "deposit"): tenth for day in range(2, 7)},
        (7, "deposit"): -3,
    }
    assert sum(accruals("c").values()) == 0
    # b: 10,000 every day, 1 a day; a: its deposit average never reaches 5,000.
    assert set(accruals("b").values()) == {1} and len(accruals("b")) == 31
    assert accruals("a") == {(day, "overdraft"): Decimal("0.4") for day in range(3, 32)}
    assert report.days == 31

    # The API shows the averages; the range is read from the period's first day.
    third = shown["days"][2]
    assert (third["kind"], third["balance"], third["accrual"], third["termsId"]) == (
        "average",
        2_000,
        None,
        world["terms"],
    )
    assert third["average"]["periodStart"] == "2027-03-01"
    assert third["average"]["days"] == 3
    assert third["average"]["deposit"] == {
        "balance": "8000.000000000000",
        "balanceExact": "8000/1",
        "rates": [{"amount": "8000", "rate": "3.65"}],
        "toDate": "2.400000000000",
        "accrual": "0.200000000000",
        "accrualExact": "1/5",
    }
    assert [d["average"]["deposit"]["accrualExact"] for d in shown["days"]] == [
        "2/1",
        "1/5",
        "1/5",
        "1/5",
        "1/5",
        "1/5",
        "-3/1",
        "0/1",
    ]
    assert shown["depositTotal"] == "0.000000000000"
    assert owed["days"][0]["average"]["overdraft"]["balance"] == "666.666666666667"
    assert owed["overdraftTotal"] == "0.800000000000"
    assert ledger_breaches() == []
