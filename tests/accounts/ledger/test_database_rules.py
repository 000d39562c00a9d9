"""The ledger's database rules hold when Python is bypassed (docs/design.md section 7).

Raw SQL, `bulk_create`, `QuerySet.update()` and `.delete()` skip every service check; PostgreSQL
alone must refuse the write: the deferred trigger that balances journals (at commit, hence
`transaction=True`: these tests really commit), the entry-currency and append-only triggers
(`accounts/sql/ledger_rules.sql`), and the CHECK constraints of the models.
"""

from datetime import timedelta
from types import SimpleNamespace

import psycopg.errors
import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import Account, Adjustment, Entry, Hold, Journal, StatementLine
from accounts.services import hold_place
from accounts.verification import ledger_breaches
from core.actors import SYSTEM
from transfers.models import Transfer, TransferReversal
from transfers.services import transfer_create, transfer_reverse

from .helpers import GHS_PREPAID, balance, institution, internal, ledger_state, open_account

pytestmark = pytest.mark.django_db(transaction=True)

FUNDING = Account.InternalCode.FUNDING
EUR = {"currency": "EUR"}


@pytest.fixture
def books():
    """An institution with a loaded account (1000), an empty one, a hold, and a transfer of
    300 reversed by 100, all committed."""
    fi = institution()
    account = open_account(fi, balance=1000)
    other = open_account(fi)
    hold = hold_place(
        account=account,
        amount=200,
        currency="EUR",
        expires_at=timezone.now() + timedelta(days=1),
        actor=SYSTEM,
    )
    transfer = transfer_create(
        institution=fi, source=account, destination=other, amount=300, currency="EUR", actor=SYSTEM
    )
    reversal = transfer_reverse(transfer=transfer, amount=100, actor=SYSTEM)
    assert balance(account) == (800, 200, 600)
    assert balance(other) == (200, 0, 200)
    assert ledger_breaches() == []
    return SimpleNamespace(
        fi=fi,
        account=account,
        other=other,
        funding=internal(fi, FUNDING),
        hold=hold,
        transfer=transfer,
        reversal=reversal,
        adjustment=Adjustment.objects.get(account=account),
        line=StatementLine.objects.filter(account=account).first(),
        journal=transfer.journal,
    )


def pg_error(excinfo) -> psycopg.errors.Error:
    """The psycopg error behind Django's IntegrityError."""
    assert isinstance(excinfo.value, IntegrityError)
    return excinfo.value.__cause__


def execute(sql, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def insert_journal(fi, journal_id):
    execute(
        "INSERT INTO accounts_journal (id, institution_id, kind, description, created_at) "
        "VALUES (%s, %s, 'transfer', '', now())",
        [journal_id, fi.pk],
    )


def after(account, direction, amount) -> int:
    """The balance_after the ledger rule expects of the account's next entry
    (accounts/sql/balance_after.sql): its last entry's plus the signed amount."""
    last = (
        Entry.objects.filter(account=account).order_by("-id").values_list("balance_after").first()
    )
    return (last[0] if last else 0) + (amount if direction == "credit" else -amount)


def insert_entry(journal_id, account, direction, amount, currency="EUR"):
    execute(
        "INSERT INTO accounts_entry (journal_id, account_id, direction, amount, currency, "
        "created_at, balance_after) VALUES (%s, %s, %s, %s, %s, now(), %s)",
        [journal_id, account.pk, direction, amount, currency, after(account, direction, amount)],
    )


def entries_of(journal_id) -> int:
    return Entry.objects.filter(journal_id=journal_id).count()


# --- 1. A journal balances per currency, checked at commit -----------------------------------


def test_an_unbalanced_journal_in_raw_sql_is_refused_at_commit(books):
    before = ledger_state()
    with pytest.raises(IntegrityError) as excinfo:
        with transaction.atomic():
            insert_journal(books.fi, "jnl_raw_unbalanced")
            insert_entry("jnl_raw_unbalanced", books.account, "credit", 100)
            # Deferred: the statement passed, the row is there until the commit.
            assert entries_of("jnl_raw_unbalanced") == 1
    error = pg_error(excinfo)
    assert isinstance(error, psycopg.errors.CheckViolation)
    assert error.diag.message_primary == (
        "journal jnl_raw_unbalanced does not balance in EUR: its entries sum to 100"
    )
    assert ledger_state() == before
    assert not Journal.objects.filter(pk="jnl_raw_unbalanced").exists()


def test_a_journal_without_entries_is_refused_at_commit(books):
    before = ledger_state()
    with pytest.raises(IntegrityError) as excinfo:
        with transaction.atomic():
            insert_journal(books.fi, "jnl_raw_empty")
            assert Journal.objects.filter(pk="jnl_raw_empty").exists()
    error = pg_error(excinfo)
    assert isinstance(error, psycopg.errors.CheckViolation)
    assert error.diag.message_primary == "journal jnl_raw_empty has no entries"
    assert ledger_state() == before
    assert not Journal.objects.filter(pk="jnl_raw_empty").exists()


def test_an_unbalanced_journal_from_bulk_create_is_refused_at_commit(books):
    before = ledger_state()
    with pytest.raises(IntegrityError) as excinfo:
        with transaction.atomic():
            journal = Journal.objects.create(institution=books.fi, kind=Journal.Kind.TRANSFER)
            Entry.objects.bulk_create(
                [
                    Entry(
                        journal=journal,
                        account=books.funding,
                        direction="debit",
                        amount=90,
                        currency="EUR",
                        balance_after=after(books.funding, "debit", 90),
                    ),
                    Entry(
                        journal=journal,
                        account=books.account,
                        direction="credit",
                        amount=100,
                        currency="EUR",
                        balance_after=after(books.account, "credit", 100),
                    ),
                ],
            )
            journal_id = journal.pk
            assert entries_of(journal_id) == 2
    error = pg_error(excinfo)
    assert isinstance(error, psycopg.errors.CheckViolation)
    assert error.diag.message_primary == (
        f"journal {journal_id} does not balance in EUR: its entries sum to 10"
    )
    assert ledger_state() == before


def test_a_journal_balances_per_currency_not_in_total(books):
    ghs = open_account(books.fi, product=GHS_PREPAID)
    before = ledger_state()
    with pytest.raises(IntegrityError) as excinfo:
        with transaction.atomic():
            insert_journal(books.fi, "jnl_two_currencies")
            insert_entry("jnl_two_currencies", books.account, "credit", 100, "EUR")
            insert_entry("jnl_two_currencies", ghs, "debit", 100, "GHS")
    error = pg_error(excinfo)
    assert isinstance(error, psycopg.errors.CheckViolation)
    assert error.diag.message_primary in {
        "journal jnl_two_currencies does not balance in EUR: its entries sum to 100",
        "journal jnl_two_currencies does not balance in GHS: its entries sum to -100",
    }
    assert ledger_state() == before


def test_a_balanced_journal_inserted_leg_by_leg_commits(books):
    with transaction.atomic():
        insert_journal(books.fi, "jnl_raw_balanced")
        insert_entry("jnl_raw_balanced", books.funding, "debit", 70)
        insert_entry("jnl_raw_balanced", books.account, "credit", 40)
        insert_entry("jnl_raw_balanced", books.other, "credit", 30)
        Account.objects.filter(pk=books.funding.pk).update(posted=F("posted") - 70)
        Account.objects.filter(pk=books.account.pk).update(posted=F("posted") + 40)
        Account.objects.filter(pk=books.other.pk).update(posted=F("posted") + 30)
    assert entries_of("jnl_raw_balanced") == 3
    assert balance(books.account) == (840, 200, 640)
    assert balance(books.other) == (230, 0, 230)
    assert ledger_breaches() == []


def test_a_balanced_journal_from_bulk_create_commits(books):
    with transaction.atomic():
        journal = Journal.objects.create(institution=books.fi, kind=Journal.Kind.TRANSFER)
        Entry.objects.bulk_create(
            [
                Entry(
                    journal=journal,
                    account=books.account,
                    direction="debit",
                    amount=5,
                    currency="EUR",
                    balance_after=after(books.account, "debit", 5),
                ),
                Entry(
                    journal=journal,
                    account=books.other,
                    direction="credit",
                    amount=5,
                    currency="EUR",
                    balance_after=after(books.other, "credit", 5),
                ),
            ]
        )
        Account.objects.filter(pk=books.account.pk).update(posted=F("posted") - 5)
        Account.objects.filter(pk=books.other.pk).update(posted=F("posted") + 5)
    assert entries_of(journal.pk) == 2
    assert ledger_breaches() == []


# --- 2. An entry is in its account's currency --------------------------------------------------


@pytest.mark.parametrize("how", ["raw_sql", "bulk_create"])
def test_an_entry_in_another_currency_than_its_account_is_refused(books, how):
    before = ledger_state()
    with pytest.raises(IntegrityError) as excinfo:
        with transaction.atomic():
            if how == "raw_sql":
                insert_journal(books.fi, "jnl_ghs")
                insert_entry("jnl_ghs", books.funding, "debit", 100, "GHS")
                insert_entry("jnl_ghs", books.account, "credit", 100, "GHS")
            else:
                journal = Journal.objects.create(institution=books.fi, kind=Journal.Kind.TRANSFER)
                Entry.objects.bulk_create(
                    [
                        Entry(
                            journal=journal,
                            account=books.funding,
                            direction="debit",
                            amount=100,
                            currency="GHS",
                            balance_after=after(books.funding, "debit", 100),
                        ),
                        Entry(
                            journal=journal,
                            account=books.account,
                            direction="credit",
                            amount=100,
                            currency="GHS",
                            balance_after=after(books.account, "credit", 100),
                        ),
                    ]
                )
            pytest.fail("the insert itself must fail (a BEFORE INSERT trigger, not deferred)")
    error = pg_error(excinfo)
    assert isinstance(error, psycopg.errors.CheckViolation)
    assert error.diag.message_primary == (
        f"entry in GHS on account {books.funding.pk} of another currency"
    )
    assert ledger_state() == before


# --- 3. Journals and entries are append-only ---------------------------------------------------


def entry_update(books):
    Entry.objects.filter(journal=books.journal, direction="debit").update(amount=F("amount") - 1)


def entry_flip(books):
    Entry.objects.filter(journal=books.journal, direction="debit").update(direction="credit")


def entry_delete(books):
    Entry.objects.filter(journal=books.journal).delete()


def entry_instance_delete(books):
    Entry.objects.filter(journal=books.journal).first().delete()


def journal_update(books):
    Journal.objects.filter(pk=books.journal.pk).update(description="edited")


def journal_delete(books):
    # Django's collector would refuse first (entries PROTECT their journal); `_raw_delete` is the
    # queryset's own DELETE without it, so the database rule is what answers.
    Journal.objects.filter(pk=books.journal.pk)._raw_delete(using="default")


def raw(sql):
    def run(books):
        execute(sql, [books.journal.pk])

    run.__name__ = sql
    return run


@pytest.mark.parametrize(
    "change, message",
    [
        (entry_update, "accounts_entry is append-only: UPDATE is not allowed"),
        (entry_flip, "accounts_entry is append-only: UPDATE is not allowed"),
        (entry_delete, "accounts_entry is append-only: DELETE is not allowed"),
        (entry_instance_delete, "accounts_entry is append-only: DELETE is not allowed"),
        (journal_update, "accounts_journal is append-only: UPDATE is not allowed"),
        (journal_delete, "accounts_journal is append-only: DELETE is not allowed"),
        (
            raw("UPDATE accounts_entry SET amount = 1 WHERE journal_id = %s"),
            "accounts_entry is append-only: UPDATE is not allowed",
        ),
        (
            raw("DELETE FROM accounts_entry WHERE journal_id = %s"),
            "accounts_entry is append-only: DELETE is not allowed",
        ),
        (
            raw("UPDATE accounts_journal SET kind = 'adjustment' WHERE id = %s"),
            "accounts_journal is append-only: UPDATE is not allowed",
        ),
        (
            raw("DELETE FROM accounts_journal WHERE id = %s"),
            "accounts_journal is append-only: DELETE is not allowed",
        ),
    ],
    ids=lambda value: getattr(value, "__name__", None),
)
def test_journals_and_entries_are_append_only(books, change, message):
    books.before = ledger_state()
    entries = list(Entry.objects.order_by("pk").values())
    with pytest.raises(IntegrityError) as excinfo:
        change(books)
    error = pg_error(excinfo)
    assert isinstance(error, psycopg.errors.RestrictViolation)
    assert error.diag.message_primary == message
    assert ledger_state() == books.before
    assert list(Entry.objects.order_by("pk").values()) == entries
    assert ledger_breaches() == []


# --- 4. CHECK constraints ----------------------------------------------------------------------


def update(model, pk_of, **values):
    def run(books):
        model.objects.filter(pk=pk_of(books)).update(**values)

    run.__name__ = f"{model.__name__}_{'_'.join(values)}"
    return run


def insert_entry_row(amount):
    def run(books):
        journal = Journal.objects.create(institution=books.fi, kind=Journal.Kind.TRANSFER)
        Entry.objects.bulk_create(
            [
                Entry(
                    journal=journal,
                    account=books.funding,
                    direction="debit",
                    amount=amount,
                    currency="EUR",
                    balance_after=after(books.funding, "debit", amount),
                ),
                Entry(
                    journal=journal,
                    account=books.account,
                    direction="credit",
                    amount=amount,
                    currency="EUR",
                    balance_after=after(books.account, "credit", amount),
                ),
            ]
        )

    run.__name__ = f"Entry_amount_{amount}"
    return run


def insert_hold(amount):
    def run(books):
        Hold.objects.create(
            institution=books.fi,
            account=books.account,
            amount=amount,
            currency="EUR",
            expires_at=timezone.now(),
        )

    run.__name__ = f"Hold_amount_{amount}"
    return run


def account(books):
    return books.account.pk


def other(books):
    return books.other.pk


def hold(books):
    return books.hold.pk


def transfer(books):
    return books.transfer.pk


@pytest.mark.parametrize(
    "change, constraint",
    [
        (insert_entry_row(0), "entry_amount_positive"),
        # Balanced in sum (credit -100, debit -100): the sign cannot be smuggled in.
        (insert_entry_row(-100), "entry_amount_positive"),
        (insert_hold(0), "hold_amount_positive"),
        (insert_hold(-50), "hold_amount_positive"),
        (update(Hold, hold, amount=0), "hold_amount_positive"),
        (update(Hold, hold, captured_amount=F("amount") + 1), "hold_captured_within_amount"),
        (update(Hold, hold, captured_amount=-1), "hold_captured_within_amount"),
        (update(Transfer, transfer, amount=0), "transfer_amount_positive"),
        (
            update(Transfer, transfer, reversed_amount=F("amount") + 1),
            "transfer_reversed_within_amount",
        ),
        (update(Transfer, transfer, reversed_amount=-1), "transfer_reversed_within_amount"),
        (
            update(Transfer, transfer, posted_amount=F("amount") + 1),
            "transfer_posted_within_amount",
        ),
        (
            update(Transfer, transfer, posted_amount=F("amount") - 1, reversed_amount=F("amount")),
            "transfer_reversed_within_posted",
        ),
        (
            update(Transfer, transfer, posted_amount=0, reversed_amount=0),
            "transfer_state_consistent",
        ),
        (update(Transfer, transfer, journal=None), "transfer_state_consistent"),
        (update(Transfer, transfer, status="pending"), "transfer_state_consistent"),
        (
            update(Transfer, transfer, destination_account=F("source_account")),
            "transfer_distinct_accounts",
        ),
        (update(TransferReversal, lambda b: b.reversal.pk, amount=0), "reversal_amount_positive"),
        (update(Adjustment, lambda b: b.adjustment.pk, amount=0), "adjustment_amount_positive"),
        (update(StatementLine, lambda b: b.line.pk, amount=-1), "transaction_amount_positive"),
        (update(Account, account, pending=-1), "account_pending_nonneg"),
        (update(Account, lambda b: b.funding.pk, pending=-1), "account_pending_nonneg"),
        (update(Account, account, overdraft_limit=-1), "account_overdraft_nonneg"),
        # posted - pending + overdraft_limit < 0 on a customer account:
        (update(Account, other, posted=-1), "account_available_nonneg"),
        (update(Account, account, pending=F("posted") + 1), "account_available_nonneg"),
        (update(Account, account, posted=F("pending") - 1), "account_available_nonneg"),
        (update(Account, other, kind="internal"), "account_internal_code_iff_internal"),
        (
            update(Account, other, internal_code=Account.InternalCode.FEES),
            "account_internal_code_iff_internal",
        ),
    ],
    ids=lambda value: getattr(value, "__name__", None),
)
def test_check_constraints_refuse_what_python_would_not_write(books, change, constraint):
    before = ledger_state()
    rows = {
        model: list(model.objects.order_by("pk").values())
        for model in (Account, Hold, Transfer, TransferReversal, Adjustment, StatementLine)
    }
    with pytest.raises(IntegrityError) as excinfo:
        with transaction.atomic():
            change(books)
    error = pg_error(excinfo)
    assert isinstance(error, psycopg.errors.CheckViolation)
    assert error.diag.constraint_name == constraint
    assert ledger_state() == before
    for model, values in rows.items():
        assert list(model.objects.order_by("pk").values()) == values
    assert ledger_breaches() == []


def test_a_customer_account_may_reach_exactly_zero_available(books):
    # available = posted - pending + overdraft_limit: 800 - 200 + 0; down to 0 is allowed.
    Account.objects.filter(pk=books.account.pk).update(posted=F("pending"))
    assert balance(books.account) == (200, 200, 0)
    # With an overdraft limit of 50, posted may go 50 below the held amount, not 51.
    Account.objects.filter(pk=books.account.pk).update(overdraft_limit=50, posted=150)
    assert balance(books.account) == (150, 200, 0)
    with pytest.raises(IntegrityError) as excinfo:
        Account.objects.filter(pk=books.account.pk).update(posted=149)
    assert pg_error(excinfo).diag.constraint_name == "account_available_nonneg"
    assert balance(books.account) == (150, 200, 0)


def test_an_internal_account_may_go_negative(books):
    assert balance(books.funding) == (-1000, 0, -1000)  # it paid for the load
    Account.objects.filter(pk=books.funding.pk).update(posted=-(10**15))
    assert balance(books.funding) == (-(10**15), 0, -(10**15))
