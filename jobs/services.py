"""Jobs: deferring one in the caller's transaction, and giving the jobs of dead workers to live
ones (docs/jobs.md).

`job_defer`: procrastinate's Django app defers on Django's connection, so `task.defer()` in a
web request commits or rolls back with the request's transaction. Not inside a worker:
`manage.py procrastinate worker` swaps the app's connector for a psycopg pool of its own, and
a `task.defer()` made by a job then commits at once on another connection, whatever the job's
transaction does next (tests/jobs/test_transactions.py shows both). `job_defer` always writes
the job through Django's connection of the calling thread: in a request and in a job alike,
the job exists if and only if the caller's transaction commits.

`stalled_jobs_retry`: a worker killed with SIGKILL (or cut off from the database) leaves its
jobs in `doing`, and nothing would ever run them again. Every worker writes a heartbeat into
`procrastinate_workers` every `PROCRASTINATE_HEARTBEAT_SECONDS`; a worker whose heartbeat is
older than `PROCRASTINATE_STALLED_SECONDS` is dead, and so are its jobs (procrastinate's
`JobManager.get_stalled_jobs`, which also counts the jobs of a worker row already pruned).
`stalled_jobs_retry` puts those jobs back in `todo`, where any worker takes them.
"""

import logging

from django.conf import settings
from procrastinate import exceptions, jobs, manager, tasks
from procrastinate.contrib.django import app
from procrastinate.contrib.django.django_connector import DjangoConnector
from procrastinate.contrib.django.settings import settings as procrastinate_settings

logger = logging.getLogger("tx.jobs")

# Defers on Django's connection of the calling thread, in a worker too (`job_defer`; for
# batches: `django_job_manager.batch_defer_jobs(jobs=...)`).
django_job_manager = manager.JobManager(
    connector=DjangoConnector(alias=procrastinate_settings.DATABASE_ALIAS)
)


def job_defer(task: tasks.Task | jobs.JobDeferrer, /, **task_kwargs) -> int:
    """Defer a job of `task` (a task, or `task.configure(...)` for a lock, a queue, a delay)
    in the caller's transaction, on Django's connection; return its id. Sync code only (a
    service, a view, a sync task). Raises procrastinate's `AlreadyEnqueued` when the job's
    queueing lock is taken; the database error behind it breaks the caller's transaction, so
    a caller that goes on after catching it defers inside a savepoint (`atomic()`)."""
    configured = task if isinstance(task, jobs.JobDeferrer) else task.configure()
    deferrer = jobs.JobDeferrer(job_manager=django_job_manager, job=configured.job)
    return deferrer.defer(**task_kwargs)


def stalled_seconds() -> float:
    """How long a worker may stay silent before its jobs count as stalled."""
    return float(settings.PROCRASTINATE_WORKER_DEFAULTS["stalled_worker_timeout"])


async def stalled_jobs_retry(
    *, job_manager: manager.JobManager | None = None, seconds_since_heartbeat: float | None = None
) -> dict[str, list[int]]:
    """Retry every job left in `doing` by a worker silent for `seconds_since_heartbeat`
    (default: `stalled_seconds()`); return the ids retried and the ids superseded.
    `job_manager`: the running worker's (`context.app.job_manager`), else the app's.

    Safe to run from several workers at once: a job that another run (or its own worker, back
    from a pause) moved on since it was listed is left alone. A stalled job whose
    `queueing_lock` is taken by a job already waiting in `todo` (for a periodic task: the next
    tick's job, which does the same work) cannot go back to `todo`: it is marked `failed` and
    counted as superseded, and the waiting job runs instead.
    """
    job_manager = job_manager or app.job_manager
    if seconds_since_heartbeat is None:
        seconds_since_heartbeat = stalled_seconds()
    retried, superseded = [], []
    stalled = await job_manager.get_stalled_jobs(seconds_since_heartbeat=seconds_since_heartbeat)
    for job in stalled:
        extra = {"action": "retry_stalled_job", "jobId": job.id, "task": job.task_name}
        try:
            await job_manager.retry_job(job)
        except exceptions.UniqueViolation:
            try:
                await job_manager.finish_job(job, status=jobs.Status.FAILED, delete_job=False)
            except exceptions.ConnectorException:
                continue
            superseded.append(job.id)
            logger.warning(
                "Stalled job %s failed: a job with its queueing lock is already waiting",
                job.id,
                extra=extra,
            )
        except exceptions.ConnectorException:
            # No longer `doing`: retried by another run, or finished after all.
            continue
        else:
            retried.append(job.id)
            logger.warning("Stalled job %s of a silent worker retried", job.id, extra=extra)
    return {"retried": retried, "superseded": superseded}
