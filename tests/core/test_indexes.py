"""What the database indexes, and that nothing else is written on every insert.

`core.postgresql` makes no `_like` index (`varchar_pattern_ops`) and
core/migrations/0001_no_like_indexes.py dropped the old ones; the statement-line table, written
by every posting, keeps exactly the indexes its reads use (bench/README.md).
"""

import pytest
from django.db import connection

from accounts.models import Transaction

pytestmark = pytest.mark.django_db

OUR_APPS = {
    "api",
    "events",
    "customers",
    "accounts",
    "cards",
    "monitoring",
    "transactions",
    "transfers",
    "authorizations",
    "webhooks",
}


def indexes(table: str) -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes"
            " WHERE schemaname = current_schema() AND tablename = %s",
            [table],
        )
        return dict(cursor.fetchall())


def test_no_pattern_ops_index_on_our_tables():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tablename, indexname FROM pg_indexes WHERE schemaname = current_schema()"
            " AND indexdef ~ '(varchar|text)_pattern_ops'"
        )
        found = [row for row in cursor.fetchall() if row[0].split("_")[0] in OUR_APPS]
    assert found == []


def test_the_statement_line_table_keeps_only_the_indexes_its_reads_use():
    assert sorted(indexes(Transaction._meta.db_table)) == [
        "transactions_transaction_pkey",
        "txn_account_idx",
        "txn_account_status_idx",
        "txn_account_type_idx",
        "txn_adjustment_idx",
        "txn_authorization_idx",
        "txn_card_idx",
        "txn_card_return_idx",
        "txn_fee_idx",  # partial: only fee lines (the admin's lines of a fee, docs/fees.md)
        "txn_hold_idx",
        "txn_journal_idx",
        "txn_transfer_idx",
    ]


@pytest.mark.parametrize(
    ("lookup", "index"),
    [
        ({"account_id": "acc_x"}, "txn_account_"),  # any of the three per-account indexes
        ({"hold_id": "hld_x"}, "txn_hold_idx"),
        ({"transfer_id": "trf_x"}, "txn_transfer_idx"),
        ({"journal_id": "jnl_x"}, "txn_journal_idx"),
        ({"card_return_id": "ret_x"}, "txn_card_return_idx"),
        ({"adjustment_id": "adj_x"}, "txn_adjustment_idx"),
        ({"authorization_id": "aut_x"}, "txn_authorization_idx"),
        ({"fee_id": "fee_x"}, "txn_fee_idx"),
    ],
)
def test_every_lookup_of_statement_lines_has_its_index(lookup, index):
    query = Transaction.objects.filter(**lookup).order_by().values("pk")
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        plan = query.explain()
    assert index in plan, plan
