"""The failover drill: the Patroni leader's postmaster SIGKILLed under load, writes retried.

    scripts/cluster start
    .venv/bin/python bench/failover.py [--lag 2] [--seconds 25] [--kill-at 10] [--concurrency 8]

Against the cluster of `scripts/cluster` (bench/cluster.py): recreates a database of its own
(tx_failover) on the leader, starts the service under gunicorn with production settings and the
libpq multi-host DATABASE_URL (target_session_attrs=read-write), and drives POST /TX/v2/transfers
with clients that retry every failed request (503, a broken connection, a timeout) with its
Idempotency-Key after 0.05-0.15 s. At --kill-at seconds the leader's postmaster is SIGKILLed.

With --lag L the cluster is first switched to asynchronous replication (`patronictl edit-config`:
synchronous_mode off, maximum_lag_on_failover 1 GB so that Patroni promotes a lagging replica),
and L seconds before the kill the leader's WAL senders are stopped (SIGSTOP: as a stalled network
link would, the replicas receive nothing more while the leader goes on committing); at the kill
they are SIGKILLed with the postmaster, as on a machine that died. (Stopping the replicas' WAL
receivers instead loses nothing: what the senders wrote waits in the loopback sockets' buffers,
and a receiver let go reads it all.) The cluster is put back to synchronous replication at the
end, whatever happened.

Prints the transfers acknowledged, lost (a 201 whose transfer is absent on the new leader),
doubled, the downtime and its parts (Patroni's promotion: the kill -> a new leader elected -> it
commits a write; TX's lag: that -> the first 201), the old leader rejoining, and runs
verify_ledger. Exits 1 when something was doubled or the ledger check failed, and, without
--lag, when anything acknowledged was lost. bench/README.md, "failover.py".
"""

import argparse
import http.client
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

import psutil
import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import cluster  # noqa: E402  (bench/cluster.py)
from common import (  # noqa: E402  (bench/common.py)
    create_tenant,
    free_port,
    open_accounts,
    recreate_database,
    run,
    service_environment,
    start_gunicorn,
    stop_gunicorn,
    wait_until_up,
)

from bench.chaos import (  # noqa: E402  (as `bench.chaos`: the same clients' requests)
    RETRYABLE_CODES,
    Outcome,
    acknowledged_ids,
    new_operation,
    send,
)
from bench.chaos import check as chaos_check  # noqa: E402
from bench.transfers import CURRENCY, INSTITUTION, LOAD_AMOUNT, RATE_LIMIT  # noqa: E402

DATABASE = "tx_failover"
LOG_FILE = ROOT / ".data" / "bench" / "failover-gunicorn.log"
RETRY_DELAY = (0.05, 0.15)  # seconds between two attempts of one request: short, to see TX's lag
SYNCHRONOUS = {
    "synchronous_mode": "true",
    "synchronous_mode_strict": "true",
    "maximum_lag_on_failover": "1048576",
}
ASYNCHRONOUS = {
    "synchronous_mode": "false",
    "synchronous_mode_strict": "false",
    "maximum_lag_on_failover": "1073741824",
}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=8, help="clients (default 8)")
    parser.add_argument("--seconds", type=int, default=25, help="length of the load (25)")
    parser.add_argument("--kill-at", type=float, default=10, help="second of the kill (10)")
    parser.add_argument(
        "--lag",
        type=float,
        default=0,
        help="L > 0: asynchronous replication, the replicas' WAL receivers stopped L seconds "
        "before the kill (the leader's WAL senders stopped)",
    )
    parser.add_argument(
        "--pgbouncer",
        action="store_true",
        help="TX connects through the cluster's PgBouncer (DATABASE_POOLER=transaction), which "
        "Patroni's callback points at the new leader, instead of the multi-host URL",
    )
    parser.add_argument("--accounts", type=int, default=20, help="accounts (default 20)")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers (default 4)")
    parser.add_argument("--threads", type=int, default=2, help="threads per worker (default 2)")
    parser.add_argument("--timeout", type=float, default=15, help="client's answer timeout (15)")
    parser.add_argument("--drain", type=float, default=60, help="seconds to decide the rest (60)")
    args = parser.parse_args()
    if not 0 < args.kill_at < args.seconds or args.lag >= args.kill_at:
        parser.error("need 0 <= --lag < --kill-at < --seconds")
    return args


STARTED = time.monotonic()


def log(message: str) -> None:
    print(
        f"[{time.strftime('%H:%M:%S')} +{time.monotonic() - STARTED:6.2f}s] {message}", flush=True
    )


# --- Clients: each logical transfer sent until decided, the time of its 201 noted


@dataclass
class Client:
    outcomes: list[Outcome] = field(default_factory=list)
    acked_at: dict[str, float] = field(default_factory=dict)  # key -> monotonic time of the 201
    attempts: int = 0
    retry_reasons: Counter = field(default_factory=Counter)
    mismatches: list[str] = field(default_factory=list)


def drive(number, port, api_key, account_ids, deadline, give_up, args, run_id, result):
    rng = random.Random(number)
    conn_box = [None]
    sequence = 0
    while time.monotonic() < deadline:
        sequence += 1
        operation = new_operation(rng, account_ids, f"failover-{run_id}-{number}-{sequence}", 0)
        outcome = Outcome(operation)
        result.outcomes.append(outcome)
        while True:
            result.attempts += 1
            try:
                status, data, replayed = send(conn_box, port, api_key, operation, args.timeout)
            except (OSError, http.client.HTTPException) as error:
                reason = type(error).__name__
            else:
                code = data.get("code") if isinstance(data, dict) else None
                if status == 201:
                    result.acked_at[operation.key] = time.monotonic()
                    outcome.status, outcome.replayed = status, replayed
                    outcome.transfer_ids = acknowledged_ids(operation, data, result.mismatches)
                    break
                if 400 <= status < 500 and code not in RETRYABLE_CODES:
                    outcome.status, outcome.code = status, code
                    break
                reason = f"{status} {code}"
            outcome.last_error = reason
            if time.monotonic() >= give_up:
                break
            outcome.retries += 1
            result.retry_reasons[reason] += 1
            time.sleep(rng.uniform(*RETRY_DELAY))
    if conn_box[0] is not None:
        conn_box[0].close()


# --- The cluster's side


def configure(values: dict) -> None:
    args = [arg for name, value in values.items() for arg in ("-s", f"{name}={value}")]
    cluster.patronictl("edit-config", "--force", *args)


def leader_synchronous_names() -> str | None:
    try:
        with psycopg.connect(cluster.multi_host_url("postgres"), connect_timeout=2) as conn:
            return conn.execute("SHOW synchronous_standby_names").fetchone()[0]
    except psycopg.Error:
        return None


def wait_until(test, timeout: float, what: str) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if test():
            return time.monotonic() - started
        time.sleep(0.1)
    raise RuntimeError(f"{what}: not within {timeout:.0f} s")


def wal_senders() -> list[psutil.Process]:
    """The leader's walsender processes (children of its postmaster): one per replica."""
    leader = cluster.current_leader()
    pid = cluster.postmaster_pid(leader[0]) if leader else None
    if not cluster.alive(pid):
        return []
    return [p for p in psutil.Process(pid).children() if "walsender" in " ".join(p.cmdline())]


def commits_a_write(port: int) -> bool:
    """The node at `port` is a primary that commits a transaction that wrote WAL: a
    transactional logical message, no table needed; with synchronous replication its commit
    waits for the standby. (An xid alone, `pg_current_xact_id()`, writes no WAL before the
    commit record, and such a commit does not wait for any standby.)"""
    try:
        with psycopg.connect(cluster.node_url(port), connect_timeout=1) as conn:
            if conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]:
                return False
            conn.execute("SELECT pg_logical_emit_message(true, 'tx-failover-drill', '')")
        return True
    except psycopg.Error:
        return False


@dataclass
class Timeline:
    killed_at: float = 0.0
    old_leader: str = ""
    elected_at: float | None = None
    new_leader: str = ""
    writable_at: float | None = None
    rejoined_at: float | None = None


def kill_leader(timeline: Timeline, stopped: list[psutil.Process]) -> None:
    leader = cluster.current_leader()
    if leader is None:
        raise RuntimeError("no leader to kill")
    pid = cluster.postmaster_pid(leader[0])
    timeline.old_leader = leader[0]
    timeline.killed_at = time.monotonic()
    os.kill(pid, signal.SIGKILL)
    log(f"kill: SIGKILL postmaster {pid} of the leader {leader[0]} (127.0.0.1:{leader[1]})")
    for process in stopped:  # the leader's machine is gone: its processes with it
        process.send_signal(signal.SIGKILL)
    if stopped:
        log(f"lag: the leader's stopped WAL senders {[p.pid for p in stopped]} SIGKILLed")


def follow_promotion(timeline: Timeline, timeout: float = 90) -> None:
    """Patroni's side: a new leader elected (its REST API says so), then it commits a write."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and timeline.elected_at is None:
        leader = cluster.current_leader()
        if leader and leader[0] != timeline.old_leader:
            timeline.elected_at = time.monotonic()
            timeline.new_leader = leader[0]
            log(f"promotion: {leader[0]} is the leader (Patroni)")
        time.sleep(0.02)
    port = next(p for n, p, _ in cluster.NODES if n == timeline.new_leader)
    while time.monotonic() < deadline:
        if commits_a_write(port):
            timeline.writable_at = time.monotonic()
            log(f"promotion: {timeline.new_leader} commits writes")
            return
        time.sleep(0.02)


def old_leader_rejoined(name: str) -> bool:
    for member in (cluster.cluster_state() or {}).get("members", []):
        if member["name"] == name:
            return member.get("role") != "leader" and member.get("state") == "running"
    return False


# --- The run


def main():
    args = parse_args()
    cluster.require_programs()
    if not cluster.all_streaming():
        sys.exit("The cluster is not running with a leader and two replicas: scripts/cluster start")
    admin_url = cluster.multi_host_url("postgres")
    tx_url = cluster.multi_host_url(DATABASE)
    mode = (
        f"asynchronous, {args.lag:g} s of WAL withheld from the replicas"
        if args.lag
        else ("synchronous (synchronous_mode, strict)")
    )
    print(f"Cluster: {cluster.patronictl('list').stdout.strip()}")
    print(f"Replication: {mode}")
    print(f"Database: {DATABASE} on the leader, made anew; DATABASE_URL={tx_url}")
    recreate_database(admin_url, DATABASE)
    os.environ.update(service_environment(tx_url, rate_limit=RATE_LIMIT))
    run([sys.executable, "manage.py", "migrate", "--noinput"], check=True)
    import django

    django.setup()
    api_key = create_tenant(INSTITUTION, CURRENCY)
    from django.db import connections

    connections.close_all()
    if args.pgbouncer:  # the service only: setup and checks use the multi-host URL
        os.environ.update(
            DATABASE_URL=cluster.pgbouncer_url(DATABASE), DATABASE_POOLER="transaction"
        )
        print(f"TX through PgBouncer: DATABASE_URL={os.environ['DATABASE_URL']}")

    port = free_port()
    print(
        f"Service: gunicorn config.wsgi, production settings, {args.workers} workers x "
        f"{args.threads} threads on 127.0.0.1:{port} (log: {LOG_FILE.relative_to(ROOT)})"
    )
    gunicorn = start_gunicorn(port, args.workers, args.threads, LOG_FILE)
    timeline = Timeline()
    stopped: list[psutil.Process] = []
    try:
        wait_until_up(port, gunicorn, LOG_FILE)
        _, account_ids = open_accounts(port, api_key, args.accounts, CURRENCY, LOAD_AMOUNT)
        print(f"Data: 1 institution, {len(account_ids)} accounts of {LOAD_AMOUNT}")
        if args.lag:
            configure(ASYNCHRONOUS)
            waited = wait_until(lambda: leader_synchronous_names() == "", 30, "asynchronous")
            print(f"Patroni: asynchronous replication in force ({waited:.1f} s)")
        print(
            f"Load: {args.concurrency} clients, {args.seconds} s of POST /TX/v2/transfers, "
            f"retried with the same key; the leader's postmaster SIGKILLed at {args.kill_at:g} s\n"
        )
        run_id = uuid.uuid4().hex[:8]
        global STARTED
        STARTED = time.monotonic()
        deadline = STARTED + args.seconds
        give_up = deadline + args.drain
        results = [Client() for _ in range(args.concurrency)]
        threads = [
            threading.Thread(
                target=drive,
                args=(n, port, api_key, account_ids, deadline, give_up, args, run_id, results[n]),
                daemon=True,
            )
            for n in range(args.concurrency)
        ]
        log("run: clients start")
        for thread in threads:
            thread.start()
        if args.lag:
            time.sleep(max(0.0, STARTED + args.kill_at - args.lag - time.monotonic()))
            stopped = wal_senders()
            for process in stopped:
                process.send_signal(signal.SIGSTOP)
            log(f"lag: the leader's WAL senders {[p.pid for p in stopped]} stopped (SIGSTOP)")
        time.sleep(max(0.0, STARTED + args.kill_at - time.monotonic()))
        kill_leader(timeline, stopped)
        stopped = []
        follow_promotion(timeline)
        for thread in threads:
            thread.join()
        log("run: clients done")
        try:
            waited = wait_until(lambda: old_leader_rejoined(timeline.old_leader), 120, "rejoin")
            timeline.rejoined_at = time.monotonic()
            log(f"rejoin: {timeline.old_leader} runs as a replica ({waited:.1f} s after the load)")
        except RuntimeError as error:
            log(f"rejoin: {error}")
    finally:
        for process in stopped:  # an interruption between the stop and the kill
            process.send_signal(signal.SIGCONT)
        stop_gunicorn(gunicorn)
        os.environ["DATABASE_URL"] = tx_url
        os.environ.pop("DATABASE_POOLER", None)
        if args.lag:
            configure(SYNCHRONOUS)
            print("Patroni: synchronous replication restored (patronictl edit-config)")

    ledger = run([sys.executable, "manage.py", "verify_ledger"])
    outcomes = [o for r in results for o in r.outcomes]
    mismatches = [m for r in results for m in r.mismatches]
    acked_at = {k: t for r in results for k, t in r.acked_at.items()}
    violations, stored, _ = chaos_check(tx_url, outcomes, account_ids, mismatches, ledger)
    with psycopg.connect(tx_url) as conn:
        present = {row[0] for row in conn.execute("SELECT id FROM transfers_transfer").fetchall()}
        doubled = conn.execute(
            "SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) n FROM transfers_transfer"
            " GROUP BY reference HAVING count(*) > 1) d"
        ).fetchone()[0]
    acked = [o for o in outcomes if o.status == 201]
    lost = [o for o in acked if o.transfer_ids[0] not in present]
    acked_ids = Counter(o.transfer_ids[0] for o in acked)
    doubled += sum(n - 1 for n in acked_ids.values() if n > 1)
    unacknowledged = len(present - set(acked_ids))
    first_201 = min(
        (t for t in acked_at.values() if timeline.writable_at and t >= timeline.writable_at),
        default=None,
    )
    last_before = max((t for t in acked_at.values() if t <= timeline.killed_at), default=None)
    reasons = sum((r.retry_reasons for r in results), Counter())

    def seconds(later, earlier):
        return f"{later - earlier:.2f} s" if later is not None and earlier is not None else "n/a"

    print("\n== Summary ==")
    print(f"replication:       {mode}" + (", TX through PgBouncer" if args.pgbouncer else ""))
    print(
        f"run:               {args.seconds} s, {args.concurrency} clients, "
        f"kill at {args.kill_at:g} s"
    )
    print(f"requests:          {len(outcomes)}, {sum(r.attempts for r in results)} HTTP attempts")
    print(
        f"acknowledged:      {len(acked)} transfers (201), {sum(o.replayed for o in acked)} replays"
    )
    print(f"lost:              {len(lost)} (a 201 whose transfer is absent on the new leader)")
    print(f"doubled:           {doubled}")
    print(f"stored, never acknowledged: {unacknowledged}; stored in all: {stored}")
    print(f"undecided:         {sum(1 for o in outcomes if o.status is None)}")
    print(f"downtime:          {seconds(first_201, timeline.killed_at)} (kill -> first 201 after)")
    print(
        f"  promotion:       {seconds(timeline.writable_at, timeline.killed_at)} (kill -> "
        f"{timeline.new_leader or 'a new leader'} commits a write)"
    )
    print(
        f"    elected:       {seconds(timeline.elected_at, timeline.killed_at)} (kill -> Patroni "
        "names the new leader)"
    )
    print(
        f"    writable:      {seconds(timeline.writable_at, timeline.elected_at)} (named -> "
        "commits)"
    )
    print(
        f"  TX's lag:        {seconds(first_201, timeline.writable_at)} (new leader commits -> "
        "first 201)"
    )
    print(f"last 201 before:   {seconds(timeline.killed_at, last_before)} before the kill")
    print(
        f"old leader:        {timeline.old_leader} rejoined as a replica "
        f"{seconds(timeline.rejoined_at, timeline.killed_at)} after the kill"
    )
    print(f"retries:           {sum(reasons.values())}")
    for reason, count in reasons.most_common():
        print(f"  {count:6d}  {reason}")
    print(f"verify_ledger:     exit {ledger.returncode}: {(ledger.stdout + ledger.stderr).strip()}")
    if lost:
        spread = sorted(acked_at[o.operation.key] - timeline.killed_at for o in lost)
        print(f"lost 201s answered between {spread[0]:.2f} s and {spread[-1]:.2f} s of the kill")
    if violations:
        print(f"\nchaos.py's checks ({len(violations)} failed):")
        for what, rows in violations:
            print(f"- {what} ({len(rows)}): {rows[:3]}")
    failed = doubled or ledger.returncode or (lost and not args.lag)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("Interrupted (gunicorn stopped; run scripts/cluster status).")
