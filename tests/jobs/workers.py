"""Real procrastinate workers for tests: `manage.py procrastinate worker` in a subprocess, on the
test database (the one pytest-django made), with the test settings.

    @pytest.mark.django_db(transaction=True)      # the worker only sees what is committed
    def test_something(workers):                  # the fixture (tests/jobs/conftest.py)
        worker = workers.start(queues=["tests"], import_paths=["tests.jobs.probe_tasks"])
        ...
        wait_until(lambda: job_status(job_id) == "succeeded")
        worker.stop()

`Workers` (behind the fixture) kills every worker it started when the test ends, whatever
happened (and on Linux the kernel kills a worker whose test process died). Elsewhere than
tests/jobs, the same fixture is

    @pytest.fixture
    def workers():
        with Workers() as started:
            yield started

Test-only tasks: put them in a module the worker imports (`import_paths=[...]`, read from
PROCRASTINATE_IMPORT_PATHS by config/settings/test.py), and import it in the test to defer them.

`worker.records()` parses the worker's log (stderr): every line must be one JSON object (the
project's logging config), else the test fails. `clear_jobs()` empties procrastinate's tables,
which Django's flush between tests does not touch (unmanaged models).
"""

import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from urllib.parse import quote, urlencode

import psycopg
from django.db import connections
from psycopg import sql

ROOT = Path(__file__).resolve().parents[2]
PROCRASTINATE_TABLES = (
    "procrastinate_periodic_defers",
    "procrastinate_events",
    "procrastinate_jobs",
    "procrastinate_workers",
)


def database_url(alias: str = "default") -> str:
    """A DATABASE_URL for the database `alias` points at now: inside a test, the test
    database. A Unix socket directory (HOST, or OPTIONS["host"] as django-environ leaves
    `?host=` in the URL) and the other plain connection options go in the query string."""
    config = connections[alias].settings_dict
    user = quote(config.get("USER") or "", safe="")
    password = quote(str(config.get("PASSWORD") or ""), safe="")
    name = quote(config["NAME"], safe="")
    host, port = config.get("HOST") or "", str(config.get("PORT") or "")
    # prepare_threshold is psycopg's, not a libpq parameter: the process given this URL sets
    # its own from its settings.
    options = {
        key: value
        for key, value in (config.get("OPTIONS") or {}).items()
        if isinstance(value, str | int)
        and not isinstance(value, bool)
        and key != "prepare_threshold"
    }
    if host.startswith("/"):
        options["host"], host = host, ""
        if port:
            options["port"], port = port, ""
    netloc = f"{host}:{port}" if host and port else host
    url = f"postgresql://{user}:{password}@{netloc}/{name}"
    return f"{url}?{urlencode(options)}" if options else url


def clear_jobs() -> None:
    """Delete every job, event, periodic defer and worker row, on a connection of its own
    (committed at once, whatever transaction the test is in). Rows the test's own open
    transaction has written are not seen (nor waited for) by this connection."""
    with psycopg.connect(database_url(), autocommit=True) as conn:
        conn.execute("SET lock_timeout = '10s'")  # fail, never hang, on a row someone holds
        for table in PROCRASTINATE_TABLES:
            conn.execute(sql.SQL("DELETE FROM {}").format(sql.Identifier(table)))


def wait_until(
    predicate: Callable[[], object], *, timeout: float = 15.0, interval: float = 0.05
) -> object:
    """Call `predicate` until it returns something truthy, and return that; fail after
    `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after {timeout} s: {predicate}")
        time.sleep(interval)


def _die_with_parent() -> None:
    """In the worker process, before it runs: on Linux, ask the kernel to SIGKILL it if the
    test process dies first (killed itself, it has no chance to clean up)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Worker:
    """One `manage.py procrastinate worker` subprocess. Its heartbeat interval and stalled
    timeout come from PROCRASTINATE_HEARTBEAT_SECONDS / PROCRASTINATE_STALLED_SECONDS."""

    def __init__(
        self,
        *,
        name: str,
        queues: Iterable[str] = (),
        concurrency: int = 1,
        heartbeat_seconds: float = 10.0,
        stalled_seconds: float = 30.0,
        import_paths: Iterable[str] = (),
        env: dict[str, str] | None = None,
    ):
        self.name = name
        self.command = [
            sys.executable,
            "manage.py",
            "procrastinate",
            "worker",
            "--name",
            name,
            "--concurrency",
            str(concurrency),
            "--fetch-job-polling-interval",
            "0.2",
        ]
        queues = list(queues)
        if queues:
            self.command += ["--queues", ",".join(queues)]
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": database_url(),
            "PROCRASTINATE_HEARTBEAT_SECONDS": str(heartbeat_seconds),
            "PROCRASTINATE_STALLED_SECONDS": str(stalled_seconds),
            "PROCRASTINATE_IMPORT_PATHS": ",".join(import_paths),
            "LOG_LEVEL": "INFO",
            "PYTHONUNBUFFERED": "1",
            **(env or {}),
        }
        self.process: subprocess.Popen | None = None
        self._log = tempfile.TemporaryFile(mode="w+", prefix=f"worker-{name}-")
        self._out = tempfile.TemporaryFile(mode="w+", prefix=f"worker-{name}-out-")

    def start(self) -> "Worker":
        self.process = subprocess.Popen(  # noqa: S603 (our own interpreter and manage.py)
            self.command,
            cwd=ROOT,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=self._out,
            stderr=self._log,
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )
        return self

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def wait_started(self, timeout: float = 20.0) -> int:
        """Wait for the worker to register itself; return its id in `procrastinate_workers`."""

        def started():
            if not self.alive():
                raise AssertionError(f"worker {self.name} exited:\n{self.log_text()}")
            for record in self.records():
                if record.get("action") == "start_worker":
                    return record["worker"]["worker_id"]
            return None

        return wait_until(started, timeout=timeout)

    def kill(self) -> None:
        """SIGKILL: the worker gets no chance to finish or give back its jobs."""
        if self.alive():
            os.killpg(self.pid, signal.SIGKILL)
        if self.process is not None:
            self.process.wait(timeout=10)

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM (a graceful stop: running jobs finish first), SIGKILL after `timeout`;
        return the exit code."""
        if self.alive():
            os.killpg(self.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        return None if self.process is None else self.process.returncode

    def log_text(self) -> str:
        self._log.flush()
        self._log.seek(0)
        return self._log.read()

    def records(self) -> list[dict]:
        """The worker's log lines (stderr), each parsed as one JSON object. procrastinate's
        command prints one plain line itself before logging starts ("Launching a worker on
        ..."): not a log record, skipped."""
        records = []
        for line in self.log_text().splitlines():
            if line.startswith("Launching a worker on "):
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                raise AssertionError(
                    f"worker {self.name} logged a non-JSON line: {line!r}"
                ) from None
        return records

    def close(self) -> None:
        self.kill()
        self._log.close()
        self._out.close()


class Workers:
    """Starts workers on the test database and kills all of them on exit."""

    def __init__(self):
        self.started: list[Worker] = []
        self._count = 0

    def start(self, **options) -> Worker:
        self._count += 1
        options.setdefault("name", f"test-worker-{self._count}")
        worker = Worker(**options)
        self.started.append(worker)
        return worker.start()

    def __enter__(self) -> "Workers":
        return self

    def __exit__(self, *exc_info) -> None:
        for worker in self.started:
            worker.close()
