"""The payments job in a real process of its own (`sys.executable`, the test settings, the test
database, the test's RAILS_DIR), as a second machine would run it: for the tests of two jobs at
once and of a job killed mid-run. Only what is committed is seen: use it from
`django_db(transaction=True)` tests. `job=` runs another job that takes `now=` the same way
(`"interest.accrual.interest_accrue"`; no RAILS_DIR then), `arguments=` its other keyword
arguments (JSON: `{"batch_size": 2}`); `clock=True` stands the process's clock at `instant`
(tests.accounts.api.test_statements.Clock), for a world made under a Clock in the future.

    process = RailsProcess(rails_dir, instant)             # started, set up, connected
    process.go()                                           # runs rails_run at `instant`
    assert process.finish() == 0

`die_at="module.function"` and `after=N`: the process SIGKILLs itself on the call N + 1 of that
function (its first N calls run), its transaction open: a crash at that point."""

import json
import os
import signal
import subprocess
import sys
from datetime import datetime

from tests.jobs.workers import ROOT, _die_with_parent, database_url

# argv: the instant (ISO), the function to die in ("" for none), how many of its calls to run,
# the job (module.function), its other arguments (JSON), "clock" to stand the clock at the instant.
# Prints "ready" once connected, waits for a line on stdin, runs the job, prints its result.
SCRIPT = """
import importlib
import json
import os
import signal
import sys
from dataclasses import asdict
from datetime import datetime
from unittest import mock

import django

django.setup()
from django.db import connection

from core import operations
from core.actors import SYSTEM

patches = []
instant, die_at, after = datetime.fromisoformat(sys.argv[1]), sys.argv[2], int(sys.argv[3])
job_module, job_name = sys.argv[4].rsplit(".", 1)
job, arguments = getattr(importlib.import_module(job_module), job_name), json.loads(sys.argv[5])
if sys.argv[6]:
    from tests.accounts.api.test_statements import Clock

    patches.append(Clock(instant))
if die_at:
    module_name, name = die_at.rsplit(".", 1)
    module = importlib.import_module(module_name)
    original, calls = getattr(module, name), []

    def dying(*args, **kwargs):
        calls.append(1)
        if len(calls) > after:
            os.kill(os.getpid(), signal.SIGKILL)
        return original(*args, **kwargs)

    patches.append(mock.patch.object(module, name, dying))
connection.ensure_connection()
print("ready", flush=True)
sys.stdin.readline()
for each in patches:
    each.__enter__()
result = operations.run_batches(job, actor=SYSTEM, now=instant, **arguments)
print(json.dumps(asdict(result)), flush=True)
"""


class RailsProcess:
    def __init__(
        self,
        rails_dir,
        instant: datetime,
        *,
        die_at: str = "",
        after: int = 0,
        job: str = "payments.services.rails.rails_run",
        arguments: dict | None = None,
        clock: bool = False,
    ):
        argv = [instant.isoformat(), die_at, str(after), job, json.dumps(arguments or {})]
        argv.append("clock" if clock else "")
        self.process = subprocess.Popen(  # noqa: S603 (our own interpreter and script)
            [sys.executable, "-c", SCRIPT, *argv],
            cwd=ROOT,
            env={
                **os.environ,
                "DJANGO_SETTINGS_MODULE": "config.settings.test",
                "DATABASE_URL": database_url(),
                **({"RAILS_DIR": str(rails_dir)} if rails_dir is not None else {}),
                "LOG_LEVEL": "WARNING",
            },
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        line = self.process.stdout.readline()
        if line.strip() != "ready":
            self.process.kill()
            raise AssertionError(f"the job's process did not start:\n{self.error()}")

    def go(self) -> None:
        self.process.stdin.write("go\n")
        self.process.stdin.flush()

    def finish(self, timeout: float = 60) -> int:
        """Wait for the process to end; its exit status (-9: killed)."""
        self.out, self.err = self.process.communicate(timeout=timeout)
        return self.process.returncode

    def result(self) -> dict:
        """The job's result (the payments job's `RailsRun`), as the process printed it."""
        assert self.process.returncode == 0, self.err[-3000:]
        return json.loads(self.out.strip().splitlines()[-1])

    def error(self) -> str:
        return self.process.stderr.read()[-3000:] if self.process.stderr else ""

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)
