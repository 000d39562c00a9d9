"""Posting with what else accrues (docs/interest.md, "Posting", "Back-valued money"): a
back-valued credit found after its days were posted is paid by the next period's posting, the
past posting unchanged; an account's override posts by its own frequency and, on the period's
last day, the terms then in effect; an average_daily account's month is posted like any other.
Every figure by hand (tests/interest/accruing.py: a holds 1,000, b 10,000, at 3.65 % and
overdrafts at 7.3 %, act/365F: 0.0001 of the balance a day)."""

from datetime import date
from decimal import Decimal

import pytest

from accounts.models import Journal
from accounts.posting import Move, credit, journal_new, post
from accounts.services import internal_account
from accounts.verification import ledger_breaches
from interest.accrual import interest_accrue
from interest.models import InterestAccrual, InterestAdjustment, InterestPosting
from interest.posting import interest_post
from tests.accounts.api.helpers import adjust, created, resource
from tests.accounts.api.test_statements import Clock

from .accruing import accruing_world, utc
from .helpers import TERMS

pytestmark = pytest.mark.django_db

MONTHLY = {"postingFrequency": "monthly", "rounding": "half_up", "withholdingTaxRate": "0"}


def rows_of(account_id) -> list[tuple]:
    return [
        (p.first_day.isoformat(), p.last_day.isoformat(), f"{p.accrued.normalize():f}")
        + (p.amount, p.withholding_tax)
        for p in InterestPosting.objects.filter(account_id=account_id).order_by("last_day")
    ]


def test_a_back_valued_credit_is_paid_by_the_next_posting(api_v2, institution):
    with Clock(utc("2027-03-01T09:00:00")) as clock:
        world = accruing_world(api_v2, **MONTHLY)
        b = world["b"]
        clock.set(utc("2027-04-01T01:00:00"))
        interest_accrue()
        interest_post()  # March: b 31
        march = InterestPosting.objects.get(account_id=b)
        # On the 1 April, 10,000 more to b valued on the 16 March: 16 days of 1 more.
        clock.set(utc("2027-04-01T12:00:00"))
        journal = journal_new(institution_id=institution.pk, kind=Journal.Kind.ADJUSTMENT)
        journal.value_at = utc("2027-03-16T10:00:00")
        funding = internal_account(institution=institution, code="funding", currency="EUR")
        post(
            institution_id=institution.pk,
            currency="EUR",
            moves=[credit(b, 10_000), Move(funding.pk, "", -10_000)],
            journal=journal,
        )
        clock.set(utc("2027-04-02T01:00:00"))
        interest_accrue()  # the 1 April, then the 16 to 31 March caught up, found on the 2nd
        clock.set(utc("2027-05-01T01:00:00"))
        interest_accrue()
        interest_post()

    assert sorted(InterestAdjustment.objects.values_list("day", "difference", "found_on")) == [
        (date(2027, 3, day), Decimal("1"), date(2027, 4, 2)) for day in range(16, 32)
    ]
    # March's posting as it was; April's: 30 days of 20,031 (the March interest in) at 2.0031,
    # 60.093, plus the 16 found in April: 76.093 -> 76.
    assert rows_of(b) == [
        ("2027-03-01", "2027-03-31", "31", 31, 0),
        ("2027-04-01", "2027-04-30", "76.093", 76, 0),
    ]
    assert InterestPosting.objects.get(pk=march.pk).journal_id == march.journal_id
    assert ledger_breaches() == []
    # verify_ledger counts the adjustments in a posting's accruals: without them it is a breach.
    InterestPosting.objects.filter(account_id=b, last_day=date(2027, 4, 30)).update(
        accrued=Decimal("60.093"), carried_in=Decimal("15.907")
    )
    assert "interest postings that are not their period's accruals and adjustments" in {
        breach.check for breach in ledger_breaches()
    }


def test_overrides_and_average_daily_balances_posted(api_v2, institution):
    with Clock(utc("2027-03-01T09:00:00")) as clock:
        # The product: monthly, half up, 10 % withheld.
        world = accruing_world(api_v2, **{**MONTHLY, "withholdingTaxRate": "10"})
        a, b = world["a"], world["b"]
        same = {key: TERMS[key] for key in ("tiering", "minimumBalance", "overdraftRate")}
        rates = {**same, "effectiveDate": "2027-03-01", "dayCount": "act_365f"}
        # a: average daily balances, monthly, nothing withheld.
        created(
            api_v2.post(
                f"/accounts/{a}/interest-rates",
                {
                    **TERMS,
                    **rates,
                    **MONTHLY,
                    "depositTiers": [{"fromBalance": 0, "rate": "3.65"}],
                    "tiering": "whole",
                    "minimumBalance": 0,
                    "balanceMethod": "average_daily",
                },
            ),
            "v2",
        )
        # b: 7.3 % (2 a day) posted yearly, rounded down, nothing withheld, to the 15 April.
        created(
            api_v2.post(
                f"/accounts/{b}/interest-rates",
                {
                    **TERMS,
                    **rates,
                    "depositTiers": [{"fromBalance": 0, "rate": "7.3"}],
                    "tiering": "whole",
                    "minimumBalance": 0,
                    "postingFrequency": "yearly",
                    "rounding": "down",
                    "withholdingTaxRate": "0",
                    "endDate": "2027-04-15",
                },
            ),
            "v2",
        )
        clock.set(utc("2027-03-16T12:00:00"))
        assert adjust(api_v2, a, "credit", 30_000).status_code == 201
        clock.set(utc("2027-04-01T01:00:00"))
        interest_accrue()
        march = interest_post()
        shown = resource(api_v2.get(f"/accounts/{b}/interest"), "v2")
        clock.set(utc("2027-05-01T01:00:00"))
        interest_accrue()
        interest_post()

    # a's March on its average daily balance, (15 * 1,000 + 16 * 31,000) / 31, at 0.0001 a day
    # over 31 days: 51.1 -> 51 (the rows are the averages' days: a "n/d" band amount).
    assert rows_of(a)[0] == ("2027-03-01", "2027-03-31", "51.1", 51, 0)
    bands = InterestAccrual.objects.get(account_id=a, day=date(2027, 3, 17)).bands
    assert bands[0]["amount"] == "77000/17"  # (15 * 1,000 + 2 * 31,000) / 17
    # b posts yearly while its override is in effect: nothing for March. On the 30 April, the
    # product's terms are in effect again: its period ends, posted by them (half up, 10 %
    # withheld): 31 * 2 + 15 * 2 + 15 * 1 = 107, 10.7 -> 11 withheld.
    assert march.periods == 1
    assert rows_of(b) == [("2027-03-01", "2027-04-30", "107", 107, 11)]
    assert shown["override"]["postingFrequency"] == "yearly"
    assert shown["override"]["endDate"] == "2027-04-15"
    assert shown["terms"]["postingFrequency"] == "monthly"  # the product's
    assert shown["period"] == {"start": "2027-01-01", "end": "2027-12-31", "frequency": "yearly"}
    assert shown["accrued"]["deposit"] == "62.000000000000"
    assert ledger_breaches() == []
