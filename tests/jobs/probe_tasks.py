"""Tasks only tests run. A worker started by a test loads them through
PROCRASTINATE_IMPORT_PATHS=tests.jobs.probe_tasks (config/settings/test.py); the test process
imports this module to defer them."""

import time
from pathlib import Path

from django.db import transaction
from procrastinate.contrib.django import app

from jobs.services import job_defer

QUEUE = "tests"


@app.task(name="tests.jobs.hang_first_attempt", queue=QUEUE, pass_context=True)
def hang_first_attempt(context, *, journal: str) -> str:
    """Append "start <attempt>" to the file `journal`. The first attempt then hangs (until its
    worker is killed, at most a minute); a later one appends "done"."""
    attempt = context.job.attempts
    path = Path(journal)
    with path.open("a") as out:
        out.write(f"start {attempt}\n")
    if attempt == 0:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(0.05)
        raise TimeoutError("nobody killed this worker")
    with path.open("a") as out:
        out.write("done\n")
    return "done"


@app.task(name="tests.jobs.noop", queue=QUEUE)
def noop(*, via: str) -> None:
    """Does nothing: `via` says how it was deferred."""


class RolledBack(Exception):
    pass


@app.task(name="tests.jobs.defer_and_roll_back", queue=QUEUE)
def defer_and_roll_back() -> None:
    """In a transaction that rolls back, defer `noop` with `task.defer()` and with `job_defer`;
    then, in one that commits, with `job_defer` again."""
    try:
        with transaction.atomic():
            noop.defer(via="task.defer, rolled back")
            job_defer(noop, via="job_defer, rolled back")
            raise RolledBack
    except RolledBack:
        pass
    with transaction.atomic():
        job_defer(noop, via="job_defer, committed")
