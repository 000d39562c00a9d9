"""Transfers through crashes: gunicorn workers and PostgreSQL killed under load, writes retried.

    .venv/bin/python bench/chaos.py [--concurrency 8] [--seconds 60] [--batch K] [--drop]

Recreates a database of its own (tx_chaos), starts the service under gunicorn with production
settings, drives POST /TX/v2/transfers (and, with --batch K, atomic POST /TX/v2/transfer-batches)
with clients that retry every failed request with its Idempotency-Key, while a chaos thread
SIGKILLs gunicorn workers and, on the embedded server of this checkout, PostgreSQL's backends or
its postmaster; then checks that nothing acknowledged was lost, nothing was posted twice or
without its acknowledgment, and that the ledger holds. Exits 1 on a violation. bench/README.md
explains every step.
"""

import argparse
import http.client
import json
import os
import random
import signal
import sys
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import psycopg
from psycopg.conninfo import conninfo_to_dict

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from common import (  # noqa: E402  (bench/common.py)
    create_tenant,
    drop_database,
    free_port,
    open_accounts,
    recreate_database,
    run,
    server_url,
    service_environment,
    start_gunicorn,
    stop_gunicorn,
    wait_until_up,
    with_database,
)
from cpu import postmaster_pid  # noqa: E402  (bench/cpu.py)

from bench.transfers import (  # noqa: E402  (as `bench.transfers`: `transfers` is the app)
    CURRENCY,
    INSTITUTION,
    LOAD_AMOUNT,
    RATE_LIMIT,
)
from core.embedded_db import PGDATA  # noqa: E402

DATABASE = "tx_chaos"
LOG_FILE = ROOT / ".data" / "bench" / "chaos-gunicorn.log"
TRANSFERS = "/TX/v2/transfers"
BATCHES = "/TX/v2/transfer-batches"
# Answers that are not the service's decision: the client sends the same request again.
RETRYABLE_CODES = {"idempotency_key_in_use", "rate_limited"}
BACKOFF_FIRST, BACKOFF_MAX = 0.05, 1.0  # seconds, doubled at each retry of one request
SHOWN = 10  # rows of evidence printed per violation


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=8, help="clients (default 8)")
    parser.add_argument("--seconds", type=int, default=60, help="length of the run (default 60)")
    parser.add_argument("--accounts", type=int, default=20, help="accounts (default 20)")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers (default 4)")
    parser.add_argument("--threads", type=int, default=2, help="threads per worker (default 2)")
    parser.add_argument(
        "--interval", type=float, default=5, help="seconds between chaos actions (default 5)"
    )
    parser.add_argument(
        "--batch",
        type=int,
        default=0,
        help="K > 0: a share of the requests are atomic POST /transfer-batches of K transfers",
    )
    parser.add_argument(
        "--batch-share",
        type=float,
        default=0.25,
        help="with --batch, the share of requests that are batches (default 0.25)",
    )
    parser.add_argument(
        "--timeout", type=float, default=15, help="seconds a client waits for an answer (15)"
    )
    parser.add_argument(
        "--drain",
        type=float,
        default=120,
        help="seconds after the run within which every request must get an answer (120)",
    )
    parser.add_argument(
        "--crash-shared",
        action="store_true",
        help="crash PostgreSQL even while other databases of the server have clients (by "
        "default such a crash is skipped, and a worker killed instead)",
    )
    parser.add_argument("--seed", type=int, default=None, help="chaos's random seed")
    parser.add_argument("--drop", action="store_true", help="drop the database at the end")
    return parser.parse_args()


STARTED = time.monotonic()


def log(message: str) -> None:
    now = time.time()
    stamp = time.strftime("%H:%M:%S", time.localtime(now)) + f".{int(now * 1000) % 1000:03d}"
    print(f"[{stamp} +{time.monotonic() - STARTED:6.1f}s] {message}", flush=True)


# --- Clients: logical transfers, each sent until the service decides


@dataclass
class Operation:
    """One logical write: a transfer, or an atomic batch; its key and body never change."""

    key: str
    path: str
    body: str
    items: list[dict]  # each transfer: reference, source, destination, amount


@dataclass
class Outcome:
    operation: Operation
    status: int | None = None  # the definitive answer; None: none within the drain
    code: str | None = None
    transfer_ids: list[str] = field(default_factory=list)  # per item, on a 201
    retries: int = 0
    replayed: bool = False  # the 201 came from the idempotency record (Idempotent-Replayed)
    last_error: str | None = None


@dataclass
class ClientResult:
    outcomes: list[Outcome] = field(default_factory=list)
    attempts: int = 0
    retry_reasons: Counter = field(default_factory=Counter)
    mismatches: list[str] = field(default_factory=list)  # a 201 that does not answer its body


def new_operation(rng, account_ids, prefix, size) -> Operation:
    items = []
    for index in range(max(size, 1)):
        source, destination = rng.sample(account_ids, 2)
        items.append(
            {
                "source": {"accountId": source},
                "destination": {"accountId": destination},
                "amount": rng.randint(1, 100),
                "currency": CURRENCY,
                "reference": f"{prefix}-{index}" if size else prefix,
            }
        )
    if size:
        path, body = BATCHES, {"mode": "atomic", "transfers": items}
    else:
        path, body = TRANSFERS, items[0]
    return Operation(key=str(uuid.uuid4()), path=path, body=json.dumps(body), items=items)


def send(conn_box, port, api_key, operation, timeout):
    """One attempt: (status, parsed body or None, replayed) or raises OSError/HTTPException."""
    if conn_box[0] is None:
        conn_box[0] = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {
        "x-api-key": api_key,
        "Content-Type": "application/json",
        "Idempotency-Key": operation.key,
    }
    try:
        conn_box[0].request("POST", operation.path, body=operation.body, headers=headers)
        response = conn_box[0].getresponse()
        raw = response.read()
    except (OSError, http.client.HTTPException):
        conn_box[0].close()
        conn_box[0] = None  # the next attempt opens a new connection
        raise
    try:
        data = json.loads(raw or b"null")
    except ValueError:
        data = None
    return response.status, data, response.getheader("Idempotent-Replayed") == "true"


def acknowledged_ids(operation: Operation, data, mismatches: list[str]) -> list[str]:
    """The transfer ids a 201 names, item by item; a 201 that does not match its request is
    noted (a violation)."""
    if operation.path == TRANSFERS:
        answered = [data] if isinstance(data, dict) else []
    else:
        answered = data.get("results", []) if isinstance(data, dict) else []
        if isinstance(data, dict) and data.get("posted") != len(operation.items):
            mismatches.append(f"{operation.key}: atomic batch answered 201 with {data}")
    ids = []
    for item, result in zip(operation.items, answered, strict=False):
        if result.get("reference") != item["reference"] or not result.get("transferId"):
            mismatches.append(f"{operation.key}: item {item['reference']} answered {result}")
        ids.append(result.get("transferId"))
    if len(answered) != len(operation.items):
        mismatches.append(f"{operation.key}: {len(answered)} results for {len(operation.items)}")
    return ids


def send_until_decided(conn_box, port, api_key, operation, timeout, give_up, rng, result):
    """Send `operation` (same key, same body) until 201 or a 4xx that is the service's decision;
    connection errors, timeouts, 5xx, 409 idempotency_key_in_use and 429 are retried after a
    short backoff. After `give_up` (monotonic) the operation stays undecided."""
    outcome = Outcome(operation)
    delay = BACKOFF_FIRST
    while True:
        result.attempts += 1
        try:
            status, data, replayed = send(conn_box, port, api_key, operation, timeout)
        except (OSError, http.client.HTTPException) as error:
            reason = type(error).__name__
        else:
            code = data.get("code") if isinstance(data, dict) else None
            if status == 201:
                outcome.status, outcome.replayed = status, replayed
                outcome.transfer_ids = acknowledged_ids(operation, data, result.mismatches)
                return outcome
            if 400 <= status < 500 and code not in RETRYABLE_CODES:
                outcome.status, outcome.code = status, code
                return outcome
            reason = f"{status} {code}"
        outcome.last_error = reason
        if time.monotonic() >= give_up:
            return outcome
        outcome.retries += 1
        result.retry_reasons[reason] += 1
        time.sleep(delay * (0.5 + rng.random()))
        delay = min(delay * 2, BACKOFF_MAX)


def client(number, port, api_key, account_ids, deadline, give_up, options, run_id, result):
    """New logical transfers until `deadline`, each sent until decided (or `give_up`)."""
    rng = random.Random(number)
    conn_box = [None]
    sequence = 0
    while time.monotonic() < deadline:
        sequence += 1
        prefix = f"chaos-{run_id}-{number}-{sequence}"
        size = options.batch if options.batch and rng.random() < options.batch_share else 0
        operation = new_operation(rng, account_ids, prefix, size)
        result.outcomes.append(
            send_until_decided(
                conn_box, port, api_key, operation, options.timeout, give_up, rng, result
            )
        )
    if conn_box[0] is not None:
        conn_box[0].close()


# --- Chaos: SIGKILL a gunicorn worker, a PostgreSQL backend, the postmaster


def accepting(url: str) -> bool:
    try:
        with psycopg.connect(url, connect_timeout=2, autocommit=True) as conn:
            conn.execute("SELECT 1")
        return True
    except psycopg.Error:
        return False


class Chaos(threading.Thread):
    """Every `interval` seconds one action, in turn: a gunicorn worker, then (on the embedded
    server only) PostgreSQL, a backend or the postmaster alternately."""

    def __init__(self, gunicorn_pid, admin_url, embedded, interval, crash_shared, seed, env):
        super().__init__(daemon=True)
        self.gunicorn_pid = gunicorn_pid
        self.admin_url = admin_url
        self.embedded = embedded
        self.interval = interval
        self.crash_shared = crash_shared
        self.rng = random.Random(seed)
        self.env = env  # the environment the developer started this script with
        self.stop = threading.Event()
        self.counts = Counter()
        self.outage = 0.0  # seconds PostgreSQL did not accept connections after our crashes
        self.error: BaseException | None = None

    def run(self):
        cycle = ["worker", "backend", "worker", "postmaster"] if self.embedded else ["worker"]
        turn = 0
        try:
            while not self.stop.wait(self.interval):
                action = cycle[turn % len(cycle)]
                turn += 1
                if action == "worker":
                    self.kill_worker()
                elif self.other_clients():
                    self.kill_worker()
                else:
                    self.kill_backend() if action == "backend" else self.kill_postmaster()
        except Exception as error:  # reported by main, which then exits 1
            self.error = error
            log(f"chaos: stopped by {type(error).__name__}: {error}")
            self.ensure_postgres()

    def kill_worker(self):
        try:
            workers = psutil.Process(self.gunicorn_pid).children()
        except psutil.Error:
            workers = []
        if not workers:
            log("chaos: no gunicorn worker to kill (master restarting them?)")
            self.counts["worker kill: none found"] += 1
            return
        worker = self.rng.choice(workers)
        os.kill(worker.pid, signal.SIGKILL)
        self.counts["gunicorn worker SIGKILL"] += 1
        log(f"chaos: SIGKILL gunicorn worker {worker.pid} (of {len(workers)})")

    def other_clients(self) -> bool:
        """True (and the crash skipped) when other databases of the server have clients, unless
        --crash-shared: crashing the server would break their connections too."""
        if self.crash_shared:
            return False
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT datname, count(*) FROM pg_stat_activity"
                " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
                " AND datname IS DISTINCT FROM %s GROUP BY datname",
                [DATABASE],
            ).fetchall()
        if not rows:
            return False
        others = ", ".join(f"{name} ({count})" for name, count in rows)
        log(f"chaos: PostgreSQL crash skipped, other clients on the server: {others}")
        self.counts["PostgreSQL crash skipped (other clients)"] += 1
        return True

    def kill_backend(self):
        """A backend of tx_chaos, one inside a statement if one shows within a second (most are
        idle in the pools between requests)."""
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            for _ in range(50):
                rows = conn.execute(
                    "SELECT pid, state FROM pg_stat_activity WHERE backend_type = 'client backend'"
                    " AND datname = %s AND pid <> pg_backend_pid()",
                    [DATABASE],
                ).fetchall()
                active = [pid for pid, state in rows if state != "idle"]
                if active:
                    break
                time.sleep(0.02)
        if not rows:
            log(f"chaos: no backend of {DATABASE} to kill")
            self.counts["backend kill: none found"] += 1
            return
        pid = self.rng.choice(active or [pid for pid, _ in rows])
        os.kill(pid, signal.SIGKILL)
        self.counts["PostgreSQL backend SIGKILL"] += 1
        log(
            f"chaos: SIGKILL PostgreSQL backend {pid} ({'not idle' if active else 'idle'}; "
            f"{len(rows)} backends of {DATABASE}): the postmaster resets every backend"
        )
        self.wait_accepting()

    def kill_postmaster(self):
        pid = postmaster_pid(PGDATA)
        try:
            children = psutil.Process(pid).children() if pid else []
        except psutil.Error:
            children = []
        if pid is None:
            log("chaos: no postmaster.pid; nothing to kill")
            self.counts["postmaster kill: none found"] += 1
            return
        os.kill(pid, signal.SIGKILL)
        self.counts["PostgreSQL postmaster SIGKILL"] += 1
        log(f"chaos: SIGKILL PostgreSQL postmaster {pid} ({len(children)} children)")
        down = time.monotonic()
        # Its backends notice the postmaster's death and exit; a server cannot start while they
        # still hold the old shared memory. Wait for them, then kill what is left.
        _, alive = psutil.wait_procs(children, timeout=10)
        for child in alive:
            try:
                child.kill()
            except psutil.Error:
                pass
        if alive:
            log(f"chaos: {len(alive)} orphaned PostgreSQL processes did not exit; SIGKILLed")
            psutil.wait_procs(alive, timeout=10)
        self.start_postgres()
        self.wait_accepting(down)

    def start_postgres(self):
        """As the project does: the first process to find the embedded server stopped starts it
        (core/embedded_db.py, here through `manage.py embedded_db status`)."""
        for attempt in range(1, 6):
            started = run([sys.executable, "manage.py", "embedded_db", "status"], env=self.env)
            if started.returncode == 0:
                log(f"chaos: embedded PostgreSQL started again: {started.stdout.strip()}")
                return
            log(f"chaos: start attempt {attempt} failed: {started.stderr.strip()[-300:]}")
            time.sleep(2)
        raise RuntimeError("The embedded PostgreSQL did not start again; see .data/pg/log")

    def wait_accepting(self, down: float | None = None, timeout: float = 120):
        down = time.monotonic() if down is None else down
        while time.monotonic() - down < timeout:
            if accepting(self.admin_url):
                seconds = time.monotonic() - down
                self.outage += seconds
                log(f"chaos: PostgreSQL accepts connections again ({seconds:.1f} s)")
                return
            time.sleep(0.1)
        raise RuntimeError(f"PostgreSQL did not accept connections within {timeout} s")

    def ensure_postgres(self):
        """The embedded server running again, whatever happened (the developer's tests use it)."""
        if self.embedded and not accepting(self.admin_url):
            log("chaos: PostgreSQL not accepting; starting the embedded server")
            self.start_postgres()
            self.wait_accepting()


# --- Checks: what the database holds against what the clients were told


def check(tx_url, outcomes, account_ids, mismatches, ledger):
    """([(violation, evidence rows)], transfers stored, [(currency, sum of balances)])."""
    violations = []

    def violated(what: str, rows: list) -> None:
        if rows:
            violations.append((what, rows))

    acked = {}  # reference -> (transfer id, item)
    acked_ids = Counter()
    references = {}  # reference -> its operation's outcome, for every logical transfer
    for outcome in outcomes:
        for index, item in enumerate(outcome.operation.items):
            references[item["reference"]] = outcome
            if outcome.status == 201:
                ids = outcome.transfer_ids
                transfer_id = ids[index] if index < len(ids) else None
                acked[item["reference"]] = (transfer_id, item)
                acked_ids[transfer_id] += 1

    with psycopg.connect(tx_url) as conn:
        rows = conn.execute(
            "SELECT id, reference, source_account_id, destination_account_id, amount, currency"
            " FROM transfers_transfer"
        ).fetchall()
        balances = dict(
            conn.execute(
                "SELECT id, posted FROM accounts_account WHERE id = ANY(%s)", [account_ids]
            ).fetchall()
        )
        totals = conn.execute(
            "SELECT currency, SUM(posted)::bigint FROM accounts_account GROUP BY currency"
        ).fetchall()
        records = dict(
            conn.execute("SELECT key::text, status_code FROM api_idempotencyrecord").fetchall()
        )

    by_id = {row[0]: row for row in rows}
    by_reference = {}
    for row in rows:
        by_reference.setdefault(row[1], []).append(row)

    if ledger.returncode != 0:
        output = (ledger.stdout + ledger.stderr).splitlines()
        violated(f"verify_ledger on {DATABASE} exited {ledger.returncode}", output or ["-"])
    violated("201 answers that do not match their request", mismatches)
    violated(
        "transfer ids acknowledged more than once",
        [(tid, n) for tid, n in acked_ids.items() if n > 1],
    )
    violated(
        "acknowledged transfers missing from the database (lost)",
        [(ref, tid) for ref, (tid, _) in acked.items() if tid not in by_id],
    )
    violated(
        "references held by more than one transfer (doubled)",
        [(ref, [r[0] for r in held]) for ref, held in by_reference.items() if len(held) > 1],
    )
    wrong = []
    for ref, (tid, item) in acked.items():
        for row in by_reference.get(ref, []):
            expected = (
                tid,
                ref,
                item["source"]["accountId"],
                item["destination"]["accountId"],
                item["amount"],
                CURRENCY,
            )
            if tuple(row) != expected:
                wrong.append((ref, "answered", expected, "stored", row))
    violated("acknowledged references stored as another transfer", wrong)
    violated(
        "transfers posted that no client was told of (posted, never acknowledged)",
        [
            (row[0], row[1], "client got " + describe(references.get(row[1])))
            for row in rows
            if row[1] not in acked
        ],
    )
    violated(
        f"transfers in the database ({len(rows)}) != acknowledged logical transfers ({len(acked)})",
        [] if len(rows) == len(acked) else [(len(rows), len(acked))],
    )
    expected_balance = dict.fromkeys(account_ids, LOAD_AMOUNT)
    for _, item in acked.values():
        expected_balance[item["source"]["accountId"]] -= item["amount"]
        expected_balance[item["destination"]["accountId"]] += item["amount"]
    violated(
        "account balances != load + acknowledged credits - debits",
        [
            (account, "expected", value, "stored", balances.get(account))
            for account, value in expected_balance.items()
            if balances.get(account) != value
        ],
    )
    violated(
        "balances (customer + internal accounts) not summing to zero per currency",
        [(currency, total) for currency, total in totals if total != 0],
    )
    violated(
        "acknowledged requests without a stored 201 idempotency record",
        [
            (o.operation.key, records.get(o.operation.key))
            for o in outcomes
            if o.status == 201 and records.get(o.operation.key) != 201
        ],
    )
    violated(
        "requests never decided (no 201 or 4xx within the drain)",
        [
            (o.operation.key, o.operation.items[0]["reference"], o.last_error)
            for o in outcomes
            if o.status is None
        ],
    )
    return violations, len(rows), totals


def describe(outcome: Outcome | None) -> str:
    if outcome is None:
        return "nothing: not a reference of this run"
    if outcome.status is None:
        return f"no decision (last: {outcome.last_error})"
    return f"{outcome.status} {outcome.code}"


# --- The run


def main():
    args = parse_args()
    own = urlsplit(os.environ.get("DATABASE_URL", "")).path.strip("/")
    if own == DATABASE:
        sys.exit(f"DATABASE_URL names {own}, which this benchmark drops; use another database.")
    developer_env = dict(os.environ)
    embedded = not os.environ.get("DATABASE_URL")
    admin_url = server_url()
    tx_url = with_database(admin_url, DATABASE)
    where = conninfo_to_dict(admin_url)
    origin = "the embedded" if embedded else "DATABASE_URL's"
    print(f"PostgreSQL: {origin} server, host {where.get('host')} port {where.get('port', 5432)}")
    print(f"Database: {DATABASE}, made anew")
    recreate_database(admin_url, DATABASE)
    os.environ.update(service_environment(tx_url, rate_limit=RATE_LIMIT))
    run([sys.executable, "manage.py", "migrate", "--noinput"], check=True)
    import django

    django.setup()
    api_key = create_tenant(INSTITUTION, CURRENCY)
    from django.db import connections

    connections.close_all()  # no connection of this process across the crashes

    port = free_port()
    print(
        f"Service: gunicorn config.wsgi, production settings, {args.workers} workers x "
        f"{args.threads} threads on 127.0.0.1:{port} (log: {LOG_FILE.relative_to(ROOT)})"
    )
    gunicorn = start_gunicorn(port, args.workers, args.threads, LOG_FILE)
    chaos = None
    try:
        wait_until_up(port, gunicorn, LOG_FILE)
        _, account_ids = open_accounts(port, api_key, args.accounts, CURRENCY, LOAD_AMOUNT)
        print(f"Data: 1 institution, 1 API key, {len(account_ids)} accounts of {LOAD_AMOUNT}")
        kinds = "gunicorn workers"
        if embedded:
            kinds += ", PostgreSQL backends and postmaster (embedded server, .data/pg)"
        else:
            kinds += " only (DATABASE_URL's server is not this checkout's: PostgreSQL spared)"
        mix = f"POST {TRANSFERS}" + (
            f" and {args.batch_share:.0%} atomic batches of {args.batch}" if args.batch else ""
        )
        print(
            f"Load: {args.concurrency} clients, {args.seconds} s, {mix}; retries with the same "
            f"Idempotency-Key and body until 201 or a 4xx (drain {args.drain:.0f} s)"
        )
        print(f"Chaos: every {args.interval:g} s, SIGKILL of {kinds}\n")

        run_id = uuid.uuid4().hex[:8]
        deadline = time.monotonic() + args.seconds
        give_up = deadline + args.drain
        results = [ClientResult() for _ in range(args.concurrency)]
        clients = [
            threading.Thread(
                target=client,
                args=(n, port, api_key, account_ids, deadline, give_up, args, run_id, results[n]),
                daemon=True,
            )
            for n in range(args.concurrency)
        ]
        chaos = Chaos(
            gunicorn.pid,
            admin_url,
            embedded,
            args.interval,
            args.crash_shared,
            args.seed,
            developer_env,
        )
        global STARTED
        STARTED = time.monotonic()
        log("run: clients start")
        for thread in clients:
            thread.start()
        chaos.start()
        time.sleep(max(0.0, deadline - time.monotonic()))
        chaos.stop.set()
        chaos.join()
        log("run: chaos stopped; clients finish their last requests")
        if gunicorn.poll() is not None:
            log(f"run: the gunicorn master exited ({gunicorn.returncode}); see {LOG_FILE}")
        for thread in clients:
            thread.join()
        log("run: clients done")
    finally:
        if chaos is not None:
            chaos.stop.set()
            chaos.join()
            chaos.ensure_postgres()
        stop_gunicorn(gunicorn)

    ledger = run([sys.executable, "manage.py", "verify_ledger"])
    outcomes = [outcome for result in results for outcome in result.outcomes]
    mismatches = [line for result in results for line in result.mismatches]
    violations, stored, totals = check(tx_url, outcomes, account_ids, mismatches, ledger)

    attempts = sum(result.attempts for result in results)
    reasons = sum((result.retry_reasons for result in results), Counter())
    decided = Counter(
        "201" if o.status == 201 else f"{o.status} {o.code}" if o.status else "undecided"
        for o in outcomes
    )
    batches = sum(1 for o in outcomes if o.operation.path == BATCHES)
    acked = [o for o in outcomes if o.status == 201]
    acked_batches = sum(1 for o in acked if o.operation.path == BATCHES)
    acked_transfers = sum(len(o.operation.items) for o in acked)
    retried = [o for o in outcomes if o.retries]
    print("\n== Summary ==")
    print(f"run:               {args.seconds} s, {args.concurrency} clients, {origin} server")
    print(f"chaos actions:     {sum(chaos.counts.values())}")
    for kind, count in sorted(chaos.counts.items()):
        print(f"  {count:4d}  {kind}")
    print(f"PostgreSQL down:   {chaos.outage:.1f} s in all, from kill to accepting again")
    print(
        f"requests:          {len(outcomes)} logical ({len(outcomes) - batches} transfers, "
        f"{batches} batches), {attempts} HTTP attempts"
    )
    print(f"decided:           {dict(decided)}")
    print(
        f"acknowledged:      {len(acked)} requests (201) = {acked_transfers} transfers"
        + (f" ({acked_batches} batches of {args.batch})" if args.batch else "")
        + f"; {sum(o.replayed for o in acked)} of the 201s were replays (Idempotent-Replayed)"
    )
    print(
        f"retries:           {sum(reasons.values())} by clients, on {len(retried)} requests "
        f"(at most {max((o.retries for o in outcomes), default=0)} on one)"
    )
    for reason, count in reasons.most_common():
        print(f"  {count:6d}  {reason}")
    print(f"transfers stored:  {stored} in {DATABASE} (acknowledged: {acked_transfers})")
    print(f"balances per currency: {dict(totals)}")
    print(f"verify_ledger:     exit {ledger.returncode}: {(ledger.stdout + ledger.stderr).strip()}")
    if chaos.error is not None:
        violations.append(("the chaos thread failed", [repr(chaos.error)]))
    if violations:
        print(f"\nVIOLATIONS: {len(violations)}")
        for what, rows in violations:
            print(f"- {what} ({len(rows)}):")
            for row in rows[:SHOWN]:
                print(f"    {row}")
            if len(rows) > SHOWN:
                print(f"    ... and {len(rows) - SHOWN} more")
    else:
        print(
            "\nNo violation: every acknowledged transfer stored once, as answered; nothing stored "
            "unacknowledged; balances as acknowledged; ledger OK."
        )

    if args.drop:
        drop_database(admin_url, DATABASE)
        print(f"\nDropped {DATABASE}.")
    else:
        print(f"\nLeft {DATABASE} in place (the next run makes it anew); --drop removes it.")
    sys.exit(1 if violations else 0)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("Interrupted (gunicorn, if it was started, is stopped; PostgreSQL running).")
