"""CPU per POST /TX/v2/transfers inside one process: Django's test client, production settings,
no HTTP server, no other client on the machine's cores (bench/README.md).

    .venv/bin/python bench/inprocess.py [--transfers 1000] [--rounds 4] [--batch N] [--profile]
                                        [--freeze] [--read] [--drop]

Recreates its database (tx_bench_inprocess), makes a tenant and 20 loaded accounts through the
API, warms up with 200 transfers, then either times `--rounds` rounds of `--transfers` transfers
by `time.process_time` (prints each round and the median, and the CPU the PostgreSQL server
spent, from /proc, when it is the embedded one), or with `--profile` runs them once under
cProfile and prints the costliest functions and the time per file. `--batch N` sends the
transfers as atomic `POST /TX/v2/transfer-batches` of N each; `--read` sends `GET
/TX/v2/accounts/{id}` of a random account instead, the cheapest authenticated request (issue 53:
what the read costs above the framework's floor, bench/transfers.py --floor). The timed rounds
also print how often the garbage collector ran and for how long; `--freeze` first does what a
gunicorn worker does once it has loaded the application (`config.wsgi.freeze_loaded`).
"""

import argparse
import cProfile
import gc
import json
import logging
import os
import pstats
import random
import statistics
import subprocess
import sys
import time
import uuid
import warnings
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "bench"))  # after the root: bench/transfers.py is not the app

from common import (  # noqa: E402  (bench/common.py)
    drop_database,
    recreate_database,
    server_url,
    service_environment,
    with_database,
)
from cpu import postmaster_pid, tree_cpu_seconds  # noqa: E402  (bench/cpu.py)

from core.embedded_db import PGDATA  # noqa: E402

DATABASE = "tx_bench_inprocess"
ACCOUNTS = 20


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transfers", type=int, default=1000, help="per round (default 1000)")
    parser.add_argument("--rounds", type=int, default=4, help="timed rounds (default 4)")
    parser.add_argument("--batch", type=int, default=0, help="atomic batches of N transfers")
    parser.add_argument("--profile", action="store_true", help="one round under cProfile")
    parser.add_argument(
        "--freeze",
        action="store_true",
        help="after the warm-up, config.wsgi.freeze_loaded(), as each gunicorn worker does",
    )
    parser.add_argument(
        "--read",
        action="store_true",
        help="GET /TX/v2/accounts/{id} of a random account instead of transfers (as many)",
    )
    parser.add_argument("--drop", action="store_true", help="drop the database at the end")
    args = parser.parse_args()
    if args.read and args.batch:
        parser.error("--read sends no transfer: not with --batch")
    return args


def main():
    args = parse_args()
    admin_url = server_url()
    # The server's CPU only when it is the embedded one of this checkout (bench/cpu.py).
    postgres = None if os.environ.get("DATABASE_URL") else postmaster_pid(PGDATA)
    recreate_database(admin_url, DATABASE)
    os.environ.update(service_environment(with_database(admin_url, DATABASE), rate_limit=10**7))
    subprocess.run(  # noqa: S603
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, check=True
    )
    import django

    django.setup()
    logging.disable(logging.INFO)  # the access lines: the HTTP benchmark counts them
    warnings.filterwarnings("ignore", message="No directory at")  # whitenoise: no collectstatic
    from django.db import connections
    from django.test import Client

    from institutions.services import api_key_create, institution_create

    institution, _ = institution_create(name="TX Bench Bank", currency="EUR")
    key = api_key_create(
        institution=institution,
        allow=["127.0.0.1/32"],
        role="full",
        name="bench",
        created_by="bench",
    ).secret
    client = Client(SERVER_NAME="127.0.0.1", REMOTE_ADDR="127.0.0.1")

    def call(path: str, body: dict | None = None) -> dict:
        headers = {"x-api-key": key}
        if body is None:
            response = client.get(path, headers=headers)
        else:
            headers["Idempotency-Key"] = str(uuid.uuid4())
            response = client.post(
                path, data=json.dumps(body), content_type="application/json", headers=headers
            )
        if response.status_code not in (200, 201):
            raise RuntimeError(f"{path}: {response.status_code} {response.content[:300]!r}")
        return response.json()

    customer = call(
        "/TX/v2/customers", {"firstName": "Bench", "lastName": "Customer", "countryId": "276"}
    )
    product = next(
        p
        for p in call("/TX/v2/products/accounts")["data"]
        if p["currency"] == "EUR" and p["kind"] == "prepaid" and not p["allowsOverdraft"]
    )
    accounts = []
    for _ in range(ACCOUNTS):
        body = {"customerId": customer["customerId"], "productRid": product["rid"]}
        account = call("/TX/v2/accounts", body)["accountId"]
        credit = {"direction": "credit", "amount": 10**12, "currency": "EUR"}
        call(f"/TX/v2/accounts/{account}/adjustments", credit)
        accounts.append(account)

    rng = random.Random(0)

    def item():
        source, destination = rng.sample(accounts, 2)
        return {
            "source": {"accountId": source},
            "destination": {"accountId": destination},
            "amount": rng.randint(1, 100),
            "currency": "EUR",
        }

    def transfers(count: int) -> None:
        if not args.batch:
            for _ in range(count):
                call("/TX/v2/transfers", item())
            return
        for _ in range(max(1, count // args.batch)):
            body = {"mode": "atomic", "transfers": [item() for _ in range(args.batch)]}
            call("/TX/v2/transfer-batches", body)

    def reads(count: int) -> None:
        for _ in range(count):
            call(f"/TX/v2/accounts/{rng.choice(accounts)}")

    transfers(200)
    if args.read:
        reads(200)  # the key's cache and the read's code warm, as a worker's after its first
        transfers = reads  # noqa: F811 (what the rounds time: the reads)
    unit = "read" if args.read else "transfer"
    if args.freeze:
        from config.wsgi import freeze_loaded

        freeze_loaded()
    collections = CollectorTimes()
    gc.callbacks.append(collections.callback)
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        transfers(args.transfers)
        profiler.disable()
        stats = pstats.Stats(profiler)
        stats.sort_stats("cumulative").print_stats(40)
        print_by_file(stats, args.transfers, unit)
    else:
        rounds, database = [], []
        for _ in range(args.rounds):
            started, server_started = time.process_time(), server_cpu(postgres)
            transfers(args.transfers)
            rounds.append(1000 * (time.process_time() - started) / args.transfers)
            if postgres is not None:
                database.append(1000 * (server_cpu(postgres) - server_started) / args.transfers)
        for name, values in (("in this process", rounds), ("in PostgreSQL", database)):
            if values:
                each = " ".join(f"{value:.2f}" for value in values)
                median = statistics.median(values)
                print(f"CPU per {unit}, {name}: {each} ms; median {median:.2f} ms")
        collections.report()
    connections.close_all()
    if args.drop:
        drop_database(admin_url, DATABASE)


class CollectorTimes:
    """How often the cyclic garbage collector ran, per generation, and for how long (wall time,
    the process does nothing else meanwhile): a full collection walks every object alive."""

    def __init__(self):
        self.started = 0.0
        self.times: dict[int, list[float]] = {0: [], 1: [], 2: []}

    def callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self.started = time.perf_counter()
        else:
            self.times[info["generation"]].append(time.perf_counter() - self.started)

    def report(self) -> None:
        print("Garbage collections (all rounds):")
        for generation, times in self.times.items():
            longest = 1000 * max(times, default=0.0)
            print(
                f"  generation {generation}: {len(times)}, {1000 * sum(times):.1f} ms in all, "
                f"longest {longest:.1f} ms"
            )


def server_cpu(postmaster: int | None) -> float:
    return tree_cpu_seconds(postmaster) if postmaster else 0.0


def print_by_file(stats: pstats.Stats, transfers: int, unit: str = "transfer") -> None:
    """Own time (wall: the waits on PostgreSQL are in psycopg's) per source file or package."""
    by_file: Counter = Counter()
    for (filename, _, _), (_, _, own, _, _) in stats.stats.items():
        name = filename.split("site-packages/")[-1].removeprefix(str(ROOT) + "/")
        if "site-packages/" in filename:
            name = "/".join(name.split("/")[:2])
        by_file[name] += own
    total = sum(by_file.values())
    print(f"\nOwn time per file (ms per {unit}, share):")
    for name, own in by_file.most_common(25):
        print(f"  {1000 * own / transfers:7.3f} ms  {100 * own / total:5.1f}%  {name}")


if __name__ == "__main__":
    main()
