"""The restore drill: a base backup and the archived WAL of the cluster, restored to an instant.

    scripts/cluster start
    .venv/bin/python bench/restore.py [--seconds 20] [--at 10] [--keep]

Against the cluster of `scripts/cluster` (bench/cluster.py), whose primary archives its WAL into
`.data/cluster/wal-archive` (archive_command): recreates a database of its own (tx_restore),
starts the service under gunicorn with production settings, takes a base backup of the leader
(`pg_basebackup -Ft -z -X stream`, checked with `pg_verifybackup`), then posts transfers for
--seconds. At --at seconds it records an instant: under a short `LOCK TABLE transfers_transfer IN
EXCLUSIVE MODE` (transfers wait; every transfer committed before it is in, none can commit
until it ends) it reads `clock_timestamp()`, the count of transfers and every account's balance.
After the load, the WAL is switched and archived; the backup is restored into a new data
directory with `recovery_target_time` = the instant (as docs/deployment.md, "Restore to an
instant", does by hand), started on port 55439 until it promotes itself, and checked:
`manage.py verify_ledger` on it, and its count of transfers and balances equal to those recorded
at the instant. Exits 1 when a check fails. The restored server is stopped at the end and its
directory removed (--keep leaves both the directory and a note of how to start it).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

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

from bench.transfers import (  # noqa: E402
    CURRENCY,
    INSTITUTION,
    LOAD_AMOUNT,
    RATE_LIMIT,
    drive_transfers,
)

DATABASE = "tx_restore"
LOG_FILE = ROOT / ".data" / "bench" / "restore-gunicorn.log"
BACKUPS = cluster.CLUSTER / "backups"
RESTORED = cluster.CLUSTER / "restored"
RESTORE_PORT = 55439


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=20, help="length of the load (20)")
    parser.add_argument("--at", type=float, default=10, help="second of the instant (10)")
    parser.add_argument("--concurrency", type=int, default=4, help="clients (default 4)")
    parser.add_argument("--accounts", type=int, default=20, help="accounts (default 20)")
    parser.add_argument("--keep", action="store_true", help="keep the restored directory")
    args = parser.parse_args()
    if not 0 < args.at < args.seconds:
        parser.error("need 0 < --at < --seconds")
    return args


def as_cluster_user(command: list[str], timeout: float = 300) -> subprocess.CompletedProcess:
    """One of the wheel's binaries, as the user the cluster runs as (PostgreSQL refuses root)."""
    return subprocess.run(  # noqa: S603 (the wheel's binaries, arguments built here)
        [str(cluster.bin_dir() / command[0]), *command[1:]],
        capture_output=True,
        text=True,
        timeout=timeout,
        user=cluster.run_as(),
        check=False,
    )


def must(result: subprocess.CompletedProcess, what: str) -> str:
    if result.returncode != 0:
        sys.exit(f"{what} failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return result.stdout


def record_instant(url: str) -> tuple[str, int, dict]:
    """(the instant, transfers then, balances then), read while no transfer can commit."""
    with psycopg.connect(url) as conn, conn.transaction():
        conn.execute("LOCK TABLE transfers_transfer IN EXCLUSIVE MODE")
        instant = conn.execute("SELECT clock_timestamp()::text").fetchone()[0]
        count = conn.execute("SELECT count(*) FROM transfers_transfer").fetchone()[0]
        balances = dict(conn.execute("SELECT id, posted FROM accounts_account").fetchall())
    return instant, count, balances


def archive_current_wal(url: str, timeout: float = 60) -> str:
    """Close the current WAL segment and wait until the archiver has copied it."""
    with psycopg.connect(url, autocommit=True) as conn:
        segment = conn.execute("SELECT pg_walfile_name(pg_switch_wal())").fetchone()[0]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            archived = conn.execute("SELECT last_archived_wal FROM pg_stat_archiver").fetchone()[0]
            if archived and archived >= segment:
                return segment
            time.sleep(0.2)
    sys.exit(f"WAL segment {segment} not archived within {timeout:.0f} s")


def restore(backup: Path, target: Path, instant: str) -> None:
    """The base backup into `target` (mode 700), its WAL beside it, the recovery settings."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(mode=0o700, parents=True)
    with tarfile.open(backup / "base.tar.gz") as archive:
        archive.extractall(target, filter="tar")
    with tarfile.open(backup / "pg_wal.tar.gz") as archive:
        archive.extractall(target / "pg_wal", filter="tar")
    with open(target / "postgresql.auto.conf", "a") as conf:
        conf.write(
            f"restore_command = 'cp {cluster.ARCHIVE}/%f %p'\n"
            f"recovery_target_time = '{instant}'\n"
            "recovery_target_action = 'promote'\n"
            # Not the cluster's: no archiving into its archive, no synchronous standby to wait
            # for, its own pg_hba.conf (Patroni's postgresql.conf names the node's files).
            "archive_mode = off\n"
            "synchronous_standby_names = ''\n"
            f"hba_file = '{target}/pg_hba.conf'\n"
            f"ident_file = '{target}/pg_ident.conf'\n"
            f"port = {RESTORE_PORT}\n"
        )
    (target / "recovery.signal").touch()
    owner = cluster.run_as()
    if owner:
        shutil.chown(target, owner, owner)
        for path in target.rglob("*"):
            shutil.chown(path, owner, owner)


def main():
    args = parse_args()
    cluster.require_programs()
    if not cluster.all_streaming():
        sys.exit("The cluster is not running with a leader and two replicas: scripts/cluster start")
    admin_url = cluster.multi_host_url("postgres")
    tx_url = cluster.multi_host_url(DATABASE)
    print(f"Database: {DATABASE} on the leader, made anew; DATABASE_URL={tx_url}")
    recreate_database(admin_url, DATABASE)
    os.environ.update(service_environment(tx_url, rate_limit=RATE_LIMIT))
    run([sys.executable, "manage.py", "migrate", "--noinput"], check=True)
    import django

    django.setup()
    api_key = create_tenant(INSTITUTION, CURRENCY)
    from django.db import connections

    connections.close_all()
    port = free_port()
    gunicorn = start_gunicorn(port, 2, 2, LOG_FILE)
    try:
        wait_until_up(port, gunicorn, LOG_FILE)
        _, account_ids = open_accounts(port, api_key, args.accounts, CURRENCY, LOAD_AMOUNT)
        print(f"Data: 1 institution, {len(account_ids)} accounts of {LOAD_AMOUNT}")

        leader = cluster.current_leader()
        stamp = time.strftime("%Y%m%dT%H%M%S")
        backup = BACKUPS / f"base-{stamp}"
        BACKUPS.mkdir(exist_ok=True)
        if cluster.run_as():
            shutil.chown(BACKUPS, cluster.run_as(), cluster.run_as())
        started = time.monotonic()
        must(
            as_cluster_user(
                ["pg_basebackup", "-h", "127.0.0.1", "-p", str(leader[1]), "-U", "postgres"]
                + ["-D", str(backup), "-Ft", "-z", "-X", "stream", "-c", "fast"]
            ),
            "pg_basebackup",
        )
        print(
            f"Base backup: of {leader[0]} into {backup.relative_to(ROOT)} "
            f"({time.monotonic() - started:.1f} s)"
        )
        print("  " + must(as_cluster_user(["pg_verifybackup", "-n", str(backup)]), "verify"))

        print(f"Load: {args.concurrency} clients, {args.seconds} s of POST /TX/v2/transfers")
        load = threading.Thread(
            target=lambda: loaded.append(
                drive_transfers(port, api_key, account_ids, args.concurrency, args.seconds)
            )
        )
        loaded: list = []
        load.start()
        time.sleep(args.at)
        instant, count_then, balances_then = record_instant(tx_url)
        print(f"Instant: {instant}: {count_then} transfers (load at {args.at:g} s)")
        load.join()
        results, elapsed = loaded[0]
        posted = sum(1 for _, outcome in results if outcome == 201)
        print(f"Load done: {posted} transfers posted in {elapsed:.1f} s")
    finally:
        stop_gunicorn(gunicorn)
    with psycopg.connect(tx_url) as conn:
        count_end = conn.execute("SELECT count(*) FROM transfers_transfer").fetchone()[0]
    segment = archive_current_wal(admin_url)
    print(f"WAL: switched and archived up to {segment}; {count_end} transfers at the end")

    target = RESTORED
    started = time.monotonic()
    restore(backup, target, instant)
    log = cluster.LOGS / "restored.log"
    log.touch()
    if cluster.run_as():
        shutil.chown(log, cluster.run_as(), cluster.run_as())
    must(
        as_cluster_user(["pg_ctl", "-D", str(target), "-l", str(log), "-w", "-t", "300", "start"]),
        "pg_ctl start",
    )
    restored_url = cluster.node_url(RESTORE_PORT, DATABASE)
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                with psycopg.connect(restored_url) as conn:
                    if not conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]:
                        break
            except psycopg.OperationalError:
                pass
            if time.monotonic() > deadline:
                sys.exit(f"The restored server did not promote itself; see {log}")
            time.sleep(0.2)
        print(
            f"Restored: into {target.relative_to(ROOT)}, port {RESTORE_PORT}, replayed to the "
            f"instant and promoted ({time.monotonic() - started:.1f} s from the backup's files)"
        )
        stopping = [line for line in log.read_text().splitlines() if "recovery stopping" in line]
        print("  " + (stopping[-1] if stopping else "(no 'recovery stopping' line in the log)"))
        with psycopg.connect(restored_url) as conn:
            count_restored = conn.execute("SELECT count(*) FROM transfers_transfer").fetchone()[0]
            balances_restored = dict(
                conn.execute("SELECT id, posted FROM accounts_account").fetchall()
            )
        ledger = run(
            [sys.executable, "manage.py", "verify_ledger"],
            env={**os.environ, "DATABASE_URL": restored_url},
        )
    finally:
        if not args.keep:
            as_cluster_user(["pg_ctl", "-D", str(target), "-m", "fast", "-w", "stop"])
    differing = [
        (account, balances_then.get(account), balances_restored.get(account))
        for account in set(balances_then) | set(balances_restored)
        if balances_then.get(account) != balances_restored.get(account)
    ]
    print("\n== Summary ==")
    print(f"instant:            {instant}")
    print(
        f"transfers:          {count_then} at the instant, {count_restored} restored "
        f"({count_end} at the end of the load)"
    )
    print(
        f"balances:           {len(balances_then)} accounts at the instant, "
        f"{len(differing)} differ in the restored database"
    )
    print(
        f"verify_ledger:      exit {ledger.returncode}: {(ledger.stdout + ledger.stderr).strip()}"
    )
    failed = count_restored != count_then or differing or ledger.returncode
    print("RESTORE DRILL FAILED" if failed else "Restore drill passed.")
    if args.keep:
        print(
            f"Kept {target.relative_to(ROOT)} running on port {RESTORE_PORT}; stop it with "
            f"pg_ctl -D {target} stop (as {cluster.run_as() or 'you'})"
        )
    else:
        shutil.rmtree(target, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
