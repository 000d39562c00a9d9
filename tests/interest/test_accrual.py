"""The accrual job (docs/interest.md, "Accruals", "Booked daily", "The accrual job",
"Verified"): each ended day's exact interest stored once per account, day and kind, booked in
minor units with the residue carried, missed days caught up, another institution untouched,
verify_ledger naming a mismatch. Every figure is computed by hand (tests/interest/accruing.py)."""

from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from accounts.models import Account, Journal
from accounts.verification import ledger_breaches
from interest.accrual import interest_accrue
from interest.models import AccrualBook, InterestAccrual, InterestBooking
from jobs import tasks
from tests.accounts.api.helpers import adjust
from tests.accounts.api.test_statements import Clock
from tests.accounts.ledger.helpers import open_account

from .accruing import accruing_world, utc
from .helpers import days_of

pytestmark = pytest.mark.django_db

US = timedelta(microseconds=1)
INTEREST = ("interest_expense", "interest_payable", "interest_receivable", "interest_income")


def interest_accounts(fi) -> dict[str, int]:
    return dict(
        Account.objects.filter(institution=fi, internal_code__in=INTEREST).values_list(
            "internal_code", "posted"
        )
    )


def test_days_accrued_and_booked_with_the_residue_carried(api_v2, institution, other_institution):
    with Clock(utc("2027-03-01T09:00:00")) as clock:
        world = accruing_world(api_v2)
        elsewhere = open_account(other_institution, balance=5_000)  # no terms there

        # The first run, after the 2nd has ended: the 1st and 2nd, from the terms' first day.
        clock.set(utc("2027-03-03T01:00:00"))
        progress = []
        first = interest_accrue(on_progress=lambda done, total: progress.append((done, total)))
        # The 3rd at noon: a takes 3,000 out, -2,000 from the 3rd: 2,000 * 7.3 % / 365 = 0.4.
        clock.set(utc("2027-03-03T12:00:00"))
        assert adjust(api_v2, world["a"], "debit", 3_000).status_code == 201

        # Nothing ran on the 4th and 5th: the run on the 6th catches up the 3rd to the 5th,
        # one balance query a day (the accounts fit one batch); run again, nothing more.
        clock.set(utc("2027-03-06T00:30:00"))
        with CaptureQueriesContext(connection) as queries:
            second = tasks.accrue_interest(timestamp=0)
        reads = [q for q in queries.captured_queries if "accounts_entry" in q["sql"]]
        again = tasks.accrue_interest(timestamp=0)
        shown = days_of(api_v2, world["a"], "2027-03-01", "2027-03-05")

    assert (first.days, first.accruals, first.journals) == (2, 4, 2)
    assert progress == [(1, 2), (2, 2)]
    assert second == {"days": 3, "accruals": 6, "journals": 3, "adjustments": 0}
    # One balance query a day (the accounts fit one batch); then the look for back-valued money,
    # which finds a's debit of the 3rd, posted after the run on the 3rd, and recomputes a's 3rd
    # to 5th in one query: no difference (the debit was not back-valued).
    assert len(reads) == 5
    assert again == {"days": 0, "accruals": 0, "journals": 0, "adjustments": 0}

    rows = {
        (r.account_id, r.day.isoformat()): (r.kind, r.balance, r.bands, r.fraction, r.accrual)
        for r in InterestAccrual.objects.all()
    }
    assert len(rows) == InterestAccrual.objects.count() == 10  # each once
    one_tenth = ("deposit", 1_000, [{"amount": 1_000, "rate": "3.65"}], "1/365", Decimal("0.1"))
    owed = ("overdraft", -2_000, [{"amount": 2_000, "rate": "7.3"}], "1/365", Decimal("0.4"))
    one = ("deposit", 10_000, [{"amount": 10_000, "rate": "3.65"}], "1/365", Decimal("1"))
    # a crosses zero: deposit days, then overdraft days, never netted.
    days = [f"2027-03-0{n}" for n in range(1, 6)]
    assert [rows[(world["a"], day)] for day in days] == [one_tenth] * 2 + [owed] * 3
    assert [rows[(world["b"], day)] for day in days] == [one] * 5
    assert set(InterestAccrual.objects.values_list("terms_id", flat=True)) == {world["terms"]}
    # The stored accrual is the day's `accrual` the API shows.
    assert [str(rows[(world["a"], d["date"])][4]) for d in shown["days"]] == [
        d["accrual"] for d in shown["days"]
    ]

    # Booked each day: deposits 1.1, 1.1, 1, 1, 1 (running 1.1, 2.2, 3.2, 4.2, 5.2: 1, 2, 3, 4,
    # 5 booked); overdrafts 0.4 a day from the 3rd (running 0.4, 0.8, 1.2: 0, 1, 1 booked).
    bookings = InterestBooking.objects.order_by("day")
    assert [
        (b.day.day, b.deposit_accrued, b.deposit_amount, b.overdraft_accrued, b.overdraft_amount)
        for b in bookings
    ] == [
        (1, Decimal("1.1"), 1, 0, 0),
        (2, Decimal("1.1"), 1, 0, 0),
        (3, Decimal("1"), 1, Decimal("0.4"), 0),
        (4, Decimal("1"), 1, Decimal("0.4"), 1),
        (5, Decimal("1"), 1, Decimal("0.4"), 0),
    ]
    book = AccrualBook.objects.get(institution=institution)
    assert (
        book.currency,
        book.accrued_through,
        book.deposit_accrued,
        book.deposit_booked,
        book.overdraft_accrued,
        book.overdraft_booked,
    ) == ("EUR", date(2027, 3, 5), Decimal("5.2"), 5, Decimal("1.2"), 1)
    assert interest_accounts(institution) == {
        "interest_expense": -5,
        "interest_payable": 5,
        "interest_receivable": -1,
        "interest_income": 1,
    }
    # Each journal is value-dated to the last instant of its day.
    fourth = bookings[3].journal
    assert (fourth.kind, fourth.value_at) == (
        Journal.Kind.INTEREST_ACCRUAL,
        utc("2027-03-05T00:00:00") - US,
    )
    assert sorted(fourth.entries.values_list("account__internal_code", "direction", "amount")) == [
        ("interest_expense", "debit", 1),
        ("interest_income", "credit", 1),
        ("interest_payable", "credit", 1),
        ("interest_receivable", "debit", 1),
    ]

    # Another institution, its accounts without terms: untouched.
    assert not AccrualBook.objects.filter(institution=other_institution).exists()
    assert not InterestAccrual.objects.filter(institution=other_institution).exists()
    assert interest_accounts(other_institution) == {}
    assert Account.objects.get(pk=elsewhere.pk).posted == 5_000

    # verify_ledger holds, and names a mismatch made up in the books.
    assert ledger_breaches() == []
    AccrualBook.objects.filter(pk=book.pk).update(deposit_accrued=F("deposit_accrued") + 1)
    assert {breach.check for breach in ledger_breaches()} == {
        "interest books that are not the sum of their accruals and adjustments",
        "interest books whose booked totals are more than half a minor unit from their accrued "
        "totals",
    }
    AccrualBook.objects.filter(pk=book.pk).update(
        deposit_accrued=F("deposit_accrued") - 1, deposit_booked=6
    )
    assert {breach.check for breach in ledger_breaches()} == {
        "interest books whose booked totals are more than half a minor unit from their accrued "
        "totals",
        "interest books whose booked totals are not the sum of their bookings",
        "interest payable, receivable and withholding tax accounts that are not the interest "
        "booked and not posted, and the tax withheld",
    }
