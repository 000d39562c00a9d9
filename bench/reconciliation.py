"""A statement's reconciliation at 10 k, 100 k and 1 M lines: time and memory of one run
(docs/reconciliation.md, "Scale"; issue 51 item 7).

    .venv/bin/python bench/reconciliation.py [--sizes 10000 100000 1000000] [--drop]
                                             [--profile] [--explain]

Recreates a database of its own (tx_bench_reconciliation). For each size N, a world of its
own: an institution (USD), a customer, its account, the institution's external account and two
rules through the services (`one_to_one` on the remittance and the amount; `one_to_many` on a
remittance containing the ledger's and the amount: a batch booking); then in SQL N settled ACH
orders with their journals, the two entries of each (the mirrored `rail_settlement` account's
and the funding account's) and their `RailJournal`; a statement received through the service
(an MT940 of one line: a credit no one announced), grown in SQL to about N lines:

- 90 % of the orders booked by their trace number (the exact key);
- 10 % (k % 10 == 7) without a trace, by their remittance: the first rule;
- four collections booked as one sum, by their file's remittance: the second rule;
- planted breaks: order 1 booked with a bank fee of 25 (an amount mismatch), order 2 booked
  twice (a duplicate), order 3 not booked (ledger only), the unknown credit (bank only), and
  the first statement's opening (a missing statement).

Then `reconcile` (the service, as `POST /reconciliations` calls it) in a child process of its
own, which prints its wall time, the time its SQL took (Django's execute wrapper: wall time
waiting on PostgreSQL), the server's CPU (the embedded server's process tree, bench/cpu.py),
its peak RSS (`resource.getrusage`: ru_maxrss) and its RSS before the run (Django loaded), and
what the run found; the parent checks the counts. `--profile`: the child runs under cProfile
and prints the costliest functions; `--explain`: it logs each statement's plan with
auto_explain (ANALYZE) into the server's log. bench/README.md explains every step.
"""

import argparse
import json
import resource
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

DATABASE = "tx_bench_reconciliation"
CURRENCY = "USD"
FEE, UNKNOWN, OPENING = 25, 7_777, 1_000_000
BATCH = (20, 25, 30, 35)  # collections booked as one sum


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--drop", action="store_true", help="drop the database at the end")
    parser.add_argument("--profile", action="store_true", help="the run under cProfile")
    parser.add_argument("--explain", action="store_true", help="auto_explain into the log")
    parser.add_argument("--run", help=argparse.SUPPRESS)  # the child: a statement id
    return parser.parse_args()


# --- the world ----------------------------------------------------------------------------------
def small_world(size: int):
    """Through the services: the institution, its customer's account, its external account,
    the two rules. Returns (institution, customer account, external account, mirrored)."""
    from django.db import transaction

    from accounts.models import Account, AccountProduct
    from accounts.services import account_create, internal_account
    from core.actors import SYSTEM
    from customers.services import customer_create
    from institutions.services import institution_create
    from payments.models import RailFile
    from payments.services.external_accounts import external_account_create
    from reconciliation.services.rules import reconciliation_rule_create

    with transaction.atomic():
        institution, _ = institution_create(name=f"TX Bench Reconciliation {size}", currency="USD")
        product = AccountProduct.objects.filter(institution=institution, currency=CURRENCY).first()
        customer = customer_create(
            institution=institution, first_name="Bench", last_name="Payroll", country_code="840"
        )
        account = account_create(
            institution=institution, customer=customer, product=product, currency=CURRENCY
        )
        external = external_account_create(
            institution=institution,
            customer_id=None,
            holder_name="Bench Payee",
            country_code="840",
            currency=CURRENCY,
            routing_number="021000021",
            account_number="123456789",
            account_type="checking",
            actor=SYSTEM,
        )
        mirrored = internal_account(
            institution=institution, code=Account.InternalCode.RAIL_SETTLEMENT, currency=CURRENCY
        )
        funding = internal_account(
            institution=institution, code=Account.InternalCode.FUNDING, currency=CURRENCY
        )
        # The orders' file (an order sent is in one: a CHECK), a row as the cutoff writes it.
        rail_file = RailFile.objects.create(
            institution=institution,
            rail="ach",
            direction="outbound",
            status="delivered",
            name=f"bench-{size}.ach",
            sha256=f"{size:064d}",
            content=b"",
            window="16:45",
            file_id_modifier="A",
            error="",
        )
        amount = {"field": "amount", "operator": "equals"}
        reconciliation_rule_create(
            institution=institution,
            name="By remittance",
            conditions=[{"field": "remittance", "operator": "equals"}, amount],
            cardinality="one_to_one",
            date_window_days=1,
        )
        reconciliation_rule_create(
            institution=institution,
            name="ACH batches",
            conditions=[{"field": "remittance", "operator": "contains"}, amount],
            cardinality="one_to_many",
        )
    return institution, account, external, mirrored, funding, rail_file


# Order k: a payout (money out: credit) but every fifth, a collection (debit); its amount drawn
# from k; its trace number k; its remittance "PAY k", or the batch's. Its journal value-dated at
# noon of the statement's day; the mirrored account credited by a payout, debited by a
# collection, the institution's funding account the other way.
ORDERS = """
INSERT INTO payments_paymentorder
    (id, institution_id, account_id, external_account_id, direction, amount, currency, rail,
     sec_code, description, remittance_info, end_to_end_id, creditor_reference, prenote,
     requested_execution_date, effective_date, status, trace_number, return_code,
     return_reason, return_late, returned_to_suspense, ended_reason, approval_id, sequence_type,
     final_collection, metadata, created_at, updated_at, sent_at, settled_at, file_id)
SELECT %(tag)s || 'po_' || lpad(k::text, 9, '0'), %(institution)s, %(account)s, %(external)s,
       CASE WHEN k %% 5 = 0 THEN 'debit' ELSE 'credit' END, 1000 + (k::bigint * 7919) %% 100000,
       'USD', 'ach', 'PPD', 'PAYROLL',
       CASE WHEN k = ANY(%(batch)s) THEN 'ACH BATCH 1' ELSE 'PAY ' || k END, '', '', false,
       %(day)s, %(day)s, 'settled', lpad((%(base)s + k)::text, 15, '0'), '', '', false, false,
       '', '', '', false, '{}'::jsonb, %(now)s, %(now)s, %(now)s, %(now)s, %(file)s
  FROM generate_series(1, %(count)s) AS k
"""
JOURNALS = """
INSERT INTO accounts_journal (id, institution_id, kind, description, created_at, value_at)
SELECT %(tag)s || 'jnl_' || lpad(k::text, 9, '0'), %(institution)s, 'payment_order',
       'settled ' || %(tag)s || 'po_' || lpad(k::text, 9, '0'), %(now)s, %(noon)s
  FROM generate_series(1, %(count)s) AS k
"""
ENTRIES = """
WITH legs AS (
    SELECT k, 1 AS leg, %(mirrored)s AS account_id,
           CASE WHEN k %% 5 = 0 THEN 'debit' ELSE 'credit' END AS direction,
           1000 + (k::bigint * 7919) %% 100000 AS amount
      FROM generate_series(1, %(count)s) AS k
    UNION ALL
    SELECT k, 2, %(funding)s, CASE WHEN k %% 5 = 0 THEN 'credit' ELSE 'debit' END,
           1000 + (k::bigint * 7919) %% 100000
      FROM generate_series(1, %(count)s) AS k
)
INSERT INTO accounts_entry
    (journal_id, account_id, direction, amount, currency, created_at, balance_after)
SELECT %(tag)s || 'jnl_' || lpad(k::text, 9, '0'), account_id, direction, amount, 'USD', %(now)s,
       sum(CASE WHEN direction = 'credit' THEN amount ELSE -amount END)
           OVER (PARTITION BY account_id ORDER BY k ROWS UNBOUNDED PRECEDING)
  FROM legs ORDER BY k, leg
"""
RAIL_JOURNALS = """
INSERT INTO payments_railjournal (journal_id, order_id)
SELECT %(tag)s || 'jnl_' || lpad(k::text, 9, '0'), %(tag)s || 'po_' || lpad(k::text, 9, '0')
  FROM generate_series(1, %(count)s) AS k
"""
POSTED = """
UPDATE accounts_account a SET posted = last.balance_after
  FROM (SELECT DISTINCT ON (account_id) account_id, balance_after FROM accounts_entry
         WHERE account_id IN (%(mirrored)s, %(funding)s) ORDER BY account_id, id DESC) AS last
 WHERE a.id = last.account_id
"""
# The statement's lines as the bank books them (a payout is money out: the bank's debit), after
# the service's first line: every order by its trace number, but k % 10 = 7 by its remittance
# only, order 1 with the fee, order 2 twice, order 3 not at all, the batch's collections as one
# sum (its remittance contains the orders').
LINES = """
INSERT INTO reconciliation_bankstatementline
    (id, statement_id, position, booking_date, value_date, amount, direction, currency,
     bank_reference, end_to_end_id, trace_number, remittance, counterparty_name,
     counterparty_account_last4)
SELECT %(tag)s || 'bsl_' || lpad(n::text, 9, '0'), %(statement)s, n, %(day)s, %(day)s, amount,
       direction, 'USD', '', '', trace, remittance, '', ''
  FROM (SELECT row_number() OVER (ORDER BY k, copy) + 1 AS n, *
          FROM (SELECT k, copy,
                       CASE WHEN k %% 5 = 0 THEN 'credit' ELSE 'debit' END AS direction,
                       1000 + (k::bigint * 7919) %% 100000 + CASE WHEN k = 1 THEN %(fee)s ELSE 0 END
                           AS amount,
                       CASE WHEN k %% 10 = 7 THEN '' ELSE lpad((%(base)s + k)::text, 15, '0') END
                           AS trace,
                       CASE WHEN k %% 10 = 7 THEN 'PAY ' || k ELSE 'PAYROLL' END AS remittance
                  FROM generate_series(1, %(count)s) AS k
                  CROSS JOIN LATERAL generate_series(1, CASE WHEN k = 2 THEN 2 ELSE 1 END) copy
                 WHERE k <> 3 AND NOT k = ANY(%(batch)s)
                UNION ALL
                SELECT %(count)s + 1, 1, 'credit', %(batch_sum)s, '', 'ACH BATCH 1 RENT'
               ) AS booked) AS numbered
"""


def mt940(day, opening: int) -> bytes:
    """The statement the service receives: one line, the credit no one announced."""
    yymmdd, mmdd = day.strftime("%y%m%d"), day.strftime("%m%d")

    def money(cents: int) -> str:
        return f"{cents // 100},{cents % 100:02d}"

    rows = [":20:BENCH" + yymmdd, ":25:021000021/123453000", ":28C:00001/001"]
    rows += [f":60F:C{yymmdd}USD{money(opening)}"]
    rows += [f":61:{yymmdd}{mmdd}C{money(UNKNOWN)}NTRFNONREF//B0001", ":86:/REMI/WIRE FROM X"]
    rows += [f":62F:C{yymmdd}USD{money(opening + UNKNOWN)}"]
    return ("\r\n".join(rows) + "\r\n").encode()


def build(size: int, day) -> tuple[str, float]:
    """The world of `size` (module docstring); returns the statement's id and the seconds."""
    from django.db import connection

    from reconciliation.services.statements import bank_statement_receive

    started = time.perf_counter()
    institution, account, external, mirrored, funding, rail_file = small_world(size)
    tag = f"b{size}_"
    now = datetime.now(UTC)
    params = {
        "tag": tag,
        "institution": institution.pk,
        "account": account.pk,
        "external": external.pk,
        "mirrored": mirrored.pk,
        "funding": funding.pk,
        "file": rail_file.pk,
        "count": size,
        "day": day,
        "noon": datetime.combine(day, clock(12), UTC),
        "now": now,
        "base": size * 10,  # trace numbers of their own per world
        "batch": list(BATCH),
        "fee": FEE,
    }
    params["batch_sum"] = sum(1000 + (k * 7919) % 100000 for k in BATCH)
    statement, _ = bank_statement_receive(
        institution=institution, fmt="mt940", name=f"bench-{size}.mt940", content=mt940(day, 0)
    )
    params["statement"] = statement.pk
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")  # no FK checks, no triggers
        try:
            for sql in (ORDERS, JOURNALS, ENTRIES, RAIL_JOURNALS, POSTED, LINES):
                cursor.execute(sql, params)
        finally:
            cursor.execute("SET session_replication_role = origin")
        # The header as the lines now say: its count, and its closing balance their sum (the
        # opening 0: the first statement's opening is a missing statement of 0, none opened).
        cursor.execute(
            """UPDATE reconciliation_bankstatement s
                  SET line_count = l.n, closing_balance = l.total, opening_balance = 0
                 FROM (SELECT count(*) AS n,
                              sum(CASE WHEN direction = 'credit' THEN amount ELSE -amount END)
                                  AS total
                         FROM reconciliation_bankstatementline WHERE statement_id = %s) l
                WHERE s.id = %s""",
            [statement.pk, statement.pk],
        )
        for table in (
            "payments_paymentorder",
            "accounts_journal",
            "accounts_entry",
            "payments_railjournal",
            "reconciliation_bankstatementline",
        ):
            cursor.execute(f"VACUUM (ANALYZE) {table}")
    return statement.pk, time.perf_counter() - started


# --- the run, in a child process ----------------------------------------------------------------
def child(args) -> None:
    """Reconcile the statement `args.run`; print one JSON line."""
    import django

    django.setup()
    from django.db import connection, transaction

    from reconciliation.models import BankStatement
    from reconciliation.services.matching import reconcile

    statement = BankStatement.objects.select_related("institution").get(pk=args.run)
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        if args.explain:
            cursor.execute("LOAD 'auto_explain'")
            cursor.execute("SET auto_explain.log_min_duration = 200")
            cursor.execute("SET auto_explain.log_analyze = on")
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    in_sql, statements = [0.0], []

    def timed(execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            took = time.perf_counter() - started
            in_sql[0] += took
            statements.append((took, " ".join(sql.split())[:150]))

    postgres = postmaster_pid_here()
    server_before = tree_cpu_seconds(postgres) if postgres else 0.0
    started = time.perf_counter()
    # The run's transaction is this one (the run's own is a savepoint in it), so its commit,
    # where PostgreSQL checks the foreign keys of every row written (deferred), is timed apart.
    with transaction.atomic():
        with connection.execute_wrapper(timed):
            if args.profile:
                import cProfile
                import pstats

                profile = cProfile.Profile()
                result = profile.runcall(reconcile, statement=statement)
            else:
                result = reconcile(statement=statement)
        committing = time.perf_counter()
    wall = time.perf_counter() - started
    commit = time.perf_counter() - committing
    server = (tree_cpu_seconds(postgres) - server_before) if postgres else None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    plan = result.plan
    kinds = {}
    for item in plan.breaks:
        kinds[item.kind] = kinds.get(item.kind, 0) + 1
    print(
        json.dumps(
            {
                "wall": wall,
                "sql": in_sql[0],
                "commit": commit,
                "server_cpu": server,
                "process_cpu": time.process_time(),
                "rss_before_kib": rss_before,
                "peak_rss_kib": peak,
                "matched": plan.matched_count,
                "breaks": plan.breaks_count,
                "listed_matches": len(plan.matches),
                "break_kinds": kinds,
                "run": result.run.pk if result.run else None,
            }
        )
    )
    if args.profile:
        stats = pstats.Stats(profile, stream=sys.stderr).sort_stats("cumulative")
        stats.print_stats(25)
        print("The slowest statements:", file=sys.stderr)
        for took, sql in sorted(statements, reverse=True)[:15]:
            print(f"{took:7.3f} s  {sql}", file=sys.stderr)


def run_child(statement_id: str, args) -> dict:
    return run_in_child(
        __file__,
        statement_id,
        ["--profile"] * args.profile + ["--explain"] * args.explain,
        args.profile,
    )


def main():
    args = parse_args()
    if args.run:
        return child(args)
    admin_url = own_database(DATABASE)
    from django.db import connection

    day = (datetime.now(UTC) - timedelta(days=1)).date()
    rows = []
    for size in sorted(args.sizes):
        statement_id, seconds = build(size, day)
        print(f"\n{size:,} orders and about as many statement lines: built in {seconds:.1f} s")
        found = run_child(statement_id, args)
        again = run_child(statement_id, args)
        expected_matches = size - 1 - len(BATCH) + 1  # each but order 3 and the batch's; the batch
        expected = {"amount_mismatch": 1, "duplicate": 1, "ledger_only": 1, "bank_only": 1}
        if found["matched"] != expected_matches or found["break_kinds"] != expected:
            raise RuntimeError(f"unexpected run: {found}")
        if again["run"] is not None or again["matched"] or again["breaks"]:
            raise RuntimeError(f"the second run found something: {again}")
        rows.append((size, found, again))
        server = "n/a" if found["server_cpu"] is None else f"{found['server_cpu']:.1f} s"
        print(
            f"run: {found['wall']:.1f} s wall, {found['sql']:.1f} s in SQL and "
            f"{found['commit']:.1f} s committing, server CPU {server}, "
            f"process CPU {found['process_cpu']:.1f} s (with Django's start), peak RSS "
            f"{found['peak_rss_kib'] / 1024:.0f} MiB ({found['rss_before_kib'] / 1024:.0f} MiB "
            f"before the run); {found['matched']:,} matches, breaks {found['break_kinds']}, "
            f"{found['listed_matches']} listed"
        )
        print(
            f"again: {again['wall']:.1f} s wall, nothing new, peak RSS "
            f"{again['peak_rss_kib'] / 1024:.0f} MiB"
        )
    print("\n| lines | run wall | in SQL | commit | server CPU | peak RSS | again |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for size, found, again in rows:
        server = "n/a" if found["server_cpu"] is None else f"{found['server_cpu']:.1f} s"
        print(
            f"| {size:,} | {found['wall']:.1f} s | {found['sql']:.1f} s | "
            f"{found['commit']:.1f} s | {server} | "
            f"{found['peak_rss_kib'] / 1024:.0f} MiB | {again['wall']:.1f} s |"
        )
    if args.drop:
        connection.close()
        drop_database(admin_url, DATABASE)


if __name__ == "__main__":
    main()
