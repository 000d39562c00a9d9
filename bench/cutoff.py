"""A cut-off of N approved payment orders (10,000 by default): the wall time of `cutoff_run`
and the memory it holds (issue 49 item 10; bench/README.md, "cutoff.py").

Run by hand, never by the tests:

    .venv/bin/python bench/cutoff.py                      # 10,000 orders, half of them credits
    .venv/bin/python bench/cutoff.py --orders 2000 --profile

Recreates its database (tx_bench_cutoff) on the service's PostgreSQL server, production
settings. Set-up, not measured: an institution with an ACH profile, one customer with
`--accounts` USD accounts each loaded through the services, and N approved orders inserted in
bulk with the ORM, each to an external account of its own (its number sealed as the API seals
it), spread over the accounts, every other one a credit with its money held (a hold of purpose
`payment_order` per credit, the accounts' pending balances raised by them), all made a minute
ago and due today; then ANALYZE.

Then the real `cutoff_run` of the next business day's 16:45 window, three times over the same
orders: once under tracemalloc (its peak) with the statements counted, in a transaction rolled
back; once timed without tracing, in a transaction rolled back (as warm as the next); and once
timed and committed, the run that counts, checked after: one file of N entries, every order
scheduled, the ledger whole (`ledger_breaches`). `--profile`: instead, one run under cProfile
(rolled back), its costliest functions and its time by file.
"""

import argparse
import cProfile
import hashlib
import logging
import pstats
import resource
import subprocess
import sys
import time
import tracemalloc
from collections import Counter
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "bench"))

import os  # noqa: E402

from common import (  # noqa: E402  (bench/common.py)
    drop_database,
    recreate_database,
    server_url,
    service_environment,
    with_database,
)

DATABASE = "tx_bench_cutoff"
LOAD = 10**12  # each account's load: far more than its credits
ROUTING_NUMBERS = ["021000021", "121000248", "026009593", "011000015", "031300012"]
PROFILE = {
    "odfi_routing_number": "011000015",
    "odfi_name": "Sponsor Bank",
    "destination_routing_number": "011000015",
    "destination_name": "Federal Reserve",
    "company_id": "1234567890",
    "company_name": "TX Bench Bank",
    "receiving_routing_number": "026009593",
}


class RolledBack(Exception):  # noqa: N818 (control flow: the run's transaction undone)
    pass


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=10_000)
    parser.add_argument("--accounts", type=int, default=100, help="accounts paying (default 100)")
    parser.add_argument("--profile", action="store_true", help="one run under cProfile")
    parser.add_argument("--drop", action="store_true", help="drop the database at the end")
    return parser.parse_args()


def main():
    args = parse_args()
    admin_url = server_url()
    recreate_database(admin_url, DATABASE)
    os.environ.update(service_environment(with_database(admin_url, DATABASE), rate_limit=0))
    subprocess.run(  # noqa: S603
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, check=True
    )
    import django

    django.setup()
    logging.disable(logging.INFO)
    from django.db import connection, connections, transaction

    from accounts.verification import ledger_breaches
    from payments.models import PaymentOrder, Rail, RailFile
    from payments.services.cutoff import cutoff_run

    started = time.perf_counter()
    profile, window_date = world(args.orders, args.accounts)
    print(
        f"set-up: {args.orders:,} approved orders ({(args.orders + 1) // 2:,} credits) on "
        f"{args.accounts} accounts in {time.perf_counter() - started:.1f} s"
    )

    def run():
        return cutoff_run(profile=profile, rail=Rail.ACH, window_date=window_date, window="16:45")

    def rolled_back(step):
        try:
            with transaction.atomic():
                step()
                raise RolledBack
        except RolledBack:
            pass

    if args.profile:
        profiler = cProfile.Profile()
        rolled_back(lambda: profiler.runcall(run))
        stats = pstats.Stats(profiler)
        stats.sort_stats("cumulative").print_stats(35)
        print_by_file(stats, args.orders)
        finish(connections, admin_url, args.drop)
        return

    statements = Counter()

    def counted(execute, sql, params, many, context):
        statements[sql.split(None, 1)[0].upper()] += 1
        return execute(sql, params, many, context)

    def traced():
        tracemalloc.start()
        with connection.execute_wrapper(counted):
            run()
        peak.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()

    peak: list[int] = []
    rolled_back(traced)
    warm = timed(lambda: rolled_back(run))
    seconds = timed(run)

    [rail_file] = RailFile.objects.filter(direction=RailFile.Direction.OUTBOUND)
    scheduled = PaymentOrder.objects.filter(status=PaymentOrder.Status.SCHEDULED).count()
    content = bytes(rail_file.content)
    if (rail_file.entry_count, scheduled) != (args.orders, args.orders):
        raise SystemExit(f"{rail_file.entry_count} entries, {scheduled} orders scheduled")
    if hashlib.sha256(content).hexdigest() != rail_file.sha256:
        raise SystemExit("the file's bytes are not its SHA-256's")
    breaches = ledger_breaches()
    if breaches:
        raise SystemExit(f"ledger breaches: {breaches}")

    total = sum(statements.values())
    print(f"file: {rail_file.entry_count:,} entries, {len(content) / 1e6:.2f} MB")
    print(
        f"cutoff_run   {seconds:6.2f} s committed ({args.orders / seconds:,.0f} orders/s); "
        f"{warm:.2f} s rolled back"
    )
    print(f"peak         {peak[0] / 1e6:6.2f} MB (tracemalloc)")
    by_kind = ", ".join(f"{kind} {count:,}" for kind, count in statements.most_common())
    print(f"statements   {total:,} ({total / args.orders:.2f} an order): {by_kind}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process max RSS {rss:.0f} MB; ledger checked: no breach")
    finish(connections, admin_url, args.drop)


def world(orders: int, accounts: int):
    """The institution, its profile, the accounts and the orders (module docstring); returns
    the profile and the window's date."""
    from django.db import connection, transaction
    from django.utils import timezone

    from accounts.models import AccountProduct, Hold
    from accounts.services import account_create, account_product_create, adjustment_create
    from cards.dates import today_of
    from core import operations
    from core.actors import SYSTEM
    from customers.services import customer_create
    from institutions.calendar import business_days_after
    from institutions.services import institution_create
    from payments.models import AchProfile, ExternalAccount, PaymentOrder, Rail
    from payments.services.orders import HOLD_DAYS_AFTER_EXECUTION
    from payments.services.profiles import ach_profile_set

    with operations.operation(SYSTEM):
        institution, _ = institution_create(
            name="TX Bench Bank", currency="USD", time_zone="America/New_York"
        )
        ach_profile_set(institution=institution, **PROFILE)
        product = account_product_create(
            institution=institution,
            code=AccountProduct.Code.CURRENT,
            name="Checking (USD)",
            currency="USD",
        )
        customer = customer_create(
            institution=institution, first_name="Bench", last_name="Payer", country_code="840"
        )
        payers = []
        for _ in range(accounts):
            account = account_create(
                institution=institution, customer=customer, product=product, currency="USD"
            )
            adjustment_create(
                account=account, direction="credit", amount=LOAD, currency="USD", actor=SYSTEM
            )
            payers.append(account)

    now = timezone.now()
    made = now - timedelta(minutes=1)
    today = today_of(institution)
    externals = []
    for index in range(orders):
        external = ExternalAccount(
            institution=institution,
            customer=customer,
            holder_name=f"Receiver {index}",
            country_code="840",
            currency="USD",
            ach_routing_number=ROUTING_NUMBERS[index % len(ROUTING_NUMBERS)],
            ach_account_type=ExternalAccount.AccountType.CHECKING,
            created_at=made,
            updated_at=made,
        )
        for name, value in external.sealed_account_number(f"{100000 + index}").items():
            setattr(external, name, value)
        externals.append(external)
    holds, rows = [], []
    for index, external in enumerate(externals):
        account = payers[index % accounts]
        order = PaymentOrder(
            institution=institution,
            account=account,
            external_account=external,
            direction="credit" if index % 2 == 0 else "debit",
            amount=100 + index % 100_000,
            currency="USD",
            rail=Rail.ACH,
            sec_code=PaymentOrder.SecCode.PPD,
            description="PAYROLL" if index % 3 else "VENDORS",
            requested_execution_date=today,
            status=PaymentOrder.Status.APPROVED,
            created_at=made,
            updated_at=made,
        )
        if order.direction == "credit":
            order.hold = Hold(
                institution=institution,
                account=account,
                amount=order.amount,
                currency="USD",
                purpose=Hold.Purpose.PAYMENT_ORDER,
                reason=f"Payment order {order.pk}",
                expires_at=now + timedelta(days=HOLD_DAYS_AFTER_EXECUTION),
                created_at=made,
                updated_at=made,
            )
            holds.append(order.hold)
        rows.append(order)
    with transaction.atomic():
        ExternalAccount.objects.bulk_create(externals, batch_size=2000)
        Hold.objects.bulk_create(holds, batch_size=2000)
        PaymentOrder.objects.bulk_create(rows, batch_size=2000)
        with connection.cursor() as cursor:
            # The accounts' pending balances: their active holds, as placing them one by one
            # would have left them.
            cursor.execute(
                """UPDATE accounts_account a SET pending = a.pending + h.total
                     FROM (SELECT account_id, SUM(amount) AS total FROM accounts_hold
                            WHERE status = 'active' GROUP BY account_id) h
                    WHERE a.id = h.account_id"""
            )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    profile = AchProfile.objects.select_related("institution").get(institution=institution)
    return profile, business_days_after(institution, today, 1)


def timed(step) -> float:
    started = time.perf_counter()
    step()
    return time.perf_counter() - started


def print_by_file(stats: pstats.Stats, orders: int) -> None:
    """Own time (wall: the waits on PostgreSQL are in psycopg's) per source file or package."""
    by_file: Counter = Counter()
    for (filename, _, _), (_, _, own, _, _) in stats.stats.items():
        name = filename.split("site-packages/")[-1].removeprefix(str(ROOT) + "/")
        if "site-packages/" in filename:
            name = "/".join(name.split("/")[:2])
        by_file[name] += own
    total = sum(by_file.values())
    print("\nOwn time per file (µs per order, share):")
    for name, own in by_file.most_common(20):
        print(f"  {1e6 * own / orders:8.1f} µs  {100 * own / total:5.1f}%  {name}")


def finish(connections, admin_url: str, drop: bool) -> None:
    connections.close_all()
    if drop:
        drop_database(admin_url, DATABASE)


if __name__ == "__main__":
    main()
