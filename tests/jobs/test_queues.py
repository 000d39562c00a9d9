"""Periodic jobs and webhook deliveries have their own queues and their own workers
(docs/jobs.md, "Workers"): every task names one of the two queues, `scripts/run` starts one
worker per queue (both stopped by its trap), and with real workers a periodic job runs while
the only delivery slot is held by a slow receiver."""

import re
import shlex
import subprocess
import time

import pytest
from django.db import transaction
from procrastinate.contrib.django import app
from procrastinate.contrib.django.models import ProcrastinateJob
from procrastinate.exceptions import AlreadyEnqueued

from events.services import emit
from jobs import tasks as periodic_tasks
from jobs.services import job_defer
from tests.factories import InstitutionFactory
from tests.webhooks.helpers import Receiver
from webhooks import tasks as webhook_tasks
from webhooks.models import WebhookDelivery
from webhooks.services import webhook_endpoint_create

from .helpers import job_status
from .workers import ROOT, wait_until

RUN = ROOT / "scripts" / "run"


def our_tasks() -> dict[str, str]:
    """Task name -> queue, for the service's own tasks (not procrastinate's built-ins, not
    the test-only ones)."""
    return {
        name: task.queue
        for name, task in app.tasks.items()
        if name.startswith(("jobs.", "webhooks."))
    }


def test_every_task_names_its_queue():
    assert (periodic_tasks.QUEUE, webhook_tasks.QUEUE) == ("periodic", "webhooks")
    queues = our_tasks()
    assert queues.pop("webhooks.deliver") == "webhooks"
    periodic = {p.task.name for p in app.periodic_registry.periodic_tasks.values()}
    assert set(queues) == {name for name in periodic if name.startswith("jobs.")}
    assert set(queues.values()) == {"periodic"}


def worker_commands() -> list[list[str]]:
    """The worker commands `scripts/run` starts in the background."""
    return [
        shlex.split(match)
        for match in re.findall(
            r"^(\.venv/bin/python manage\.py procrastinate worker [^>&\n]*)>>[^\n]*&$",
            RUN.read_text(),
            flags=re.MULTILINE,
        )
    ]


def option(command: list[str], name: str) -> str | None:
    return command[command.index(name) + 1] if name in command else None


def test_scripts_run_starts_one_worker_per_queue_and_stops_both():
    commands = worker_commands()
    groups = sorted(option(command, "--queues") for command in commands)
    assert groups == ["periodic", "webhooks"]  # each queue its own worker, no all-queues one
    assert set(our_tasks().values()) == set(groups)  # every task's queue is served
    assert all(int(option(command, "--concurrency")) >= 2 for command in commands)
    text = RUN.read_text()
    [exit_trap] = re.findall(r"^trap '(.*)' EXIT$", text, flags=re.MULTILINE)
    kill, wait = exit_trap.split(";")
    for pid in ("periodic_pid", "webhooks_pid"):
        assert f"{pid}=$!" in text  # each worker's pid is kept...
        assert f'"${pid}"' in kill and f'"${pid}"' in wait  # ...and stopped on exit
    assert re.search(r"^trap 'exit 130' INT TERM$", text, flags=re.MULTILINE)  # Ctrl-C exits
    subprocess.run(["bash", "-n", str(RUN)], check=True)  # noqa: S603, S607


def ran(worker) -> set[str]:
    """The queues of the jobs `worker` ran (its log)."""
    return {
        record["job"]["queue"]
        for record in worker.records()
        if record.get("action") == "start_job" and "job" in record
    }


@pytest.mark.django_db(transaction=True)
def test_a_periodic_job_runs_while_every_delivery_slot_is_held(workers):
    """The webhooks worker (one slot here) is busy with a receiver that takes 4 s to answer;
    the periodic worker runs the hold expiry meanwhile. Neither takes the other's jobs."""
    slow = Receiver()
    slow.delay = 4.0
    try:
        institution = InstitutionFactory()
        webhook_endpoint_create(institution=institution, url=slow.url, event_types=["*"])
        common = {"env": {"WEBHOOK_TIMEOUT_SECONDS": "10"}}
        deliveries = workers.start(name="webhooks", queues=["webhooks"], **common)
        periodic = workers.start(name="periodic", queues=["periodic"], **common)
        assert deliveries.wait_started() != periodic.wait_started()
        running = ProcrastinateJob.objects.filter(
            task_name="jobs.expire_holds", status__in=["todo", "doing"]
        )
        wait_until(lambda: not running.exists())  # the ticks deferred at start are done

        with transaction.atomic():
            emit(
                institution=institution,
                type="customer.created",
                object_type="customer",
                object_id="cus_1",
                data={"customerId": "cus_1"},
            )
        [request] = wait_until(lambda: list(slow.received))  # the one delivery slot is held
        try:
            job_id = job_defer(periodic_tasks.expire_holds, timestamp=0)
        except AlreadyEnqueued:  # the minute's tick came first: that job shows the same
            job_id = ProcrastinateJob.objects.filter(task_name="jobs.expire_holds").latest("id").pk
        wait_until(lambda: job_status(job_id) == "succeeded", timeout=10)
        assert time.monotonic() < request.at + slow.delay  # the delivery is still in flight
        assert WebhookDelivery.objects.get().status == "pending"

        slow.hurry()  # seen in flight: its answer now, not at the end of the 4 s
        wait_until(lambda: WebhookDelivery.objects.get().status == "succeeded", timeout=15)
        assert ran(deliveries) == {"webhooks"} and ran(periodic) == {"periodic"}
    finally:
        slow.stop()
