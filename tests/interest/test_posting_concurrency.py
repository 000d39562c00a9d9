"""The posting job run in two threads at once (docs/interest.md, "The posting job"): real
threads, each with its own connection and committed transactions, batches of one account so
that the two runs interleave, two months to catch up; each period is posted once."""

from collections import Counter

import pytest

from accounts.verification import ledger_breaches
from core.actors import SYSTEM
from core.operations import run_batches
from interest.accrual import interest_accrue
from interest.models import AccrualBook, InterestPosting
from interest.posting import interest_post
from tests.accounts.api.test_statements import Clock
from tests.accounts.ledger.helpers import run_threads

from .accruing import accruing_world, utc

pytestmark = pytest.mark.django_db(transaction=True)


def test_two_runs_at_once_post_each_period_once(api_v2, institution):
    with Clock(utc("2027-03-01T09:00:00")) as clock:
        world = accruing_world(api_v2, three=True, postingFrequency="monthly")
        # March and April accrued; no posting ran on the 1 April: both months to catch up.
        clock.set(utc("2027-05-01T02:00:00"))
        interest_accrue()
        reports = run_threads(2, lambda _: run_batches(interest_post, actor=SYSTEM, batch_size=1))
        again = interest_post()

    # 3 accounts, 2 months, deposits only: 6 periods, each once, whichever run posted it.
    assert sum(report.periods for report in reports) == 6
    assert sum(report.journals for report in reports) == 6
    assert again.periods == 0
    rows = Counter(InterestPosting.objects.values_list("account_id", "kind", "last_day"))
    assert len(rows) == 6 and set(rows.values()) == {1}
    assert {account for account, _, _ in rows} == {world["a"], world["b"], world["c"]}
    book = AccrualBook.objects.get(institution=institution)
    assert (str(book.accrued_through), str(book.posted_through)) == ("2027-04-30", "2027-04-30")
    assert ledger_breaches() == []
