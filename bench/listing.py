"""Statement-line listing at 10 k and 1 M lines: page time within a constant factor
(docs/design.md section 12).

    .venv/bin/python bench/listing.py [--repeat 200] [--drop]

Recreates a database of its own (tx_bench_listing), opens accounts through the services,
generates statement lines in SQL (10 k, then grown to 1 M), and at each size times
GET /TX/v2/accounts/{accountId}/transactions in this process (Django's test client, production
settings) for three accounts (busy, new and busy, quiet) and six query shapes; then prints
p50/p95, the 1M/10k ratios and the EXPLAIN (ANALYZE, BUFFERS) of each shape's SQL at 1 M.
At each size it also grows ledger entries (to the same count) and holds (a quarter of it) and
times GET /TX/v2/accounts/{accountId}/balances?at= and its posted and pending balance SQL.
bench/README.md explains every step.
"""

import argparse
import json
import logging
import os
import re
import subprocess
import sys
import time
import warnings
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from psycopg.conninfo import conninfo_to_dict

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from common import (  # noqa: E402  (bench/common.py)
    drop_database,
    percentile,
    recreate_database,
    server_url,
    service_environment,
    with_database,
)

DATABASE = "tx_bench_listing"
INSTITUTION = "TX Bench Listing Bank"
CURRENCY = "EUR"
ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # core.ids: Crockford base32
DAY_MS = 86_400_000
TABLE = "transactions_transaction"
# A plan is suspect when it sorts, or reads and throws away, this many rows (or reads it all).
MANY_ROWS = 1000


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=10_000, help="lines first (default 10000)")
    parser.add_argument("--large", type=int, default=1_000_000, help="lines then (default 1 M)")
    parser.add_argument("--accounts", type=int, default=1000, help="accounts (default 1000)")
    parser.add_argument(
        "--busy-share", type=float, default=0.1, help="share of lines on the busy account (0.1)"
    )
    parser.add_argument(
        "--new-share", type=float, default=0.05, help="share on the new busy account (0.05)"
    )
    parser.add_argument("--days", type=int, default=90, help="lines spread over (default 90)")
    parser.add_argument(
        "--new-days", type=int, default=30, help="the new busy account's age (default 30)"
    )
    parser.add_argument("--repeat", type=int, default=200, help="requests per shape (200)")
    parser.add_argument("--limit", type=int, default=20, help="page size (default 20)")
    parser.add_argument(
        "--max-ratio", type=float, default=3.0, help="largest p50 ratio accepted (default 3)"
    )
    parser.add_argument("--drop", action="store_true", help="drop the database at the end")
    return parser.parse_args()


# --- PostgreSQL: the service's server, a database of the benchmark's own


def migrate() -> None:
    command = [sys.executable, "manage.py", "migrate", "--noinput"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)  # noqa: S603
    if result.returncode != 0:
        raise RuntimeError(f"migrate failed:\n{result.stdout}\n{result.stderr}")


# --- Data: a tenant and its accounts through the services, statement lines in SQL


def create_tenant(account_count: int):
    """An institution, an API key allowed from 127.0.0.1, one customer and its prepaid
    accounts. Returns (institution, API key secret, [account ids] in id order)."""
    from django.db import transaction

    from accounts.models import AccountProduct
    from accounts.services import account_create
    from customers.services import customer_create
    from institutions.services import api_key_create, institution_create

    with transaction.atomic():
        institution, _ = institution_create(name=INSTITUTION, currency=CURRENCY)
        issued = api_key_create(
            institution=institution,
            allow=["127.0.0.1/32"],
            role="full",
            name="bench",
            created_by="bench",
        )
        prepaid = AccountProduct.objects.get(
            institution=institution, code=AccountProduct.Code.PREPAID
        )
        customer = customer_create(
            institution=institution, first_name="Bench", last_name="Customer", country_code="276"
        )
        accounts = [
            account_create(
                institution=institution,
                customer=customer,
                product=prepaid,
                currency=prepaid.currency,
            )
            for _ in range(account_count)
        ]
    return institution, issued.secret, sorted(account.pk for account in accounts)


def base32_sql(value: str, length: int) -> str:
    """SQL for the last `length` Crockford base32 digits of the bigint `value` (core.ids)."""
    return " || ".join(
        f"substr('{ALPHABET}', (({value} >> {5 * (length - 1 - i)}) & 31)::int + 1, 1)"
        for i in range(length)
    )


def random_base32_sql(length: int) -> str:
    return " || ".join(
        f"substr('{ALPHABET}', floor(random() * 32)::int + 1, 1)" for _ in range(length)
    )


# Account 1 (by id) is busy over the whole period, account 2 busy since `new_days` only (it was
# opened then), the others share the rest evenly. Types and statuses mixed as a card-and-transfer
# account would have them: about 35 % Goods, 10 % Cash, 25 % CashDec, 25 % CashInc, 5 % Return;
# one Goods or Cash line in ten is still Unsettled (an authorization awaiting its presentment),
# 4.5 % of all lines. Inserted in id order, as the service appends them, so that the heap is in
# time order as in production.
INSERT_LINES = f"""
INSERT INTO {TABLE}
    (id, institution_id, account_id, type, settlement_status, amount, currency, description,
     merchant, created_at)
SELECT 'txn_' || {base32_sql("ms", 10)} || {random_base32_sql(16)},
       %(institution)s, numbered.id, type,
       CASE WHEN type IN ('Goods', 'Cash') AND r_status < 0.1
            THEN 'Unsettled' ELSE 'Presentment' END,
       amount, %(currency)s,
       CASE type WHEN 'Goods' THEN 'Card purchase' WHEN 'Cash' THEN 'ATM withdrawal'
                 WHEN 'CashDec' THEN 'Transfer out' WHEN 'CashInc' THEN 'Transfer in'
                 ELSE 'Refund' END,
       CASE WHEN type IN ('Goods', 'Cash', 'Return')
            THEN jsonb_build_object('name', 'Bench Shop ' || mod(ms, 97), 'mcc', '5411',
                                    'city', 'Berlin', 'country', 'DEU') END,
       to_timestamp(ms / 1000.0)
  FROM (SELECT %(newest_ms)s::bigint
                 - floor(random() * CASE n WHEN 2 THEN %(new_span_ms)s ELSE %(span_ms)s END)::bigint
                 AS ms,
               n, amount, r_status,
               CASE WHEN r_type < 0.35 THEN 'Goods' WHEN r_type < 0.45 THEN 'Cash'
                    WHEN r_type < 0.70 THEN 'CashDec' WHEN r_type < 0.95 THEN 'CashInc'
                    ELSE 'Return' END AS type
          FROM (SELECT CASE WHEN r_account < %(busy_share)s THEN 1
                            WHEN r_account < %(busy_share)s + %(new_share)s THEN 2
                            ELSE 3 + floor(random() * (%(accounts)s - 2))::int END AS n,
                       amount, r_type, r_status
                  FROM (SELECT random() AS r_account, random() AS r_type, random() AS r_status,
                               1 + floor(random() * 100000)::bigint AS amount
                          FROM generate_series(1, %(count)s)) AS raw) AS drawn) AS typed
  JOIN (SELECT id, row_number() OVER (ORDER BY id) AS n
          FROM accounts_account
         WHERE institution_id = %(institution)s AND kind = 'customer') AS numbered USING (n)
 ORDER BY 1
"""  # noqa: S608 (constants of this file only; values are parameters)


def insert_lines(institution, count: int, args, newest_ms: int) -> float:
    """`count` more statement lines up to `newest_ms` (the new account's over its last
    `args.new_days` days, the others' over `args.days`), in one statement; then VACUUM ANALYZE.
    Returns the seconds taken."""
    from django.db import connection

    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(
            INSERT_LINES,
            {
                "institution": institution.pk,
                "currency": CURRENCY,
                "newest_ms": newest_ms,
                "span_ms": args.days * DAY_MS,
                "new_span_ms": args.new_days * DAY_MS,
                "busy_share": args.busy_share,
                "new_share": args.new_share,
                "accounts": args.accounts,
                "count": count,
            },
        )
        # VACUUM too: sets hint bits and the visibility map now, so that neither the first
        # timed reads nor an autovacuum woken by the insert run during the measurement.
        cursor.execute(f"VACUUM (ANALYZE) {TABLE}")
    return time.perf_counter() - started


def check_ids() -> None:
    """Each generated id carries its line's created_at, to the millisecond, as core.ids does."""
    from accounts.models import StatementLine

    for line in StatementLine.objects.order_by("?")[:200]:
        millis = 0
        for char in line.pk[4:14]:
            millis = millis * 32 + ALPHABET.index(char)
        created = round(line.created_at.timestamp() * 1000)
        if not (line.pk.startswith("txn_") and len(line.pk) == 30 and millis == created):
            raise RuntimeError(f"Generated id {line.pk} does not match {line.created_at}")


def table_facts() -> dict:
    from django.db import connection

    sizes = f"pg_size_pretty(pg_table_size('{TABLE}')), pg_size_pretty(pg_indexes_size('{TABLE}'))"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*), {sizes} FROM {TABLE}")  # noqa: S608
        count, table_size, index_size = cursor.fetchone()
    return {"lines": count, "table": table_size, "indexes": index_size}


def lines_of(account_id: str) -> int:
    from accounts.models import StatementLine

    return StatementLine.objects.filter(account_id=account_id).count()


# --- Ledger entries, for the balance at an instant (docs/balances-at-an-instant.md)

# `count` more entries (two per journal: a credit to a customer account drawn as the lines' are,
# the debit on the institution's funding account), after every entry already there: entry k at
# `oldest + (k - have) * step`, in id order, so an account's entries keep their time order. Each
# carries its balance_after (the account's last one plus the running sum of the new ones), as
# the posting functions write it; the rows are inserted with the triggers off
# (session_replication_role = replica) and checked after (verify_ledger's checks).
INSERT_JOURNALS = """
INSERT INTO accounts_journal (id, institution_id, kind, description, created_at)
SELECT 'jnl_bench_' || lpad(k::text, 9, '0'), %(institution)s, 'adjustment', '',
       %(oldest)s::timestamptz + (k - %(have)s) * %(step)s::interval
  FROM generate_series(%(have)s + 1, %(have)s + %(journals)s) AS k
"""
INSERT_ENTRIES = """
WITH moves AS (
    SELECT k, numbered.id AS account_id, amount,
           %(oldest)s::timestamptz + (k - %(have)s) * %(step)s::interval AS at
      FROM (SELECT k, 1 + floor(random() * 100000)::bigint AS amount,
                   CASE WHEN r < %(busy_share)s THEN 1
                        WHEN r < %(busy_share)s + %(new_share)s THEN 2
                        ELSE 3 + floor(random() * (%(accounts)s - 2))::int END AS n
              FROM (SELECT k, random() AS r
                      FROM generate_series(%(have)s + 1, %(have)s + %(journals)s) AS k) AS raw
           ) AS drawn
      JOIN (SELECT id, row_number() OVER (ORDER BY id) AS n
              FROM accounts_account
             WHERE institution_id = %(institution)s AND kind = 'customer') AS numbered USING (n)
), legs AS (
    SELECT k, 1 AS leg, %(funding)s AS account_id, 'debit' AS direction, amount,
           -amount AS signed, at FROM moves
    UNION ALL
    SELECT k, 2, account_id, 'credit', amount, amount, at FROM moves
)
INSERT INTO accounts_entry
    (journal_id, account_id, direction, amount, currency, created_at, balance_after)
SELECT 'jnl_bench_' || lpad(k::text, 9, '0'), account_id, direction, amount, %(currency)s, at,
       coalesce((SELECT e.balance_after FROM accounts_entry e
                  WHERE e.account_id = legs.account_id ORDER BY e.id DESC LIMIT 1), 0)
       + sum(signed) OVER (PARTITION BY account_id ORDER BY k, leg ROWS UNBOUNDED PRECEDING)
  FROM legs
 ORDER BY k, leg
"""
SET_POSTED = """
UPDATE accounts_account a SET posted = last.balance_after
  FROM (SELECT DISTINCT ON (account_id) account_id, balance_after
          FROM accounts_entry ORDER BY account_id, id DESC) AS last
 WHERE a.id = last.account_id AND a.posted <> last.balance_after
"""


def insert_entries(institution, count: int, args, oldest: datetime, span: timedelta) -> float:
    """`count` more ledger entries (see INSERT_ENTRIES) spread over `span` from `oldest`, the
    accounts' posted balances set to match; then VACUUM ANALYZE. Returns the seconds taken."""
    from django.db import connection

    from accounts.models import Account
    from accounts.services import internal_account
    from accounts.verification import CHECKS

    funding = internal_account(
        institution=institution, code=Account.InternalCode.FUNDING, currency=CURRENCY
    )
    journals = count // 2
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM accounts_journal")
        have = cursor.fetchone()[0]
        params = {
            "institution": institution.pk,
            "funding": funding.pk,
            "currency": CURRENCY,
            "have": have,
            "journals": journals,
            "oldest": oldest,
            "step": span / max(journals, 1),
            "busy_share": args.busy_share,
            "new_share": args.new_share,
            "accounts": args.accounts,
        }
        cursor.execute("SET session_replication_role = replica")
        try:
            cursor.execute(INSERT_JOURNALS, params)
            cursor.execute(INSERT_ENTRIES, params)
            cursor.execute(SET_POSTED)
        finally:
            cursor.execute("SET session_replication_role = origin")
        cursor.execute("VACUUM (ANALYZE) accounts_entry")
        cursor.execute("VACUUM (ANALYZE) accounts_journal")
        for name, sql in CHECKS.items():
            if "entr" in name:  # the checks of entries and balance_after
                cursor.execute(sql)
                if cursor.fetchone() is not None:
                    raise RuntimeError(f"Generated entries break a ledger rule: {name}")
    return time.perf_counter() - started


# Holds, for the pending balance at an instant: `count` more card authorization holds, after
# every hold already there, drawn over the accounts as the entries are; hold k placed at
# `oldest + (k - have) * step`, living 1 minute to 7 days: closed (released) then, or still
# active when that is after now. Inserted with the triggers off, then accounts_holdchange (the
# pending balance's steps, accounts 0023) is made anew from every hold by the migration's own
# backfill, when the table exists (a checkout before it sums the holds instead).
INSERT_HOLDS = """
INSERT INTO accounts_hold
    (id, institution_id, account_id, amount, captured_amount, currency, status, purpose, reason,
     expires_at, created_at, updated_at, closed_at, metadata)
SELECT 'hold_bench_' || lpad(k::text, 9, '0'), %(institution)s, numbered.id, amount, 0,
       %(currency)s, CASE WHEN closed_at IS NULL THEN 'active' ELSE 'released' END,
       'card_authorization', '', at + interval '7 days', at, coalesce(closed_at, at), closed_at,
       '{}'::jsonb
  FROM (SELECT k, n, at, amount, CASE WHEN at + life <= now() THEN at + life END AS closed_at
          FROM (SELECT k, 1 + floor(random() * 5000)::bigint AS amount,
                       %(oldest)s::timestamptz + (k - %(have)s) * %(step)s::interval AS at,
                       interval '1 minute' + random() * interval '7 days' AS life,
                       CASE WHEN r < %(busy_share)s THEN 1
                            WHEN r < %(busy_share)s + %(new_share)s THEN 2
                            ELSE 3 + floor(random() * (%(accounts)s - 2))::int END AS n
                  FROM (SELECT k, random() AS r
                          FROM generate_series(%(have)s + 1, %(have)s + %(count)s) AS k) AS raw
               ) AS drawn) AS timed
  JOIN (SELECT id, row_number() OVER (ORDER BY id) AS n
          FROM accounts_account
         WHERE institution_id = %(institution)s AND kind = 'customer') AS numbered USING (n)
 ORDER BY k
"""


def insert_holds(institution, count: int, args, oldest: datetime, span: timedelta) -> float:
    """`count` more holds (see INSERT_HOLDS) over `span` from `oldest`, their pending steps made
    anew; then VACUUM ANALYZE. Returns the seconds taken."""
    import importlib

    from django.db import connection

    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM accounts_hold")
        have = cursor.fetchone()[0]
        params = {
            "institution": institution.pk,
            "currency": CURRENCY,
            "have": have,
            "count": count,
            "oldest": oldest,
            "step": span / max(count, 1),
            "busy_share": args.busy_share,
            "new_share": args.new_share,
            "accounts": args.accounts,
        }
        cursor.execute("SET session_replication_role = replica")
        try:
            cursor.execute(INSERT_HOLDS, params)
        finally:
            cursor.execute("SET session_replication_role = origin")
        cursor.execute("VACUUM (ANALYZE) accounts_hold")
        cursor.execute("SELECT to_regclass('accounts_holdchange') IS NOT NULL")
        if cursor.fetchone()[0]:
            migration = importlib.import_module("accounts.migrations.0023_hold_changes")
            cursor.execute("TRUNCATE accounts_holdchange")
            cursor.execute(migration.BACKFILL)
            cursor.execute("VACUUM (ANALYZE) accounts_holdchange")
    return time.perf_counter() - started


def hold_count() -> int:
    from accounts.models import Hold

    return Hold.objects.count()


def entry_count() -> int:
    from accounts.models import Entry

    return Entry.objects.count()


def measure_balances(api_key: str, accounts: dict[str, str], args) -> dict:
    """Per (account label, instant): GET /TX/v2/accounts/{id}/balances?at= latencies (ms), its
    entry lookup SQL and its pending balance SQL (of the holds, or of their steps) and their
    own timings (ms). The answer is checked against a replay (the sum of the account's entries
    up to the instant; of its holds placed by then and not closed then) before timing."""
    from django.db import connection
    from django.db.models import Max, Min, Q, Sum
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from accounts.models import Entry, Hold
    from api.context import iso_millis

    client = Client(SERVER_NAME="127.0.0.1", REMOTE_ADDR="127.0.0.1")
    headers = {"x-api-key": api_key}
    cases = {}
    for label, account_id in accounts.items():
        span = Entry.objects.filter(account_id=account_id).aggregate(
            first=Min("created_at"), last=Max("created_at")
        )
        if span["first"] is None:
            continue
        instants = {
            "at middle": span["first"] + (span["last"] - span["first"]) / 2,
            "at now": datetime.now(UTC),
        }
        for name, instant in instants.items():
            path = f"/TX/v2/accounts/{account_id}/balances?{urlencode({'at': iso_millis(instant)})}"
            with CaptureQueriesContext(connection) as captured:
                response = client.get(path, headers=headers)
            if response.status_code != 200:
                raise RuntimeError(f"{path}: {response.status_code} {response.content!r}")
            at = datetime.fromisoformat(response.json()["at"])
            replay = sum(
                entry.signed_amount
                for entry in Entry.objects.filter(account_id=account_id, created_at__lte=at)
            )
            if response.json()["posted"] != replay:
                raise RuntimeError(f"{path}: posted {response.json()['posted']}, replay {replay}")
            held = (
                Hold.objects.filter(account_id=account_id, created_at__lte=at)
                .filter(Q(closed_at__isnull=True) | Q(closed_at__gt=at))
                .aggregate(total=Sum("amount"))["total"]
                or 0
            )
            if response.json()["pending"] != held:
                raise RuntimeError(f"{path}: pending {response.json()['pending']}, replay {held}")
            lookup = [
                q["sql"] for q in captured.captured_queries if 'FROM "accounts_entry"' in q["sql"]
            ]
            if len(lookup) != 1:
                raise RuntimeError(f"{path}: expected one entry lookup, got {lookup}")
            pending = [
                q["sql"] for q in captured.captured_queries if 'FROM "accounts_hold' in q["sql"]
            ]
            if len(pending) != 1:
                raise RuntimeError(f"{path}: expected one pending balance query, got {pending}")
            cases[label, name] = {
                "path": path,
                "sql": lookup[0],
                "pending_sql": pending[0],
                "pending": response.json()["pending"],
                "times": [],
                "sql_times": [],
                "pending_sql_times": [],
            }
    for _ in range(5):
        for case in cases.values():
            client.get(case["path"], headers=headers)
    for _ in range(args.repeat):
        for case in cases.values():
            started = time.perf_counter()
            response = client.get(case["path"], headers=headers)
            case["times"].append((time.perf_counter() - started) * 1000)
            if response.status_code != 200:
                raise RuntimeError(f"{case['path']}: {response.status_code}")
    with connection.cursor() as cursor:
        for _ in range(sql_repeat(args)):
            for case in cases.values():
                for sql, times in (
                    (case["sql"], case["sql_times"]),
                    (case["pending_sql"], case["pending_sql_times"]),
                ):
                    started = time.perf_counter()
                    cursor.execute(sql)
                    cursor.fetchall()
                    times.append((time.perf_counter() - started) * 1000)
    for case in cases.values():
        case["times"].sort()
        case["sql_times"].sort()
        case["pending_sql_times"].sort()
        case["plan"], case["tree"] = explain(case["sql"])
        case["pending_plan"], case["pending_tree"] = explain(case["pending_sql"])
    return cases


# --- The query shapes


def shapes(account_id: str, limit: int, today) -> dict[str, dict]:
    """name -> query parameters. The cursors are the `nextCursor`s paging would give: half-way
    down the account's lines, and at its tenth-oldest line (the last page: nine lines, no more)."""
    from accounts.models import StatementLine
    from api.pagination import encode_cursor

    ids = list(
        StatementLine.objects.filter(account_id=account_id)
        .order_by("-pk")
        .values_list("pk", flat=True)
    ) or ["txn_" + "Z" * 26]  # no lines: a cursor past every id
    week_from = today - timedelta(days=30)
    return {
        "first page": {"limit": limit},
        "deep cursor": {"limit": limit, "cursor": encode_cursor(ids[len(ids) // 2])},
        "last page": {"limit": limit, "cursor": encode_cursor(ids[-min(10, len(ids))])},
        "type=CashDec": {"limit": limit, "type": "CashDec"},
        "Unsettled": {"limit": limit, "settlementStatus": "Unsettled"},
        "one week": {
            "limit": limit,
            "fromDate": week_from.isoformat(),
            "toDate": (week_from + timedelta(days=6)).isoformat(),
        },
    }


def check_page(name: str, params: dict, body: dict) -> None:
    """The page honours its filters (a benchmark of wrong answers measures nothing)."""
    from api.pagination import _decode

    for item in body["data"]:
        wrong = (
            ("type" in params and item["type"] != params["type"])
            or (
                "settlementStatus" in params
                and item["settlementStatus"] != params["settlementStatus"]
            )
            or ("cursor" in params and item["transactionId"] >= _decode(params["cursor"]))
            or ("fromDate" in params and item["createdAt"][:10] < params["fromDate"])
            or ("toDate" in params and item["createdAt"][:10] > params["toDate"])
        )
        if wrong:
            raise RuntimeError(f"{name}: a line outside the filter {params}: {item}")
    ids = [item["transactionId"] for item in body["data"]]
    if ids != sorted(ids, reverse=True):
        raise RuntimeError(f"{name}: lines not newest first")


# --- Measuring one size


def measure(api_key: str, accounts: dict[str, str], args, today) -> dict:
    """Per (account label, shape): request latencies (ms), the listing SQL, its own timings
    (ms), the page's size. Rounds interleave the shapes so that noise falls on all alike."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(SERVER_NAME="127.0.0.1", REMOTE_ADDR="127.0.0.1")
    headers = {"x-api-key": api_key}
    cases = {}
    for label, account_id in accounts.items():
        for name, params in shapes(account_id, args.limit, today).items():
            path = f"/TX/v2/accounts/{account_id}/transactions?{urlencode(params)}"
            with CaptureQueriesContext(connection) as captured:
                response = client.get(path, headers=headers)
            if response.status_code != 200:
                raise RuntimeError(f"{path}: {response.status_code} {response.content!r}")
            body = response.json()
            check_page(name, params, body)
            listing = [q["sql"] for q in captured.captured_queries if f'FROM "{TABLE}"' in q["sql"]]
            if len(listing) != 1:
                raise RuntimeError(f"{path}: expected one listing query, got {listing}")
            cases[label, name] = {
                "path": path,
                "sql": listing[0],
                "rows": len(body["data"]),
                "statements": len(captured.captured_queries),
                "times": [],
                "sql_times": [],
            }
    for _ in range(5):  # warm-up: caches, the connection, Python's first calls
        for case in cases.values():
            client.get(case["path"], headers=headers)
    for _ in range(args.repeat):
        for case in cases.values():
            started = time.perf_counter()
            response = client.get(case["path"], headers=headers)
            elapsed = time.perf_counter() - started
            if response.status_code != 200:
                raise RuntimeError(f"{case['path']}: {response.status_code}")
            case["times"].append(elapsed * 1000)
    with connection.cursor() as cursor:
        for _ in range(sql_repeat(args)):
            for case in cases.values():
                started = time.perf_counter()
                cursor.execute(case["sql"])
                cursor.fetchall()
                case["sql_times"].append((time.perf_counter() - started) * 1000)
    for case in cases.values():
        case["times"].sort()
        case["sql_times"].sort()
        case["plan"], case["tree"] = explain(case["sql"])
    return cases


def sql_repeat(args) -> int:
    return max(10, args.repeat // 4)


def explain(sql: str) -> tuple[str, dict]:
    """EXPLAIN (ANALYZE, BUFFERS) of `sql`: as text (to print) and as JSON (to check)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql)
        text = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql)
        tree = cursor.fetchone()[0]
    return text, (json.loads(tree) if isinstance(tree, str) else tree)[0]["Plan"]


def plan_nodes(node: dict):
    yield node
    for child in node.get("Plans", []):
        yield from plan_nodes(child)


def plan_summary(node: dict) -> str:
    """'Limit > Index Scan txn_account_idx', the plan's nodes top down."""
    return " > ".join(
        " ".join(filter(None, [n["Node Type"], n.get("Index Name")])) for n in plan_nodes(node)
    )


def plan_problems(node: dict, table: str = TABLE) -> list[str]:
    """What makes a page's cost grow with the table: a sequential scan of it, a sort of many
    rows, many rows read and thrown away."""
    problems = []
    for n in plan_nodes(node):
        if n["Node Type"] == "Seq Scan" and n.get("Relation Name") == table:
            problems.append(f"Seq Scan on {table} ({n['Actual Rows']:.0f} rows)")
        if n["Node Type"] in ("Sort", "Incremental Sort"):
            rows = max((c["Actual Rows"] for c in n.get("Plans", [])), default=0)
            if rows >= MANY_ROWS:
                problems.append(f"{n['Node Type']} of {rows:.0f} rows")
        removed = n.get("Rows Removed by Filter", 0) + n.get("Rows Removed by Index Recheck", 0)
        if removed >= MANY_ROWS:
            problems.append(f"{removed:.0f} rows removed by a filter in {n['Node Type']}")
    return problems


# --- The run


def main():
    args = parse_args()
    own = urlsplit(os.environ.get("DATABASE_URL", "")).path.strip("/")
    if own == DATABASE:
        sys.exit(f"DATABASE_URL names {own}, which this benchmark drops; use another database.")
    run_started = time.monotonic()
    admin_url = server_url()
    url = with_database(admin_url, DATABASE)
    where = conninfo_to_dict(admin_url)
    origin = "DATABASE_URL's" if os.environ.get("DATABASE_URL") else "the embedded"
    print(f"PostgreSQL: {origin} server, host {where.get('host')} port {where.get('port', 5432)}")
    print(f"Database: {DATABASE}, made anew")
    recreate_database(admin_url, DATABASE)
    os.environ.update(service_environment(url, rate_limit=0))
    migrate()
    import django

    django.setup()
    logging.disable(logging.INFO)  # the access line of every in-process request
    warnings.filterwarnings("ignore", message="No directory at")  # whitenoise: no collectstatic
    from django.db import connection, connections

    from accounts.models import Hold

    with connection.cursor() as cursor:
        cursor.execute("SELECT version()")
        print(f"Server: {cursor.fetchone()[0].split(' on ')[0]}")

    institution, api_key, account_ids = create_tenant(args.accounts)
    accounts = {
        "busy": account_ids[0],
        "new": account_ids[1],
        "quiet": account_ids[len(account_ids) // 2],
    }
    print(
        f"Data: 1 institution, 1 API key (127.0.0.1/32), {len(account_ids)} accounts; lines over "
        f"the last {args.days} days: {args.busy_share:.0%} on the busy account, "
        f"{args.new_share:.0%} on the new one (opened {args.new_days} days ago), the rest spread "
        "evenly over the others"
    )
    print("Timing: in this process, django.test.Client, production settings, rate limit OFF")
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"Machine: {os.cpu_count()} cores, load average {load} (other work skews results)")

    now = datetime.now(UTC)
    newest_ms = int(now.timestamp() * 1000)
    results, facts, balances = {}, {}, {}
    for size in (args.small, args.large):
        have = table_facts()["lines"]
        seconds = insert_lines(institution, size - have, args, newest_ms)
        check_ids()
        facts[size] = table_facts() | {label: lines_of(a) for label, a in accounts.items()}
        print(
            f"\n{size:,} lines: inserted {size - have:,} and VACUUM ANALYZE in {seconds:.1f} s; "
            f"table {facts[size]['table']}, indexes {facts[size]['indexes']}; lines of the busy "
            f"account {facts[size]['busy']:,}, the new {facts[size]['new']:,}, the quiet "
            f"{facts[size]['quiet']:,}"
        )
        print(
            f"Timing {args.repeat} rounds of one request per case, then each case's listing SQL "
            f"alone {sql_repeat(args)} times ..."
        )
        results[size] = measure(api_key, accounts, args, now.date())
        # Ledger entries: the first size over the period before the lines' (10 k older ones),
        # the second after them, up to now (entries only append, in time order per account).
        period = timedelta(days=args.days)
        oldest = now - 2 * period if size == args.small else now - period
        added = size - entry_count()
        seconds = insert_entries(institution, added, args, oldest, period)
        print(
            f"{entry_count():,} ledger entries: inserted {added:,} with their balance_after and "
            f"VACUUM ANALYZE in {seconds:.1f} s"
        )
        # Holds, a quarter as many as entries (a card account's authorizations), over the same
        # period: the busy account's share of them is its pending balance's history.
        added = size // 4 - hold_count()
        seconds = insert_holds(institution, added, args, oldest, period)
        busy_holds = Hold.objects.filter(account_id=accounts["busy"]).count()
        print(
            f"{hold_count():,} holds: inserted {added:,} (closed 1 minute to 7 days after "
            f"placed) and VACUUM ANALYZE in {seconds:.1f} s; the busy account's {busy_holds:,}; "
            "timing GET .../balances?at= ..."
        )
        balances[size] = measure_balances(api_key, accounts, args)

    small, large = results[args.small], results[args.large]
    tag = {args.small: human(args.small), args.large: human(args.large)}
    failures = []
    print(f"\n== GET /TX/v2/accounts/{{accountId}}/transactions, limit {args.limit} ==")
    print(
        f"rows: the page's lines at {tag[args.small]}/{tag[args.large]}; request ms p50 / p95 at "
        f"each size and the p50 ratio {tag[args.large]}/{tag[args.small]}; SQL ms: the listing "
        "statement alone (round trip), p50, and its ratio."
    )
    header = (
        f"{'account':7} {'shape':13} {'rows':>7}  {tag[args.small] + ' p50/p95':>15}  "
        f"{tag[args.large] + ' p50/p95':>15}  {'ratio':>5}  {'SQL ' + tag[args.small]:>8}  "
        f"{'SQL ' + tag[args.large]:>8}  {'ratio':>5}"
    )
    print(header)
    print("-" * len(header))
    for key, case in large.items():
        before = small[key]
        ratio = percentile(case["times"], 0.5) / percentile(before["times"], 0.5)
        sql_ratio = percentile(case["sql_times"], 0.5) / percentile(before["sql_times"], 0.5)
        print(
            f"{key[0]:7} {key[1]:13} {before['rows']:>3}/{case['rows']:<3}  "
            f"{percentile(before['times'], 0.5):6.2f} / {percentile(before['times'], 0.95):6.2f}  "
            f"{percentile(case['times'], 0.5):6.2f} / {percentile(case['times'], 0.95):6.2f}  "
            f"{ratio:5.2f}  {percentile(before['sql_times'], 0.5):8.3f}  "
            f"{percentile(case['sql_times'], 0.5):8.3f}  {sql_ratio:5.2f}"
        )
        # Both: a request's ratio alone also moves with the page's length (the quiet account's
        # pages are short at 10 k), the SQL's alone with sub-millisecond noise.
        if ratio > args.max_ratio and sql_ratio > args.max_ratio:
            failures.append(
                f"{key[0]} {key[1]}: p50 ratios {ratio:.2f} (request) and {sql_ratio:.2f} (SQL) "
                f"> {args.max_ratio:g}"
            )
        for problem in plan_problems(case["tree"]):
            failures.append(f"{key[0]} {key[1]}: plan at {tag[args.large]}: {problem}")
    statements = sorted({case["statements"] for case in large.values()})
    print(f"SQL statements per request: {', '.join(map(str, statements))} (listing included)")

    print(
        f"\n== GET /TX/v2/accounts/{{accountId}}/balances?at=, entries {tag[args.small]}/"
        f"{tag[args.large]} =="
    )
    print(header.replace("shape        ", "instant      ").replace("   rows", "       "))
    print("-" * len(header))
    for key, case in balances[args.large].items():
        before = balances[args.small].get(key)
        if before is None:
            continue
        ratio = percentile(case["times"], 0.5) / percentile(before["times"], 0.5)
        sql_ratio = percentile(case["sql_times"], 0.5) / percentile(before["sql_times"], 0.5)
        print(
            f"{key[0]:7} {key[1]:13} {'':7}  "
            f"{percentile(before['times'], 0.5):6.2f} / {percentile(before['times'], 0.95):6.2f}  "
            f"{percentile(case['times'], 0.5):6.2f} / {percentile(case['times'], 0.95):6.2f}  "
            f"{ratio:5.2f}  {percentile(before['sql_times'], 0.5):8.3f}  "
            f"{percentile(case['sql_times'], 0.5):8.3f}  {sql_ratio:5.2f}"
        )
        print(f"{'':21} plan: {plan_summary(case['tree'])}")
        if ratio > args.max_ratio and sql_ratio > args.max_ratio:
            failures.append(
                f"{key[0]} {key[1]}: balances?at= p50 ratios {ratio:.2f} (request) and "
                f"{sql_ratio:.2f} (SQL) > {args.max_ratio:g}"
            )
        for problem in plan_problems(case["tree"], "accounts_entry"):
            failures.append(f"{key[0]} {key[1]}: balances?at= plan: {problem}")

    print(
        f"\n== The pending balance's SQL alone (of GET .../balances?at=), {tag[args.small]}/"
        f"{tag[args.large]} =="
    )
    print(f"{'account':7} {'instant':13} {'pending':>18}  {'SQL p50 ms':>17}  {'ratio':>5}  plan")
    for key, case in balances[args.large].items():
        before = balances[args.small].get(key)
        if before is None:
            continue
        small_ms = percentile(before["pending_sql_times"], 0.5)
        large_ms = percentile(case["pending_sql_times"], 0.5)
        print(
            f"{key[0]:7} {key[1]:13} {before['pending']:>8}/{case['pending']:<9}  "
            f"{small_ms:7.3f}/{large_ms:<9.3f}  {large_ms / small_ms:5.2f}  "
            f"{plan_summary(case['pending_tree'])}"
        )
        if large_ms / small_ms > args.max_ratio:
            failures.append(
                f"{key[0]} {key[1]}: the pending balance's SQL p50 ratio {large_ms / small_ms:.2f}"
                f" > {args.max_ratio:g}"
            )
        for table in ("accounts_hold", "accounts_holdchange"):
            for problem in plan_problems(case["pending_tree"], table):
                failures.append(f"{key[0]} {key[1]}: pending balance plan: {problem}")
    busy_now = balances[args.large].get(("busy", "at now"))
    if busy_now is not None:
        print(f"\n-- busy account, at now, at {tag[args.large]}: the pending balance's SQL")
        print("FROM " + re.sub(r"\s+", " ", busy_now["pending_sql"].split(" FROM ", 1)[1]))
        print(busy_now["pending_plan"])

    print("\n== Plans (nodes top down) ==")
    for key, case in large.items():
        print(f"{key[0]:7} {key[1]:13} {tag[args.small]:>3}: {plan_summary(small[key]['tree'])}")
        print(f"{'':21} {tag[args.large]:>3}: {plan_summary(case['tree'])}")

    print(f"\n== Plans at {tag[args.large]} lines: EXPLAIN (ANALYZE, BUFFERS) ==")
    for key, case in large.items():
        print(f"\n-- {key[0]} account, {key[1]}: ?{case['path'].split('?')[1]}")
        print("FROM " + re.sub(r"\s+", " ", case["sql"].split(" FROM ", 1)[1]))
        print(case["plan"])

    connections.close_all()
    print(f"\nWhole run: {time.monotonic() - run_started:.0f} s")
    if failures:
        print("\nNOT within a constant factor, or a plan to look at (bench/README.md, 'Findings'):")
        for failure in failures:
            print(f"  {failure}")
    else:
        print(
            f"\nEvery case within {args.max_ratio:g}x (p50 of the request or of its SQL, "
            f"{tag[args.small]} -> {tag[args.large]}), no plan reading, sorting or discarding "
            f"{MANY_ROWS} rows or more."
        )
    if args.drop:
        drop_database(admin_url, DATABASE)
        print(f"Dropped {DATABASE}.")
    else:
        print(f"Left {DATABASE} in place (the next run makes it anew); --drop removes it.")
    sys.exit(1 if failures else 0)


def human(count: int) -> str:
    for unit, name in ((1_000_000, "M"), (1_000, "k")):
        if count >= unit and count % unit == 0:
            return f"{count // unit}{name}"
    return str(count)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("Interrupted.")
