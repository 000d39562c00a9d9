"""One day's interest accrual of 10,000 and 100,000 accounts, with a few entries each and with ten
times as many: wall time, CPU and database time per account (docs/interest.md, "Scale"; issue
52 item 7).

    .venv/bin/python bench/interest.py [--sizes 10000 100000] [--history 3 30] [--drop]
                                       [--profile]

Recreates a database of its own (tx_bench_interest). For each size N and history H, a world of
its own: an institution (EUR, UTC) and its product through the services, the product's terms
from yesterday (a row as the API writes it: the API takes no past date), one customer; then in
SQL N accounts on the product and H journals of one entry each per account, posted (and
value-dated) over the H days before yesterday, each account's running `balance_after` growing
by 1,000 to 100,999 minor units an entry, `posted` its last. So every account is positive at
yesterday's end and earns deposit interest: one row each. Only the customers' legs are written
(the counterpart's would not be read by the job); `VACUUM (ANALYZE)` after.

Then `interest_accrue` (the job, as `manage.py accrue_interest` and the hourly task run it) in a
child process of its own at 01:00 today: it accrues yesterday, the one day the books have. The
child prints the wall time, the time its SQL took (Django's execute wrapper: wall time waiting
on PostgreSQL), the process's CPU over the run (`time.process_time`), the server's CPU (the
embedded server's process tree, bench/cpu.py: the backends' work, which the wrapper's time
includes with the round trips) and what was written; the parent checks the counts and prints
the figures per account. `--profile`: the child runs under cProfile and prints the costliest
functions. bench/README.md explains every step.
"""

import argparse
import json
import sys
import time
from datetime import UTC, datetime, timedelta
from datetime import time as clock
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "bench"))

from child import own_database, postmaster_pid_here, run_in_child  # noqa: E402  (bench/child.py)
from common import (  # noqa: E402  (bench/common.py)
    drop_database,
)
from cpu import tree_cpu_seconds  # noqa: E402  (bench/cpu.py)

DATABASE = "tx_bench_interest"
CURRENCY = "EUR"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument(
        "--history", type=int, nargs="+", default=[3, 30], help="entries per account"
    )
    parser.add_argument("--drop", action="store_true", help="drop the database at the end")
    parser.add_argument("--profile", action="store_true", help="the runs under cProfile")
    parser.add_argument("--run", help=argparse.SUPPRESS)  # the child: an institution id
    return parser.parse_args()


# --- the world ----------------------------------------------------------------------------------
def small_world(size: int, history: int, yesterday):
    """Through the services: the institution, its product, its customer; the terms as the API
    writes them, from yesterday. Returns (institution, product, customer)."""
    from django.db import transaction

    from accounts.models import AccountProduct
    from customers.services import customer_create
    from institutions.services import institution_create
    from interest.models import InterestTerms

    with transaction.atomic():
        institution, _ = institution_create(
            name=f"TX Bench Interest {size} x {history}", currency=CURRENCY
        )
        product = AccountProduct.objects.filter(institution=institution, currency=CURRENCY).first()
        customer = customer_create(
            institution=institution, first_name="Bench", last_name="Saver", country_code="276"
        )
        InterestTerms.objects.create(
            institution=institution,
            product=product,
            effective_date=yesterday,
            deposit_tiers=[
                {"from_balance": 0, "rate": "1.5"},
                {"from_balance": 5_000_000, "rate": "2.25"},
            ],
            tiering=InterestTerms.Tiering.BANDED,
            minimum_balance=0,
            overdraft_rate="9.9",
            day_count=InterestTerms.DayCount.ACT_365F,
            balance_method=InterestTerms.BalanceMethod.DAILY,
            posting_frequency=InterestTerms.PostingFrequency.MONTHLY,
            rounding=InterestTerms.Rounding.HALF_EVEN,
        )
    return institution, product, customer


ACCOUNTS = """
INSERT INTO accounts_account
    (id, institution_id, kind, customer_id, product_id, currency, status, posted, pending,
     overdraft_limit, network_overdraft, metadata, created_at, updated_at)
SELECT %(tag)s || 'acc_' || lpad(k::text, 9, '0'), %(institution)s, 'customer', %(customer)s,
       %(product)s, 'EUR', 'active', %(history)s::bigint * 1000 + (k::bigint * 7919) %% 100000,
       0, 0, 0, '{}'::jsonb, %(start)s, %(start)s
  FROM generate_series(1, %(count)s) AS k
"""
# Journal j of H, posted (and value-dated) at noon of the j-th day of the H before yesterday.
JOURNALS = """
INSERT INTO accounts_journal (id, institution_id, kind, description, created_at, value_at)
SELECT %(tag)s || 'jnl_' || lpad(j::text, 4, '0'), %(institution)s, 'adjustment',
       'bench load ' || j, %(start)s + (j - 1) * interval '1 day',
       %(start)s + (j - 1) * interval '1 day'
  FROM generate_series(1, %(history)s) AS j
"""
# Account k's entry of journal j: 1,000 a journal, the last one 1,000 + (k * 7919) % 100,000.
ENTRIES = """
INSERT INTO accounts_entry
    (journal_id, account_id, direction, amount, currency, created_at, balance_after)
SELECT %(tag)s || 'jnl_' || lpad(j::text, 4, '0'), %(tag)s || 'acc_' || lpad(k::text, 9, '0'),
       'credit', CASE WHEN j = %(history)s THEN 1000 + (k::bigint * 7919) %% 100000 ELSE 1000 END,
       'EUR', %(start)s + (j - 1) * interval '1 day',
       (j - 1)::bigint * 1000
           + CASE WHEN j = %(history)s THEN 1000 + (k::bigint * 7919) %% 100000 ELSE 1000 END
  FROM generate_series(1, %(history)s) AS j CROSS JOIN generate_series(1, %(count)s) AS k
 ORDER BY j, k
"""


def build(size: int, history: int, yesterday) -> tuple[str, float]:
    """The world (module docstring); returns the institution's id and the seconds it took."""
    from django.db import connection

    started = time.perf_counter()
    institution, product, customer = small_world(size, history, yesterday)
    # The history's first day at noon: H days before yesterday.
    start = datetime.combine(yesterday - timedelta(days=history), clock(12), UTC)
    params = {
        "tag": f"i{size}x{history}_",
        "institution": institution.pk,
        "customer": customer.pk,
        "product": product.pk,
        "count": size,
        "history": history,
        "start": start,
    }
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")  # no FK checks, no triggers
        try:
            for sql in (ACCOUNTS, JOURNALS, ENTRIES):
                cursor.execute(sql, params)
        finally:
            cursor.execute("SET session_replication_role = origin")
        for table in ("accounts_account", "accounts_journal", "accounts_entry"):
            cursor.execute(f"VACUUM (ANALYZE) {table}")
    return institution.pk, time.perf_counter() - started


# --- the run, in a child process ----------------------------------------------------------------
def child(args) -> None:
    """Accrue yesterday of every institution with terms not yet accrued (only the world just
    built: the others' books are done); print one JSON line."""
    import django

    django.setup()
    from django.db import connection

    from core.actors import SYSTEM
    from core.operations import run_batches
    from interest.accrual import interest_accrue
    from interest.models import InterestAccrual

    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    in_sql, statements = [0.0], [0]

    def timed(execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            in_sql[0] += time.perf_counter() - started
            statements[0] += 1

    now = datetime.combine(datetime.now(UTC).date(), clock(1), UTC)
    postgres = postmaster_pid_here()
    server_before = tree_cpu_seconds(postgres) if postgres else 0.0
    cpu_before = time.process_time()
    started = time.perf_counter()
    with connection.execute_wrapper(timed):
        if args.profile:
            import cProfile
            import pstats

            profile = cProfile.Profile()
            report = profile.runcall(run_batches, interest_accrue, actor=SYSTEM, now=now)
        else:
            report = run_batches(interest_accrue, actor=SYSTEM, now=now)
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu_before
    server = (tree_cpu_seconds(postgres) - server_before) if postgres else None
    print(
        json.dumps(
            {
                "wall": wall,
                "sql": in_sql[0],
                "statements": statements[0],
                "process_cpu": cpu,
                "server_cpu": server,
                "days": report.days,
                "accruals": report.accruals,
                "journals": report.journals,
                "rows": InterestAccrual.objects.filter(institution_id=args.run).count(),
            }
        )
    )
    if args.profile:
        stats = pstats.Stats(profile, stream=sys.stderr).sort_stats("tottime")
        stats.print_stats(20)


def run_child(institution_id: str, args) -> dict:
    return run_in_child(__file__, institution_id, ["--profile"] * args.profile, args.profile)


def per_account(seconds: float | None, size: int) -> str:
    return "n/a" if seconds is None else f"{seconds / size * 1e6:.0f} µs"


def main():
    args = parse_args()
    if args.run:
        return child(args)
    admin_url = own_database(DATABASE)
    from django.db import connection

    yesterday = datetime.now(UTC).date() - timedelta(days=1)
    rows = []
    for size in sorted(args.sizes):
        for history in sorted(args.history):
            institution_id, seconds = build(size, history, yesterday)
            print(
                f"\n{size:,} accounts x {history} entries ({size * history:,}): built in "
                f"{seconds:.1f} s"
            )
            found = run_child(institution_id, args)
            if (found["days"], found["accruals"], found["rows"]) != (1, size, size):
                raise RuntimeError(f"unexpected run: {found}")
            rows.append((size, history, found))
            server = "n/a" if found["server_cpu"] is None else f"{found['server_cpu']:.1f} s"
            print(
                f"accrued: {found['wall']:.1f} s wall, {found['sql']:.1f} s in SQL "
                f"({found['statements']:,} statements), process CPU {found['process_cpu']:.1f} s, "
                f"server CPU {server}; {found['accruals']:,} accruals, {found['journals']} "
                "journal(s)"
            )
    print(
        "\n| accounts | entries each | wall | per account: wall | process CPU | in SQL | "
        "server CPU |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for size, history, found in rows:
        print(
            f"| {size:,} | {history} | {found['wall']:.1f} s | "
            f"{per_account(found['wall'], size)} | "
            f"{per_account(found['process_cpu'], size)} | {per_account(found['sql'], size)} | "
            f"{per_account(found['server_cpu'], size)} |"
        )
    if args.drop:
        connection.close()
        drop_database(admin_url, DATABASE)


if __name__ == "__main__":
    main()
