"""The accrual job run in two threads at once (docs/interest.md, "The accrual job"): real
threads, each with its own connection and committed transactions, batches of one account so
that the two runs interleave; each row is written and booked once."""

from collections import Counter
from decimal import Decimal

import pytest

from accounts.verification import ledger_breaches
from core.actors import SYSTEM
from core.operations import run_batches
from interest.accrual import interest_accrue
from interest.models import AccrualBook, InterestAccrual
from tests.accounts.api.test_statements import Clock
from tests.accounts.ledger.helpers import run_threads

from .accruing import accruing_world, utc

pytestmark = pytest.mark.django_db(transaction=True)


def test_two_runs_at_once_write_and_book_each_row_once(api_v2, institution):
    with Clock(utc("2027-03-01T09:00:00")) as clock:
        world = accruing_world(api_v2, three=True)
        clock.set(utc("2027-03-04T02:00:00"))  # the 1st to the 3rd have ended

        reports = run_threads(2, lambda _: run_batches(interest_accrue, actor=SYSTEM, batch_size=1))

    # 3 accounts, 3 days: 9 rows, each once, whichever run wrote it.
    assert sum(report.accruals for report in reports) == 9
    rows = Counter(InterestAccrual.objects.values_list("account_id", "day", "kind"))
    assert len(rows) == 9 and set(rows.values()) == {1}
    assert {a for a, _, _ in rows} == {world["a"], world["b"], world["c"]}
    # 0.1 + 1 + 2 a day for 3 days: 9.3 accrued, 9 booked, once.
    book = AccrualBook.objects.get(institution=institution)
    assert (book.deposit_accrued, book.deposit_booked, book.overdraft_booked) == (
        Decimal("9.3"),
        9,
        0,
    )
    assert ledger_breaches() == []
