"""What the benchmarks that time a job in a child process of their own share (bench/interest.py,
bench/reconciliation.py): their own database made anew and migrated, the child run and its one
JSON line read back, and the embedded server's postmaster for its CPU.

The parent makes the world and starts the child for each size, so that each run's process
starts empty (its peak memory, its CPU) and the world's making is not timed.
"""

import json
import logging
import os
import subprocess
import sys
import warnings
from pathlib import Path
from urllib.parse import urlsplit

from common import recreate_database, server_url, service_environment, with_database
from cpu import postmaster_pid

ROOT = Path(__file__).resolve().parent.parent


def migrate() -> None:
    command = [sys.executable, "manage.py", "migrate", "--noinput", "-v0"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)  # noqa: S603
    if result.returncode != 0:
        raise RuntimeError(f"migrate failed:\n{result.stdout}\n{result.stderr}")


def own_database(database: str) -> str:
    """`database` made anew on the server, migrated, Django set up on it with production
    settings; prints the server's version and the machine's load. Returns the server's admin
    URL (to drop it at the end). Refuses a DATABASE_URL that names it."""
    own = urlsplit(os.environ.get("DATABASE_URL", "")).path.strip("/")
    if own == database:
        sys.exit(f"DATABASE_URL names {own}, which this benchmark drops; use another database.")
    if os.environ.get("DATABASE_URL"):
        os.environ["BENCH_EXTERNAL_DB"] = "1"  # the server's CPU is not this machine's to read
    admin_url = server_url()
    recreate_database(admin_url, database)
    os.environ.update(service_environment(with_database(admin_url, database), rate_limit=0))
    migrate()
    import django

    django.setup()
    logging.disable(logging.INFO)
    warnings.filterwarnings("ignore", message="No directory at")
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT version()")
        print(f"Server: {cursor.fetchone()[0].split(' on ')[0]}")
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"Machine: {os.cpu_count()} cores, load average {load} (others work on it too)")
    return admin_url


def postmaster_pid_here():
    """The embedded server's postmaster (its CPU is read from /proc), None for another server."""
    if os.environ.get("BENCH_EXTERNAL_DB"):
        return None
    from core.embedded_db import PGDATA

    return postmaster_pid(PGDATA)


def run_in_child(script: str, argument: str, flags: list[str], profile: bool) -> dict:
    """`script --run argument *flags` in a process of its own; its last stdout line, JSON."""
    command = [sys.executable, script, "--run", argument, *flags]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)  # noqa: S603
    if done.returncode != 0:
        raise RuntimeError(f"the run failed:\n{done.stdout}\n{done.stderr}")
    if profile:
        print(done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])
