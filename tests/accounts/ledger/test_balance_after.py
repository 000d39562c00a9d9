"""Each entry stores its account's posted balance after it (`balance_after`, issue 15;
docs/balances-at-an-instant.md).

Proven here: the ledger rule (accounts/sql/balance_after.sql) refuses, in raw SQL, an entry
whose balance_after is not the account's previous entry's plus its signed amount (a first
entry: its signed amount) and moves an entry created before the account's previous entry to
that entry's instant; `tx_post` (through `post()`) and `tx_post_many` write the running
balances, the same account several times in one `tx_post_many` call included, refused items
skipped; `verify_ledger` finds a balance_after corrupted behind the rule's back.
"""

from datetime import timedelta

import psycopg.errors
import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from accounts.models import Entry
from accounts.posting import credit, debit, journal_new, post
from accounts.verification import ledger_breaches

from .helpers import assert_ledger_ok, balance, fresh
from .helpers import bank as ledger_bank
from .test_posting_many import item, tx_post_many

pytestmark = pytest.mark.django_db


@pytest.fixture
def bank():
    return ledger_bank()


def execute(sql, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def insert_entry(journal_id, account, direction, amount, balance_after, created_at=None):
    execute(
        "INSERT INTO accounts_entry (journal_id, account_id, direction, amount, currency, "
        "created_at, balance_after) VALUES (%s, %s, %s, %s, 'EUR', %s, %s)",
        [journal_id, account.pk, direction, amount, created_at or timezone.now(), balance_after],
    )


def insert_journal(bank, journal_id):
    execute(
        "INSERT INTO accounts_journal (id, institution_id, kind, description, created_at) "
        "VALUES (%s, %s, 'transfer', '', now())",
        [journal_id, bank.fi.pk],
    )


def refused(insert) -> psycopg.errors.Error:
    with pytest.raises(IntegrityError) as excinfo:
        with transaction.atomic():
            insert()
    error = excinfo.value.__cause__
    assert isinstance(error, psycopg.errors.CheckViolation)
    return error


def last_entry(account) -> Entry:
    return Entry.objects.filter(account=account).latest("id")


def balances_after(account) -> list[int]:
    return list(
        Entry.objects.filter(account=account).order_by("id").values_list("balance_after", flat=True)
    )


# --- The ledger rule, in raw SQL -----------------------------------------------------------------


@pytest.mark.parametrize("wrong", [699, 701, 1300, -300, None])
def test_an_entry_whose_balance_after_is_not_the_running_balance_is_refused(bank, wrong):
    insert_journal(bank, "jnl_wrong_after")
    error = refused(lambda: insert_entry("jnl_wrong_after", bank.account, "debit", 300, wrong))
    assert error.diag.message_primary == (
        f"entry on account {bank.account.pk} has balance_after "
        f"{'<NULL>' if wrong is None else wrong}, expected 700"
    )
    assert balances_after(bank.account) == [1000]
    insert_entry("jnl_wrong_after", bank.account, "debit", 300, 700)
    insert_entry("jnl_wrong_after", bank.empty, "credit", 300, 300)
    execute("UPDATE accounts_account SET posted = posted - 300 WHERE id = %s", [bank.account.pk])
    execute("UPDATE accounts_account SET posted = posted + 300 WHERE id = %s", [bank.empty.pk])
    assert balances_after(bank.account) == [1000, 700]
    assert_ledger_ok()


def test_a_first_entry_has_its_signed_amount_as_balance_after(bank):
    assert balances_after(bank.empty) == []
    insert_journal(bank, "jnl_first")
    error = refused(lambda: insert_entry("jnl_first", bank.empty, "credit", 50, 0))
    assert error.diag.message_primary.endswith("has balance_after 0, expected 50")
    insert_entry("jnl_first", bank.empty, "credit", 50, 50)
    insert_entry("jnl_first", bank.account, "debit", 50, 950)
    execute("UPDATE accounts_account SET posted = posted + 50 WHERE id = %s", [bank.empty.pk])
    execute("UPDATE accounts_account SET posted = posted - 50 WHERE id = %s", [bank.account.pk])
    assert balances_after(bank.empty) == [50]
    assert balances_after(bank.account) == [1000, 950]
    assert_ledger_ok()


def test_an_entry_created_before_the_accounts_previous_entry_is_moved_to_its_instant(bank):
    previous = last_entry(bank.account)
    insert_journal(bank, "jnl_late")
    insert_entry(
        "jnl_late", bank.account, "debit", 10, 990, created_at=previous.created_at - timedelta(1)
    )
    later = timezone.now() + timedelta(seconds=1)
    insert_entry("jnl_late", bank.empty, "credit", 10, 10, created_at=later)
    assert last_entry(bank.account).created_at == previous.created_at
    assert last_entry(bank.empty).created_at == later


# --- tx_post and tx_post_many write it ---------------------------------------------------------


def test_tx_post_writes_each_accounts_balance_after(bank):
    journal = journal_new(institution_id=bank.fi.pk, kind="transfer")
    post(
        institution_id=bank.fi.pk,
        currency="EUR",
        moves=[debit(bank.account.pk, 300), credit(bank.empty.pk, 200), credit(bank.other.pk, 100)],
        journal=journal,
    )
    assert balances_after(bank.account) == [1000, 700]
    assert balances_after(bank.empty) == [200]
    assert balances_after(bank.other) == [100]
    assert balances_after(bank.funding) == [-1000]
    assert_ledger_ok()


@pytest.mark.parametrize("atomic", [True, False])
def test_tx_post_many_writes_running_balances_of_an_account_in_several_items(bank, atomic):
    items = [
        item(bank, bank.account, bank.empty, 100),
        item(bank, bank.empty, bank.other, 60),
        item(bank, bank.account, bank.empty, 250),
        item(bank, bank.other, bank.account, 10),
        item(bank, bank.empty, bank.account, 290),
    ]
    assert tx_post_many(bank.fi.pk, items, atomic=atomic) == []
    assert balances_after(bank.account) == [1000, 900, 650, 660, 950]
    assert balances_after(bank.empty) == [100, 40, 290, 0]
    assert balances_after(bank.other) == [60, 50]
    for account in (bank.account, bank.empty, bank.other):
        assert last_entry(account).balance_after == fresh(account).posted
    assert_ledger_ok()


def test_tx_post_many_skips_refused_items_in_the_running_balances(bank):
    items = [
        item(bank, bank.account, bank.empty, 600),
        item(bank, bank.account, bank.other, 500),  # refused: 400 available
        item(bank, bank.account, bank.other, 400),
    ]
    refusals = tx_post_many(bank.fi.pk, items, atomic=False)
    assert [one["index"] for one in refusals] == [1]
    assert balances_after(bank.account) == [1000, 400, 0]
    assert balances_after(bank.other) == [400]
    assert balance(bank.account) == (0, 0, 0)
    assert_ledger_ok()


# --- verify_ledger ----------------------------------------------------------------------------


def test_verify_ledger_finds_a_corrupted_balance_after(bank):
    post(
        institution_id=bank.fi.pk,
        currency="EUR",
        moves=[debit(bank.account.pk, 300), credit(bank.empty.pk, 300)],
        journal=journal_new(institution_id=bank.fi.pk, kind="transfer"),
    )
    assert_ledger_ok()
    first = Entry.objects.filter(account=bank.account).earliest("id")
    # Behind the rules' back (append-only and balance_after triggers off for this session).
    execute("SET LOCAL session_replication_role = replica")
    execute("UPDATE accounts_entry SET balance_after = 999 WHERE id = %s", [first.pk])
    execute("SET LOCAL session_replication_role = origin")
    breaches = {breach.check: breach.rows for breach in ledger_breaches()}
    assert breaches == {
        "entries whose balance_after is not the running sum of their account's entries": [
            (first.pk, bank.account.pk, 999, 1000)
        ]
    }
    last = last_entry(bank.account)
    execute("SET LOCAL session_replication_role = replica")
    execute("UPDATE accounts_entry SET balance_after = 701 WHERE id = %s", [last.pk])
    execute("SET LOCAL session_replication_role = origin")
    breaches = {breach.check: breach.rows for breach in ledger_breaches()}
    assert breaches["accounts whose posted balance is not their last entry's balance_after"] == [
        (bank.account.pk, 700, 701)
    ]
    assert (
        len(
            breaches[
                "entries whose balance_after is not the running sum of their account's entries"
            ]
        )
        == 2
    )


def test_verify_ledger_finds_entries_out_of_time_order(bank):
    last = last_entry(bank.account)
    execute("SET LOCAL session_replication_role = replica")
    execute(
        "UPDATE accounts_entry SET created_at = created_at - interval '1 day' WHERE id = %s",
        [last.pk],
    )
    execute("SET LOCAL session_replication_role = origin")
    assert ledger_breaches() == []  # one entry: nothing before it
    post(
        institution_id=bank.fi.pk,
        currency="EUR",
        moves=[debit(bank.account.pk, 300), credit(bank.empty.pk, 300)],
        journal=journal_new(institution_id=bank.fi.pk, kind="transfer"),
    )
    newest = last_entry(bank.account)
    execute("SET LOCAL session_replication_role = replica")
    execute(
        "UPDATE accounts_entry SET created_at = %s WHERE id = %s",
        [last.created_at - timedelta(days=2), newest.pk],
    )
    execute("SET LOCAL session_replication_role = origin")
    (breach,) = ledger_breaches()
    assert breach.check == "entries created before their account's previous entry"
    assert [row[0] for row in breach.rows] == [newest.pk]
