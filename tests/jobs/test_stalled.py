"""A killed worker's jobs are picked up again by another (`retry_stalled_jobs`).

First the rules on hand-made rows (a worker whose heartbeat is old, one that is alive), then the
real thing: a worker process running a job is killed with SIGKILL, the recovery gives the job
back, a second worker runs it to completion, once.
"""

import os
import time
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from procrastinate.contrib.django import app

from jobs import tasks
from jobs.services import job_defer, stalled_jobs_retry

from . import probe_tasks
from .helpers import job_rows, job_status, run_async_task, sql
from .workers import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def worker_row(*, silent_for: str) -> int:
    [(worker_id,)] = sql("SELECT worker_id FROM procrastinate_register_worker_v1()")
    sql(
        "UPDATE procrastinate_workers SET last_heartbeat = now() - %s::interval WHERE id = %s",
        [silent_for, worker_id],
    )
    return worker_id


def running(job_id: int, worker_id: int | None) -> int:
    sql(
        "UPDATE procrastinate_jobs SET status = 'doing', worker_id = %s WHERE id = %s",
        [worker_id, job_id],
    )
    return job_id


def test_the_jobs_of_silent_workers_go_back_to_todo_and_live_workers_keep_theirs():
    dead, alive = worker_row(silent_for="1 minute"), worker_row(silent_for="1 second")
    of_dead = running(job_defer(probe_tasks.noop, via="dead"), dead)
    of_alive = running(job_defer(probe_tasks.noop, via="alive"), alive)
    of_pruned = running(job_defer(probe_tasks.noop, via="pruned"), None)  # row already pruned

    result = run_async_task(tasks.retry_stalled_jobs, timestamp=0)  # 30 s of silence

    assert sorted(result["retried"]) == [of_dead, of_pruned]
    assert result["superseded"] == []
    assert [(row["id"], row["status"], row["attempts"]) for row in job_rows()] == [
        (of_dead, "todo", 1),
        (of_alive, "doing", 0),
        (of_pruned, "todo", 1),
    ]
    # Run again (or by a second worker at the same time): nothing more to do.
    assert run_async_task(tasks.retry_stalled_jobs, timestamp=0) == {
        "retried": [],
        "superseded": [],
    }


def test_a_stalled_job_whose_next_run_is_already_waiting_is_failed_not_retried():
    """The expiry job of a dead worker keeps its `lock`; the next tick's job waits in `todo`
    with the same queueing lock. The stalled one cannot go back to `todo` beside it: it fails,
    and the waiting one (same work) runs."""
    dead = worker_row(silent_for="1 minute")
    stalled = running(job_defer(tasks.expire_holds, timestamp=60), dead)
    waiting = job_defer(tasks.expire_holds, timestamp=120)

    result = run_async_task(tasks.retry_stalled_jobs, timestamp=0)

    assert result == {"retried": [], "superseded": [stalled]}
    assert [(row["id"], row["status"]) for row in job_rows()] == [
        (stalled, "failed"),
        (waiting, "todo"),
    ]


def test_a_killed_workers_job_is_run_again_by_another_worker(workers, tmp_path: Path):
    journal = tmp_path / "journal"
    options = {
        "queues": ["tests"],
        "import_paths": ["tests.jobs.probe_tasks"],
        "heartbeat_seconds": 0.2,
        "stalled_seconds": 1.0,
    }
    job_id = job_defer(probe_tasks.hang_first_attempt, journal=str(journal))

    first = workers.start(**options)
    first_id = first.wait_started()
    wait_until(lambda: journal.exists() and journal.read_text() == "start 0\n")
    [row] = job_rows(probe_tasks.hang_first_attempt.name)
    assert (row["id"], row["status"], row["attempts"], row["worker_id"]) == (
        job_id,
        "doing",
        0,
        first_id,
    )
    # While its worker beats, the job is not stalled, however long it runs.
    stalled = async_to_sync(app.job_manager.get_stalled_jobs)
    time.sleep(1.2)
    assert stalled(seconds_since_heartbeat=1.0) == []

    first.kill()
    assert job_status(job_id) == "doing"  # nobody told the database
    wait_until(lambda: [job.id for job in stalled(seconds_since_heartbeat=1.0)] == [job_id])

    assert async_to_sync(stalled_jobs_retry)(seconds_since_heartbeat=1.0) == {
        "retried": [job_id],
        "superseded": [],
    }
    second = workers.start(**options)
    second_id = second.wait_started()
    wait_until(lambda: job_status(job_id) == "succeeded")

    assert journal.read_text() == "start 0\nstart 1\ndone\n"
    [row] = job_rows(probe_tasks.hang_first_attempt.name)
    # Two attempts: the killed one (counted by the retry), the one that finished.
    assert (row["status"], row["attempts"], row["worker_id"]) == ("succeeded", 2, second_id)
    assert second.stop() == 0
    assert not first.alive() and not second.alive()
    # Neither left a process behind.
    for worker in (first, second):
        with pytest.raises(ProcessLookupError):
            os.kill(worker.pid, 0)
