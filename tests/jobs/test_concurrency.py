"""Two workers at once do each periodic job's work once.

Real threads, each with its own connection and committed transactions, run the same task at
the same moment (procrastinate's `lock` would never let two jobs of one task run together;
these tests show that the services do not need it). Then two real worker processes, started
together, each defer the current tick of every periodic task: the database keeps one job per
task and tick, and the expiry is done once.
"""

from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone
from procrastinate.contrib.django.models import ProcrastinateJob, ProcrastinatePeriodicDefer

from accounts.models import Account, Hold
from accounts.verification import ledger_breaches
from api.models import IdempotencyRecord
from cards.models import Card
from events.models import Event
from jobs import tasks
from tests.accounts.ledger.helpers import run_threads
from tests.cards.helpers import card_events, make_institution, new_card
from tests.factories import InstitutionFactory

from .helpers import expired_holds, expiring_in, successors_of
from .workers import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def expired_once(holds: list[Hold]) -> None:
    """Every hold expired, with one `hold.expired` event each; no pending amount is left."""
    ids = {hold.pk for hold in holds}
    assert set(Hold.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"expired"}
    events = Counter(
        Event.objects.filter(type="hold.expired", object_id__in=ids).values_list(
            "object_id", flat=True
        )
    )
    assert events == dict.fromkeys(ids, 1)
    accounts = {hold.account_id for hold in holds}
    assert set(Account.objects.filter(pk__in=accounts).values_list("pending", flat=True)) == {0}
    assert ledger_breaches() == []


def test_the_expiry_job_run_twice_at_once_expires_each_hold_once():
    holds = expired_holds(40)

    results = run_threads(2, lambda _: tasks.expire_holds(timestamp=0))

    assert sum(result["holds"] for result in results) == 40
    assert [result["authorizations"] for result in results] == [0, 0]
    expired_once(holds)


def test_the_renewal_job_run_twice_at_once_renews_each_card_once():
    fi = make_institution()
    due = [expiring_in(new_card(fi, status=Card.Status.ACTIVE), 0) for _ in range(4)]

    results = run_threads(2, lambda _: tasks.renew_expiring_cards(timestamp=0))

    assert sum(result["renewed"] for result in results) == 4
    for card in due:
        [renewal] = successors_of(card)
        assert len(card_events(renewal, "card.renewed")) == 1


def test_the_purge_job_run_twice_at_once_deletes_each_record_once():
    fi = InstitutionFactory()
    day_old = timezone.now() - timedelta(hours=25)
    IdempotencyRecord.objects.bulk_create(
        IdempotencyRecord(
            institution=fi,
            key=f"00000000-0000-4000-8000-{n:012d}",
            fingerprint="f" * 64,
            method="POST",
            path="/TX/v2/customers",
            created_at=day_old,
        )
        for n in range(30)
    )

    results = run_threads(2, lambda _: tasks.purge_idempotency_keys(timestamp=0))

    assert sum(result["purged"] for result in results) == 30
    assert IdempotencyRecord.objects.count() == 0


def test_two_workers_started_together_defer_each_tick_once_and_expire_each_hold_once(workers):
    holds = expired_holds(20)

    started = [workers.start(queues=["periodic"]) for _ in range(2)]
    for worker in started:
        worker.wait_started()
    wait_until(lambda: not Hold.objects.filter(status="active").exists())
    ours = ProcrastinateJob.objects.filter(task_name__startswith="jobs.")
    wait_until(lambda: not ours.filter(status__in=["todo", "doing"]).exists())
    for worker in started:
        assert worker.stop() == 0

    expired_once(holds)
    # One job per periodic task and tick, whichever worker deferred it.
    ticks = Counter((job.task_name, job.args["timestamp"]) for job in ours)
    assert ticks and set(ticks.values()) == {1}
    # procrastinate keeps the latest tick's defer of each task (older ones are deleted as the
    # next is deferred; a task every 5 seconds ticks more than once here): it is the job's.
    latest = {}
    for task_name, timestamp in ticks:
        latest[task_name] = max(timestamp, latest.get(task_name, timestamp))
    defers = ProcrastinatePeriodicDefer.objects.filter(task_name__startswith="jobs.")
    assert {(d.task_name, d.defer_timestamp) for d in defers} == set(latest.items())
    assert defers.count() == len(latest)
    # The expiry was done once, by whichever worker ran the job.
    results = [
        record["result"]
        for worker in started
        for record in worker.records()
        if record.get("action") == "job_success"
        and record["job"]["task_name"] == "jobs.expire_holds"
    ]
    assert sum(result["holds"] for result in results) == 20
