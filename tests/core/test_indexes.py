"""What the database indexes, and that nothing else is written on every insert.

`core.postgresql` makes no `_like` index (`varchar_pattern_ops`) and
core/migrations/0001_no_like_indexes.py dropped the old ones; the tables every transfer writes
(statement lines, entries, transfers, events) keep exactly the indexes their reads use
(bench/README.md): a foreign key that leads a composite index has no index of its own.
"""

import pytest
from django.db import connection

from accounts.models import Entry, Transaction
from events.models import Event
from transfers.models import Transfer

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


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        (
            Entry,
            [
                "accounts_entry_journal_id_5f0eaa4f",
                "accounts_entry_pkey",
                "entry_account_at_idx",
                "entry_account_idx",
            ],
        ),
        (
            Transfer,
            [
                "transfer_destination_idx",
                "transfer_institution_idx",
                "transfer_reference_unique",
                "transfer_source_idx",
                "transfers_transfer_created_by_api_key_id_6344633f",
                "transfers_transfer_created_by_user_id_ee2ebfe2",
                "transfers_transfer_hold_id_key",
                "transfers_transfer_journal_id_key",
                "transfers_transfer_pkey",
            ],
        ),
        (
            Event,
            [
                "event_actor_idx",
                "event_institution_idx",
                "event_object_idx",
                "event_type_idx",
                "events_event_pkey",
            ],
        ),
    ],
)
def test_the_tables_a_transfer_writes_keep_only_the_indexes_their_reads_use(model, expected):
    assert sorted(indexes(model._meta.db_table)) == expected


@pytest.mark.parametrize(
    ("model", "lookup", "index"),
    [
        (Entry, {"account_id": "acc_x"}, "entry_account_"),
        (Transfer, {"institution_id": "fi_x"}, "transfer_"),  # its own index or the reference's
        (Transfer, {"source_account_id": "acc_x"}, "transfer_source_idx"),
        (Transfer, {"destination_account_id": "acc_x"}, "transfer_destination_idx"),
        (Event, {"institution_id": "fi_x"}, "event_"),  # any of the three per-institution ones
    ],
)
def test_a_foreign_key_without_its_own_index_is_still_looked_up_by_one(model, lookup, index):
    query = model.objects.filter(**lookup).order_by().values("pk")
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        plan = query.explain()
    assert index in plan, plan
