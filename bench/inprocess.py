"""CPU per POST /TX/v2/transfers inside one process: Django's test client, production settings,
no HTTP server, no other client on the machine's cores (bench/README.md).

    .venv/bin/python bench/inprocess.py [--transfers 1000] [--rounds 4] [--profile] [--drop]

Recreates its database (tx_bench_inprocess), makes a tenant and 20 loaded accounts through the
API, warms up with 200 transfers, then either times `--rounds` rounds of `--transfers` transfers
by `time.process_time` (prints each round and the median), or with `--profile` runs them once
under cProfile and prints the costliest functions and the time per file.
"""

import argparse
import cProfile
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

DATABASE = "tx_bench_inprocess"
ACCOUNTS = 20


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transfers", type=int, default=1000, help="per round (default 1000)")
    parser.add_argument("--rounds", type=int, default=4, help="timed rounds (default 4)")
    parser.add_argument("--profile", action="store_true", help="one round under cProfile")
    parser.add_argument("--drop", action="store_true", help="drop the database at the end")
    return parser.parse_args()


def main():
    args = parse_args()
    admin_url = server_url()
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

    def transfer():
        source, destination = rng.sample(accounts, 2)
        amount = rng.randint(1, 100)
        call(
            "/TX/v2/transfers",
            {
                "source": {"accountId": source},
                "destination": {"accountId": destination},
                "amount": amount,
                "currency": "EUR",
            },
        )

    for _ in range(200):
        transfer()
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(args.transfers):
            transfer()
        profiler.disable()
        stats = pstats.Stats(profiler)
        stats.sort_stats("cumulative").print_stats(40)
        print_by_file(stats, args.transfers)
    else:
        rounds = []
        for _ in range(args.rounds):
            started = time.process_time()
            for _ in range(args.transfers):
                transfer()
            rounds.append(1000 * (time.process_time() - started) / args.transfers)
        each = " ".join(f"{value:.2f}" for value in rounds)
        median = statistics.median(rounds)
        print(f"CPU per transfer, in this process: {each} ms; median {median:.2f} ms")
    connections.close_all()
    if args.drop:
        drop_database(admin_url, DATABASE)


def print_by_file(stats: pstats.Stats, transfers: int) -> None:
    """Own time (wall: the waits on PostgreSQL are in psycopg's) per source file or package."""
    by_file: Counter = Counter()
    for (filename, _, _), (_, _, own, _, _) in stats.stats.items():
        name = filename.split("site-packages/")[-1].removeprefix(str(ROOT) + "/")
        if "site-packages/" in filename:
            name = "/".join(name.split("/")[:2])
        by_file[name] += own
    total = sum(by_file.values())
    print("\nOwn time per file (ms per transfer, share):")
    for name, own in by_file.most_common(25):
        print(f"  {1000 * own / transfers:7.3f} ms  {100 * own / total:5.1f}%  {name}")


if __name__ == "__main__":
    main()
