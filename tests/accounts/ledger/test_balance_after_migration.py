"""Migration accounts/0016_balance_after on a ledger written before it: the backfill gives
every entry the running sum of its account's entries in id order as `balance_after`, makes the
account's `created_at` non-decreasing in that order, and the rule holds for what is posted
after (the real migration executor, as tests/test_migrations_forward.py).

And migration accounts/0023_hold_changes on holds written before it (test_hold_changes.py has
the steps' rule): every existing hold gets its steps. One test takes the database back to
before 0016, forward to 0022 (the holds' rows written there), then to the latest: each trip
back unapplies and applies again every migration made since (80 of them, most of a minute of
the suite each), and the two migrations' worlds are separate accounts."""

from datetime import timedelta

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from accounts.models import Entry, Hold
from accounts.selectors import balance_at
from accounts.services import hold_capture, hold_release
from accounts.verification import ledger_breaches
from core.actors import SYSTEM
from transfers.services import transfer_create

from .helpers import fresh, institution, open_account
from .test_hold_changes import MS, US, place, replay, steps

BEFORE = ("accounts", "0015_two_phase_transfers")
BEFORE_HOLD_CHANGES = ("accounts", "0022_posting_many_journal_instant")


def migrate(targets) -> None:
    MigrationExecutor(connection).migrate(targets)
    ContentType.objects.clear_cache()


def execute(sql, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


@pytest.mark.django_db(transaction=True)
def test_the_backfill_gives_every_entry_its_running_balance_and_every_hold_its_steps():
    fi = institution()
    a, b = open_account(fi, balance=1000), open_account(fi)
    transfer_create(
        institution=fi, source=a, destination=b, amount=300, currency="EUR", actor=SYSTEM
    )
    first_of_a = Entry.objects.filter(account=a).earliest("id")
    held = open_account(institution(), balance=1000)
    other_held = open_account(held.institution, balance=1000)
    released, captured, active = place(held, 100), place(held, 200), place(held, 40)
    hold_release(hold=released)
    hold_capture(hold=Hold.objects.get(pk=captured.pk), amount=150)
    others = place(other_held, 300)
    released = Hold.objects.get(pk=released.pk)
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
        migrate([BEFORE_HOLD_CHANGES])
        with connection.cursor() as cursor:
            cursor.execute("SELECT to_regclass('accounts_holdchange')")
            assert cursor.fetchone() == (None,)
        # Written before the migration: a hold placed at the instant another closed, and one
        # whose close is recorded before its placing (it never counted).
        for hold_id, created, closed in (
            ("hold_same_instant", released.closed_at, released.closed_at + MS),
            ("hold_closed_first", released.closed_at + US, released.closed_at - US),
        ):
            execute(
                "INSERT INTO accounts_hold SELECT (jsonb_populate_record(NULL::accounts_hold, "
                "to_jsonb(h) || jsonb_build_object('id', %s::text, 'status', 'released', "
                "'created_at', %s::timestamptz, 'closed_at', %s::timestamptz))).* "
                "FROM accounts_hold h WHERE h.id = %s",
                [hold_id, created, closed, active.pk],
            )
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

    # accounts/0023: the holds written before it have their steps.
    holds = list(Hold.objects.filter(account=held))
    instants = {hold.created_at for hold in holds} | {h.closed_at for h in holds if h.closed_at}
    for instant in sorted(instants):
        for at in (instant - US, instant, instant + US):
            assert balance_at(account=held, at=at)[1] == replay(held, at), at
    assert balance_at(account=held, at=timezone.now())[1] == 40 == fresh(held).pending
    assert balance_at(account=other_held, at=timezone.now())[1] == 300
    assert steps(other_held) == [(others.pk, 300, 300, others.created_at)]
    # The rule writes the steps of what comes after.
    later = place(held, 60)
    assert steps(held)[-1] == (later.pk, 60, 100, later.created_at)
