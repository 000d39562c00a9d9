"""Jobs are deferred in the transaction of the change that causes them.

In a web process (or a command, or a test) procrastinate's Django connector writes the job on
Django's connection: it commits or rolls back with the caller's transaction. Inside a worker
`task.defer()` does not (the worker swaps the app's connector for its own pool): code that may
run in a job defers with `jobs.services.job_defer`, which always uses Django's connection.
"""

import psycopg
import pytest
from django.db import transaction
from procrastinate.contrib.django.models import ProcrastinateJob

from jobs.services import job_defer

from . import probe_tasks
from .helpers import job_rows, job_status
from .workers import database_url, wait_until

pytestmark = pytest.mark.django_db(transaction=True)


class RolledBack(Exception):
    pass


def seen_elsewhere() -> list[str]:
    """The `via` of the jobs another connection sees (what is committed)."""
    with psycopg.connect(database_url()) as conn:
        rows = conn.execute("SELECT args->>'via' FROM procrastinate_jobs ORDER BY id").fetchall()
    return [via for (via,) in rows]


@pytest.mark.parametrize(
    "defer",
    [
        pytest.param(lambda via: probe_tasks.noop.defer(via=via), id="task.defer"),
        pytest.param(lambda via: job_defer(probe_tasks.noop, via=via), id="job_defer"),
    ],
)
def test_a_job_deferred_in_a_transaction_commits_or_rolls_back_with_it(defer):
    with pytest.raises(RolledBack), transaction.atomic():
        defer("rolled back")
        assert seen_elsewhere() == []  # written on this connection, not committed
        raise RolledBack

    assert job_rows() == []
    assert seen_elsewhere() == []

    with transaction.atomic():
        job_id = defer("committed")
        assert seen_elsewhere() == []
    assert seen_elsewhere() == ["committed"]
    assert job_status(job_id) == "todo"


def test_job_defer_is_transactional_inside_a_worker_where_task_defer_is_not(workers):
    job_id = job_defer(probe_tasks.defer_and_roll_back)
    worker = workers.start(queues=["tests"], import_paths=["tests.jobs.probe_tasks"])

    wait_until(lambda: job_status(job_id) == "succeeded")
    noops = ProcrastinateJob.objects.filter(task_name="tests.jobs.noop")
    wait_until(lambda: set(noops.values_list("status", flat=True)) == {"succeeded"})
    assert worker.stop() == 0

    # Rolled back, yet there: the worker's own pool committed it at once.
    assert sorted(noops.values_list("args__via", flat=True)) == [
        "job_defer, committed",
        "task.defer, rolled back",
    ]
