"""Migration accounts/0016_balance_after on a ledger written before it: the backfill gives
every entry the running sum of its account's entries in id order as `balance_after`, makes the
account's `created_at` non-decreasing in that order, and the rule holds for what is posted
after (the real migration executor, as tests/test_migrations_forward.py)."""

from datetime import timedelta

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor

from accounts.models import Entry
from accounts.verification import ledger_breaches
from core.actors import SYSTEM
from transfers.services import transfer_create

from .helpers import fresh, institution, open_account

BEFORE = ("accounts", "0015_two_phase_transfers")


def migrate(targets) -> None:
    MigrationExecutor(connection).migrate(targets)
    ContentType.objects.clear_cache()


def execute(sql, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


@pytest.mark.django_db(transaction=True)
def test_the_backfill_gives_every_entry_its_running_balance():
    fi = institution()
    a, b = open_account(fi, balance=1000), open_account(fi)
    transfer_create(
        institution=fi, source=a, destination=b, amount=300, currency="EUR", actor=SYSTEM
    )
    first_of_a = Entry.objects.filter(account=a).earliest("id")
    try:
        migrate([BEFORE])
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM information_schema.columns "
                "WHERE table_name = 'accounts_entry' AND column_name = 'balance_after'"
            )
            assert cursor.fetchone() == (0,)
        with transaction.atomic():  # the journal and its entries commit together
            # A posting that waited on the lock: written after a's last entry, dated before it.
            execute(
                "INSERT INTO accounts_journal (id, institution_id, kind, description, created_at) "
                "VALUES ('jnl_late', %s, 'transfer', '', %s)",
                [fi.pk, first_of_a.created_at - timedelta(seconds=5)],
            )
            for account, direction in ((a, "debit"), (b, "credit")):
                execute(
                    "INSERT INTO accounts_entry (journal_id, account_id, direction, amount, "
                    "currency, created_at) VALUES ('jnl_late', %s, %s, 50, 'EUR', %s)",
                    [account.pk, direction, first_of_a.created_at - timedelta(seconds=5)],
                )
            execute("UPDATE accounts_account SET posted = posted - 50 WHERE id = %s", [a.pk])
            execute("UPDATE accounts_account SET posted = posted + 50 WHERE id = %s", [b.pk])
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())

    entries = list(Entry.objects.filter(account=a).order_by("id"))
    assert [e.balance_after for e in entries] == [1000, 700, 650]
    assert [e.created_at for e in entries] == sorted(e.created_at for e in entries)
    assert entries[-1].created_at == entries[-2].created_at  # moved up to the previous one
    assert list(
        Entry.objects.filter(account=b).order_by("id").values_list("balance_after", flat=True)
    ) == [300, 350]
    assert ledger_breaches() == []

    # The rule and the posting functions are in place after the migration.
    transfer_create(
        institution=fi,
        source=fresh(a),
        destination=fresh(b),
        amount=600,
        currency="EUR",
        actor=SYSTEM,
    )
    assert Entry.objects.filter(account=a).latest("id").balance_after == 50
    assert ledger_breaches() == []
