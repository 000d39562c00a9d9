"""A worker keeps serving its queue across a restart of its database (jobs.connector,
docs/jobs.md "When the database goes away"): a real worker on a throwaway PostgreSQL
(tests/throwaway_postgres.py) that holds only procrastinate's schema, the server crashed and
started again under it."""

import json
from pathlib import Path

import procrastinate
import psycopg

from tests.throwaway_postgres import postgres_template, servers  # noqa: F401 (fixtures)

from .workers import wait_until

SCHEMA = Path(procrastinate.__file__).parent / "sql" / "schema.sql"


def _defer_noop(url: str, via: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(
            "SELECT unnest(procrastinate_defer_jobs_v1(ARRAY[ROW('tests', 'tests.jobs.noop', 0,"
            " NULL, NULL, %s::jsonb, NULL)::procrastinate_job_to_defer_v1]))",
            [json.dumps({"via": via})],
        ).fetchone()[0]


def _status(url: str, job_id: int) -> str | None:
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            return conn.execute(
                "SELECT status FROM procrastinate_jobs WHERE id = %s", [job_id]
            ).fetchone()[0]
    except psycopg.OperationalError:
        return None


def test_a_worker_runs_jobs_again_after_its_database_restarted(servers, workers):  # noqa: F811
    pg = servers()
    url = f"postgresql://postgres:@/postgres?host={pg.directory}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(SCHEMA.read_text())
    worker = workers.start(
        queues=["tests"],
        import_paths=["tests.jobs.probe_tasks"],
        env={"DATABASE_URL": url, "DATABASE_POOL": "1"},
    )
    worker.wait_started()
    before = _defer_noop(url, "before the restart")
    wait_until(lambda: _status(url, before) == "succeeded")

    pg.stop()
    # Down until the worker's listener has seen it: it listens again (jobs.connector), where
    # procrastinate's own stops the worker ("side_task_failed").
    noticed = ("listen_again", "side_task_failed")
    wait_until(lambda: any(r.get("action") in noticed for r in worker.records()))
    pg.start()

    after = _defer_noop(url, "after the restart")
    assert [r["action"] for r in worker.records() if r.get("action") in noticed][0] == (
        "listen_again"
    )
    wait_until(lambda: _status(url, after) == "succeeded", timeout=10)
    assert worker.alive()
    assert not [r for r in worker.records() if r.get("action") == "side_task_failed"]
    worker.stop()
    pg.stop()
