"""The interest jobs killed mid-run and run again (docs/interest.md, "The accrual job", "The
posting job"): a real process running the job SIGKILLs itself at a chosen call, its transaction
open (tests/payments/processes.py), and the next run writes only what is missing. Killed in a
day's second batch of the accrual: the first batch's rows and booking stay, nothing of the
second; the rerun writes the rest, each row and its booking once. Killed in the posting of the
second account's second period: the first account's postings stay, nothing of the second's; the
rerun posts each account's period once and moves its money once. The world is made under a
Clock in 2027, as the other interest tests' are; the job's process runs at its instant."""

from collections import Counter
from decimal import Decimal

import pytest

from accounts.models import Account, Journal
from accounts.verification import ledger_breaches
from interest.accrual import interest_accrue
from interest.models import AccrualBook, InterestAccrual, InterestBooking, InterestPosting
from interest.posting import interest_post
from tests.accounts.api.test_statements import Clock
from tests.payments.test_crashes import killed

from .accruing import accruing_world, utc

pytestmark = pytest.mark.django_db(transaction=True)

LOADS = {"a": 1_000, "b": 10_000, "c": 20_000}  # accruing_world's, 0.1 + 1 + 2 a day


def test_the_accrual_killed_in_a_days_second_batch_is_finished_by_the_next_run(api_v2, institution):
    """Batches of 2 of the 3 accounts: the 1 March's first batch commits, its second is killed
    as it books (the books' row locked, its rows computed). If the rerun did not leave out the
    rows there are, the unique constraint would refuse the first batch's rows again (or, without
    it, they would be counted and booked twice: 7.3 accrued); if a batch were not one
    transaction, the killed one's rows would be there before the rerun."""
    with Clock(utc("2027-03-01T09:00:00")):
        world = accruing_world(api_v2, three=True)
    instant = utc("2027-03-03T02:00:00")  # the 1st and the 2nd have ended
    first, second, third = sorted(world[name] for name in LOADS)  # the batches go by id

    killed(
        None,
        instant,
        "interest.accrual.book_sums",
        after=1,
        job="interest.accrual.interest_accrue",
        arguments={"batch_size": 2},
        clock=True,
    )

    rows = InterestAccrual.objects.values_list("account_id", "day", "kind")
    assert sorted((account, str(day)) for account, day, _ in rows) == [
        (first, "2027-03-01"),
        (second, "2027-03-01"),
    ]
    [booking] = InterestBooking.objects.all()
    book = AccrualBook.objects.get(institution=institution)
    assert book.accrued_through is None
    assert (
        book.deposit_accrued
        == booking.deposit_accrued
        == sum(InterestAccrual.objects.values_list("accrual", flat=True))
    )
    assert Journal.objects.filter(kind=Journal.Kind.INTEREST_ACCRUAL).count() == 1
    assert ledger_breaches() == []

    with Clock(utc("2027-03-03T03:00:00")):  # the next hour's run
        report = interest_accrue(batch_size=2)

    # Only the missing rows: the third account's 1 March, the three accounts' 2 March.
    assert report.accruals == 4
    rows = Counter(InterestAccrual.objects.values_list("account_id", "day", "kind"))
    assert len(rows) == 6 and set(rows.values()) == {1}
    assert {(account, str(day)) for account, day, _ in rows} == {
        (account, day) for account in (first, second, third) for day in ("2027-03-01", "2027-03-02")
    }
    book.refresh_from_db()
    bookings = InterestBooking.objects.all()
    # 3.1 a day for 2 days: 6.2 accrued, 6 booked, once; the books' totals are the rows'.
    assert (str(book.accrued_through), book.deposit_accrued, book.deposit_booked) == (
        "2027-03-02",
        Decimal("6.2"),
        6,
    )
    assert sum(InterestAccrual.objects.values_list("accrual", flat=True)) == Decimal("6.2")
    assert sum(one.deposit_accrued for one in bookings) == Decimal("6.2")
    assert sum(one.deposit_amount for one in bookings) == 6
    assert ledger_breaches() == []


def test_the_posting_killed_mid_run_is_finished_by_the_next_run(api_v2, institution):
    """Batches of one account, March and April to post: the first account's two periods commit,
    the second's March is posted in the open transaction (its rows, its journal, its money)
    and the process is killed posting its April. If the rerun did not find the periods posted,
    the unique constraint would refuse the first account's again (or, without it, its money
    would move twice); if a batch were not one transaction, the second account's March would be
    there before the rerun."""
    with Clock(utc("2027-03-01T09:00:00")) as clock:
        world = accruing_world(api_v2, three=True, postingFrequency="monthly")
        clock.set(utc("2027-05-01T02:00:00"))
        interest_accrue()
    instant = utc("2027-05-01T02:30:00")
    first, second, third = sorted(world[name] for name in LOADS)
    loads = {world[name]: amount for name, amount in LOADS.items()}

    def posted() -> dict[str, int]:
        return dict(Account.objects.filter(pk__in=loads).values_list("pk", "posted"))

    def moved() -> dict[str, int]:
        """Each account's load and the net of its postings: what its balance must be."""
        net = dict(loads)
        for account, amount, tax in InterestPosting.objects.values_list(
            "account_id", "amount", "withholding_tax"
        ):
            net[account] += amount - tax
        return net

    killed(
        None,
        instant,
        "interest.posting._post_period",
        after=3,
        job="interest.posting.interest_post",
        arguments={"batch_size": 1},
        clock=True,
    )

    rows = InterestPosting.objects.values_list("account_id", "last_day")
    assert sorted((account, str(day)) for account, day in rows) == [
        (first, "2027-03-31"),
        (first, "2027-04-30"),
    ]
    assert posted() == moved() and posted()[second] == loads[second]
    assert Journal.objects.filter(kind=Journal.Kind.INTEREST_POSTING).count() == 2
    assert AccrualBook.objects.get(institution=institution).posted_through is None
    assert ledger_breaches() == []

    with Clock(utc("2027-05-01T03:30:00")):  # the next hour's run
        report = interest_post(batch_size=1)

    assert (report.periods, report.journals) == (4, 4)  # the second's and the third's
    rows = Counter(InterestPosting.objects.values_list("account_id", "kind", "last_day"))
    assert len(rows) == 6 and set(rows.values()) == {1}
    assert {account for account, _, _ in rows} == {first, second, third}
    assert Journal.objects.filter(kind=Journal.Kind.INTEREST_POSTING).count() == 6
    # The money moved once: each balance is its load and its postings, each posted once.
    assert posted() == moved()
    assert all(posted()[account] > load for account, load in loads.items())
    book = AccrualBook.objects.get(institution=institution)
    assert str(book.posted_through) == "2027-04-30"
    assert ledger_breaches() == []
