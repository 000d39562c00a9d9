"""What the card network forced on a customer account, at the database (docs/overdraft.md;
docs/card-transactions.md, "Messages the network does not ask"; accounts/sql/network_overdraft.sql,
accounts/posting.py `FORCED`, the 'forced' check of accounts/sql/posting.sql).

PostgreSQL alone must hold these, whatever Python does: the CHECK `account_available_nonneg`
allows a customer account below zero available by its `network_overdraft` and not one minor
unit more; `network_overdraft` is never below 0; the trigger `accounts_network_overdraft_repaid`
lowers it to what is still below zero on every change of `posted`, `pending` or
`overdraft_limit` (a credit, a hold released, a higher limit) and never raises it, while an
UPDATE of `network_overdraft` alone (what `posting.FORCED` sends before `tx_post`) may. `tx_post`
refuses a 'forced' move on a closed account (`account_not_active`, nothing written) and lets one
through on a frozen account. `verify_ledger` reports a network overdraft the account does not
owe, and an account below zero beyond it."""

from datetime import timedelta

import psycopg.errors
import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import Account, Hold
from accounts.posting import FORCED
from accounts.services import hold_capture, hold_place, hold_release
from accounts.verification import Breach, ledger_breaches
from core.actors import SYSTEM
from core.exceptions import AccountNotActive, InsufficientFunds

from .helpers import balance, institution, ledger_state, load, open_account, set_status
from .test_posting_function import leg, refusal, tx_post

pytestmark = pytest.mark.django_db

OWED_NOTHING = "customer accounts with a network overdraft they do not owe"
BELOW_ZERO = "customer accounts below zero available"


def overdraft_of(account: Account) -> int:
    return Account.objects.values_list("network_overdraft", flat=True).get(pk=account.pk)


def hold(account: Account, amount: int, *, forced: bool = False) -> Hold:
    return hold_place(
        account=account,
        amount=amount,
        currency="EUR",
        expires_at=timezone.now() + timedelta(days=1),
        actor=SYSTEM,
        purpose=Hold.Purpose.CARD_AUTHORIZATION,
        forced=forced,
    )


def refused_by(constraint: str, change) -> None:
    """`change()` raises the CHECK `constraint`, its savepoint rolled back."""
    with pytest.raises(IntegrityError) as excinfo:
        with transaction.atomic():
            change()
    error = excinfo.value.__cause__
    assert isinstance(error, psycopg.errors.CheckViolation)
    assert error.diag.constraint_name == constraint


def update(account: Account, **values) -> None:
    Account.objects.filter(pk=account.pk).update(**values)


@pytest.fixture
def overdrawn():
    """An account of 1,000 with a hold of 100, then a forced hold of 1,200: 300 below zero
    available, all of it the network's."""
    fi = institution()
    account = open_account(fi, balance=1_000)
    small = hold(account, 100)
    forced = hold(account, 1_200, forced=True)
    assert balance(account) == (1_000, 1_300, -300)
    assert overdraft_of(account) == 300
    assert ledger_breaches() == []
    return account, small, forced


# --- the CHECKs ----------------------------------------------------------------------------------
def test_the_check_allows_the_network_overdraft_and_not_one_unit_more(overdrawn):
    account, _, _ = overdrawn
    before = ledger_state()
    refused_by("account_available_nonneg", lambda: update(account, pending=F("pending") + 1))
    refused_by("account_available_nonneg", lambda: update(account, posted=F("posted") - 1))
    assert (balance(account), overdraft_of(account)) == ((1_000, 1_300, -300), 300)
    assert ledger_state() == before
    # A plain debit through the posting function is refused for funds, as below zero.
    with pytest.raises(InsufficientFunds) as excinfo:
        with transaction.atomic():
            hold(account, 1)
    assert excinfo.value.details == {"account_id": account.pk, "available": -300, "amount": 1}


def test_a_customer_account_without_one_stays_at_zero(overdrawn):
    other = open_account(overdrawn[0].institution, balance=50)
    refused_by("account_available_nonneg", lambda: update(other, pending=51))
    assert balance(other) == (50, 0, 50)


def test_a_negative_network_overdraft_is_refused():
    account = open_account(institution(), balance=1_000)
    refused_by("account_network_overdraft_nonneg", lambda: update(account, network_overdraft=-1))
    assert (balance(account), overdraft_of(account)) == ((1_000, 0, 1_000), 0)


# --- the trigger ---------------------------------------------------------------------------------
def test_a_credit_lowers_it_to_what_is_still_below_zero(overdrawn):
    account, _, _ = overdrawn
    load(account, 120)
    assert (balance(account), overdraft_of(account)) == ((1_120, 1_300, -180), 180)
    load(account, 500)
    assert (balance(account), overdraft_of(account)) == ((1_620, 1_300, 320), 0)
    assert ledger_breaches() == []


def test_a_hold_released_lowers_it(overdrawn):
    account, small, forced = overdrawn
    hold_release(hold=small, purpose=Hold.Purpose.CARD_AUTHORIZATION)
    assert (balance(account), overdraft_of(account)) == ((1_000, 1_200, -200), 200)
    hold_release(hold=forced, purpose=Hold.Purpose.CARD_AUTHORIZATION)
    assert (balance(account), overdraft_of(account)) == ((1_000, 0, 1_000), 0)
    assert ledger_breaches() == []


def test_a_higher_overdraft_limit_lowers_it(overdrawn):
    account, _, _ = overdrawn
    update(account, overdraft_limit=100)
    assert (balance(account), overdraft_of(account)) == ((1_000, 1_300, -200), 200)
    update(account, overdraft_limit=1_000)
    assert (balance(account), overdraft_of(account)) == ((1_000, 1_300, 700), 0)
    assert ledger_breaches() == []


def test_the_trigger_never_raises_it(overdrawn):
    account, small, _ = overdrawn
    hold_release(hold=small, purpose=Hold.Purpose.CARD_AUTHORIZATION)
    assert overdraft_of(account) == 200
    # Taking back what was released would need the 300 again: the allowance stays 200.
    refused_by("account_available_nonneg", lambda: update(account, pending=F("pending") + 100))
    # Nor does a debit: available is -200, its allowance 200.
    refused_by("account_available_nonneg", lambda: update(account, posted=F("posted") - 50))
    # Setting it with a balance in the same UPDATE is a balance change: lowered to what is owed.
    update(account, network_overdraft=900, pending=F("pending"))
    assert overdraft_of(account) == 200
    assert ledger_breaches() == []


def test_an_update_of_the_network_overdraft_alone_may_raise_it(overdrawn):
    """What posting.FORCED sends before tx_post: the trigger does not look at it."""
    account, _, _ = overdrawn
    update(account, network_overdraft=F("network_overdraft") + 50)
    assert overdraft_of(account) == 350
    # The allowance is there now: 50 more held passes the CHECK (and the trigger keeps it).
    update(account, pending=F("pending") + 50)
    assert (balance(account), overdraft_of(account)) == ((1_000, 1_350, -350), 350)
    # Taken back, the balance change lowers it to what is owed again.
    update(account, pending=F("pending") - 50)
    assert (balance(account), overdraft_of(account)) == ((1_000, 1_300, -300), 300)
    assert ledger_breaches() == []


# --- tx_post's 'forced' check --------------------------------------------------------------------
def test_a_forced_move_on_a_closed_account_is_refused_and_writes_nothing():
    fi = institution()
    account = open_account(fi, balance=1_000)
    set_status(account, Account.Status.CLOSED)

    refused = refusal(fi.pk, "EUR", [leg(account, FORCED, pending=2_000)])

    assert refused.code == "account_not_active"
    assert refused.details == {"account_id": account.pk, "status": "closed"}
    assert refused.hint == "The account is closed."
    # Through posting.post, the allowance raised before tx_post is rolled back with it.
    before = ledger_state()
    with pytest.raises(AccountNotActive):
        with transaction.atomic():
            hold(account, 2_000, forced=True)
    assert ledger_state() == before
    assert (balance(account), overdraft_of(account)) == ((1_000, 0, 1_000), 0)


def test_a_forced_move_on_a_frozen_account_passes():
    fi = institution()
    account = open_account(fi, balance=1_000)
    set_status(account, Account.Status.FROZEN)

    held = hold(account, 1_500, forced=True)

    assert (balance(account), overdraft_of(account)) == ((1_000, 1_500, -500), 500)
    captured = hold_capture(
        hold=held,
        purpose=Hold.Purpose.CARD_AUTHORIZATION,
        counterparty=Account.InternalCode.CARD_CLEARING,
        forced=True,
    )
    assert (captured.status, captured.captured_amount) == ("captured", 1_500)
    assert (balance(account), overdraft_of(account)) == ((-500, 0, -500), 500)
    assert ledger_breaches() == []
    # Without `forced`, the frozen account refuses the same hold.
    with pytest.raises(AccountNotActive):
        with transaction.atomic():
            hold(account, 1)


def test_tx_post_leaves_the_allowance_to_its_caller():
    """'forced' in tx_post skips the funds check only: without posting.FORCED's UPDATE first,
    a move beyond what is available still meets the CHECK."""
    fi = institution()
    account = open_account(fi, balance=1_000)
    tx_post(fi.pk, "EUR", [leg(account, FORCED, pending=1_000)])
    assert balance(account) == (1_000, 1_000, 0)
    refused_by(
        "account_available_nonneg", lambda: tx_post(fi.pk, "EUR", [leg(account, FORCED, pending=1)])
    )
    assert (balance(account), overdraft_of(account)) == ((1_000, 1_000, 0), 0)


# --- verify_ledger -------------------------------------------------------------------------------
def test_verify_ledger_reports_a_network_overdraft_not_owed():
    fi = institution()
    account = open_account(fi, balance=1_000)
    update(account, network_overdraft=1)  # alone: the trigger does not lower it
    assert ledger_breaches() == [Breach(check=OWED_NOTHING, rows=[(account.pk, 1_000, 0, 0, 1)])]
    update(account, network_overdraft=0)
    assert ledger_breaches() == []


def test_verify_ledger_reports_an_account_below_zero_beyond_its_network_overdraft():
    """Only reachable with the CHECK dropped, in a savepoint rolled back."""
    fi = institution()
    account = open_account(fi, balance=1_000)
    update(account, overdraft_limit=500)
    hold(account, 1_200)
    assert balance(account) == (1_000, 1_200, 300)

    class Rollback(Exception):
        pass

    with pytest.raises(Rollback):
        with transaction.atomic():
            with connection.cursor() as cursor:
                # The deferred ledger triggers of the set-up fire first: ALTER TABLE waits for
                # none (assert_ledger_ok does the same).
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
                cursor.execute("SET CONSTRAINTS ALL DEFERRED")
                cursor.execute(
                    "ALTER TABLE accounts_account DROP CONSTRAINT account_available_nonneg"
                )
            update(account, overdraft_limit=0)
            assert balance(account) == (1_000, 1_200, -200)
            assert ledger_breaches() == [
                Breach(check=BELOW_ZERO, rows=[(account.pk, 1_000, 1_200, 0, 0)])
            ]
            raise Rollback
    # The CHECK is back.
    refused_by("account_available_nonneg", lambda: update(account, overdraft_limit=0))
    assert ledger_breaches() == []
