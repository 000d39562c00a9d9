"""The posting function `tx_post` (accounts/sql/posting.sql) keeps its contract when called
directly, in raw SQL, bypassing `accounts.posting.post` and every Python check.

Proven here:

- Refusals (SQLSTATE TX001, the TX code as the message, the details as JSON in the detail, the
  human message or '' in the hint): `not_found` for an unknown account or one of another
  institution; `currency_mismatch` for any account before any status or funds check;
  `account_not_active` for a `debit` on a frozen or closed account and a `credit` into a closed
  one (a frozen one receives); `insufficient_funds` when a customer account has less available
  than `needs` (0 checks the status only; an internal account may go negative); checks in the
  order of `p_account_ids`, the first failing one reported.
- A refusal writes nothing: journal, entries, balances, `updated_at`, the operation's rows,
  statement lines and events.
- A posting writes the journal as given, one entry per non-zero posted amount (credit +,
  debit -), adds to `posted` and `pending`, stamps `updated_at = p_now` on the changed accounts
  only, and inserts the given rows, statement lines and events as given; a hold is placed
  without a journal.
- Misuse raises (not TX001): a posted amount without a journal, an unknown check; an unbalanced
  journal is refused when the transaction commits (the deferred trigger of ledger_rules.sql,
  hence `transaction=True` and a real commit there).
- The ledger's invariants hold after every successful call (`ledger_breaches() == []`, the
  deferred triggers fired).
"""

import json
from datetime import timedelta
from types import SimpleNamespace

import psycopg.errors
import pytest
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.utils import timezone

from accounts.models import Account, Entry, Hold, Journal, StatementLine
from accounts.verification import ledger_breaches
from core.rows import as_row
from events.models import Event
from transfers.models import Transfer

from .helpers import (
    assert_ledger_ok,
    balance,
    institution,
    ledger_state,
    open_account,
    set_status,
    updated_at,
)
from .helpers import bank as ledger_bank

pytestmark = pytest.mark.django_db

FUNDING = Account.InternalCode.FUNDING
SETTLEMENT = Account.InternalCode.SETTLEMENT
FROZEN, CLOSED = Account.Status.FROZEN, Account.Status.CLOSED

TX_POST = (
    "SELECT tx_post(%s, %s, %s, %s::text[], %s::text[], %s::bigint[], %s::bigint[], "
    "%s::bigint[], %s::jsonb, %s::jsonb, %s::jsonb, %s::jsonb)"
)


# --- Calling the function -----------------------------------------------------------------------


def leg(account, check: str = "", *, needs: int = 0, posted: int = 0, pending: int = 0) -> dict:
    """One account's part: its id (an Account or a bare id), its check and its amounts."""
    account_id = account if isinstance(account, str) else account.pk
    return {"id": account_id, "check": check, "needs": needs, "posted": posted, "pending": pending}


def arguments(
    institution_id, currency, legs, *, now=None, journal=None, rows=(), lines=(), events=()
) -> list:
    """tx_post's twelve arguments, built as `post()` builds them: `journal` a Journal (or None),
    `rows` model instances (their table from the model), `lines` and `events` instances."""
    return [
        institution_id,
        currency,
        now if now is not None else (journal.created_at if journal else timezone.now()),
        [one["id"] for one in legs],
        [one["check"] for one in legs],
        [one["needs"] for one in legs],
        [one["posted"] for one in legs],
        [one["pending"] for one in legs],
        None if journal is None else json.dumps(as_row(journal)),
        json.dumps([[row._meta.db_table, as_row(row)] for row in rows]),
        json.dumps([as_row(line) for line in lines]),
        json.dumps([as_row(event) for event in events]),
    ]


def tx_post(*args, **kwargs) -> None:
    with connection.cursor() as cursor:
        cursor.execute(TX_POST, arguments(*args, **kwargs))


def failure(*args, **kwargs):
    """The psycopg error of a call that must fail, its savepoint rolled back."""
    with pytest.raises(DatabaseError) as excinfo:
        with transaction.atomic():
            tx_post(*args, **kwargs)
    return excinfo.value.__cause__


def refusal(*args, **kwargs) -> SimpleNamespace:
    """The TX001 refusal of a call, having proven that it wrote nothing."""
    before = ledger_state()
    error = failure(*args, **kwargs)
    assert error.sqlstate == "TX001", error
    assert ledger_state() == before
    return SimpleNamespace(
        code=error.diag.message_primary,
        detail=error.diag.message_detail,
        details=json.loads(error.diag.message_detail),
        hint=error.diag.message_hint,
    )


def new_journal(fi, kind=Journal.Kind.TRANSFER, description="") -> Journal:
    return Journal(institution=fi, kind=kind, description=description, created_at=timezone.now())


@pytest.fixture
def bank():
    return ledger_bank()


def hold_placed(bank, amount) -> Hold:
    """A hold of `amount` on bank.account placed by tx_post directly: no journal."""
    now = timezone.now()
    hold = Hold(
        institution=bank.fi,
        account=bank.account,
        amount=amount,
        currency="EUR",
        expires_at=now + timedelta(days=1),
        created_at=now,
        updated_at=now,
    )
    event = Event(
        institution=bank.fi,
        type="hold.created",
        object_type="hold",
        object_id=hold.pk,
        data={"amount": amount},
        actor_type="system",
    )
    tx_post(
        bank.fi.pk,
        "EUR",
        [leg(bank.account, "debit", needs=amount, pending=amount)],
        now=now,
        rows=[hold],
        events=[event],
    )
    assert as_row(Hold.objects.get(pk=hold.pk)) == as_row(hold)
    assert as_row(Event.objects.get(pk=event.pk)) == as_row(event)
    assert updated_at(bank.account) == now
    return hold


def transfer_legs(bank, amount, *, needs=None):
    return [
        leg(bank.account, "debit", needs=amount if needs is None else needs, posted=-amount),
        leg(bank.empty, "credit", posted=amount),
    ]


# --- 1. not_found --------------------------------------------------------------------------------


def test_an_unknown_account_is_not_found(bank):
    refused = refusal(
        bank.fi.pk,
        "EUR",
        [
            leg(bank.account, "debit", needs=100, posted=-100),
            leg("acc_does_not_exist", "credit", posted=100),
        ],
        journal=new_journal(bank.fi),
    )
    assert refused.code == "not_found"
    assert refused.detail == "null"
    assert refused.hint == "An account of this operation does not exist."


def test_an_account_of_another_institution_is_not_found(bank):
    elsewhere = open_account(institution(), balance=500)
    before = (balance(elsewhere), updated_at(elsewhere))
    refused = refusal(
        bank.fi.pk,
        "EUR",
        [leg(elsewhere, "debit", needs=100, posted=-100), leg(bank.empty, "credit", posted=100)],
        journal=new_journal(bank.fi),
    )
    assert refused.code == "not_found"
    assert refused.details is None
    assert (balance(elsewhere), updated_at(elsewhere)) == before
    # Named alone, it is not found either (it is no account of this institution).
    assert refusal(bank.fi.pk, "EUR", [leg(elsewhere, "credit")]).code == "not_found"


# --- 2. currency_mismatch ------------------------------------------------------------------------


def test_an_account_in_another_currency_is_a_currency_mismatch(bank):
    refused = refusal(
        bank.fi.pk,
        "EUR",
        [leg(bank.account, "debit", needs=100, posted=-100), leg(bank.ghs, "credit", posted=100)],
        journal=new_journal(bank.fi),
    )
    assert refused.code == "currency_mismatch"
    assert refused.details == {
        "account_id": bank.ghs.pk,
        "account_currency": "GHS",
        "currency": "EUR",
    }
    assert refused.hint == "The account is in GHS, the request in EUR."


@pytest.mark.parametrize("first_fails_by", ["insufficient_funds", "account_not_active"])
def test_currencies_are_checked_for_every_account_before_any_other_check(bank, first_fails_by):
    if first_fails_by == "account_not_active":
        set_status(bank.account, FROZEN)
    needs = 5000 if first_fails_by == "insufficient_funds" else 100
    legs = [leg(bank.account, "debit", needs=needs), leg(bank.ghs, "credit")]
    # The first account alone fails its own check...
    assert refusal(bank.fi.pk, "EUR", legs[:1]).code == first_fails_by
    # ...but the second's currency is reported first.
    refused = refusal(bank.fi.pk, "EUR", legs)
    assert refused.code == "currency_mismatch"
    assert refused.details["account_id"] == bank.ghs.pk


# --- 3. account_not_active -----------------------------------------------------------------------


@pytest.mark.parametrize("status", [FROZEN, CLOSED])
@pytest.mark.parametrize("needs", [100, 0])
def test_money_cannot_leave_a_frozen_or_closed_account(bank, status, needs):
    set_status(bank.account, status)
    refused = refusal(
        bank.fi.pk, "EUR", transfer_legs(bank, 100, needs=needs), journal=new_journal(bank.fi)
    )
    assert refused.code == "account_not_active"
    assert refused.details == {"account_id": bank.account.pk, "status": status}
    assert refused.hint == f"The account is {status}: money cannot leave it."


def test_money_cannot_come_into_a_closed_account(bank):
    set_status(bank.empty, CLOSED)
    refused = refusal(bank.fi.pk, "EUR", transfer_legs(bank, 100), journal=new_journal(bank.fi))
    assert refused.code == "account_not_active"
    assert refused.details == {"account_id": bank.empty.pk, "status": "closed"}
    assert refused.hint == "The account is closed."


def test_money_comes_into_a_frozen_account(bank):
    set_status(bank.empty, FROZEN)
    tx_post(bank.fi.pk, "EUR", transfer_legs(bank, 100), journal=new_journal(bank.fi))
    assert balance(bank.account) == (900, 0, 900)
    assert balance(bank.empty) == (100, 0, 100)
    assert_ledger_ok()


def test_no_check_lets_money_into_a_closed_account(bank):
    # '': the other side of a movement, unchecked (the caller checked what it needed).
    set_status(bank.empty, CLOSED)
    legs = transfer_legs(bank, 100)
    legs[1]["check"] = ""
    tx_post(bank.fi.pk, "EUR", legs, journal=new_journal(bank.fi))
    assert balance(bank.empty) == (100, 0, 100)
    assert_ledger_ok()


# --- 4. insufficient_funds -----------------------------------------------------------------------


def test_a_customer_account_without_the_funds_is_refused(bank):
    refused = refusal(bank.fi.pk, "EUR", transfer_legs(bank, 1001), journal=new_journal(bank.fi))
    assert refused.code == "insufficient_funds"
    assert refused.details == {"account_id": bank.account.pk, "available": 1000, "amount": 1001}
    assert refused.hint == ""  # the class's default message applies


def test_exactly_the_available_amount_passes(bank):
    tx_post(bank.fi.pk, "EUR", transfer_legs(bank, 1000), journal=new_journal(bank.fi))
    assert balance(bank.account) == (0, 0, 0)
    assert_ledger_ok()


def test_needs_are_compared_with_available_not_posted(bank):
    # A hold of 300: posted 1000, available 700.
    hold_placed(bank, 300)
    refused = refusal(
        bank.fi.pk, "EUR", transfer_legs(bank, 100, needs=701), journal=new_journal(bank.fi)
    )
    assert refused.code == "insufficient_funds"
    assert refused.details == {"account_id": bank.account.pk, "available": 700, "amount": 701}


def test_needs_zero_checks_only_the_status(bank):
    # All of the account's money is held: nothing available, the capture needs nothing more.
    hold = hold_placed(bank, 1000)
    assert balance(bank.account) == (1000, 1000, 0)
    journal = new_journal(bank.fi, Journal.Kind.HOLD_CAPTURE)
    tx_post(
        bank.fi.pk,
        "EUR",
        [
            leg(bank.account, "debit", needs=0, posted=-1000, pending=-1000),
            leg(bank.settlement, "", posted=1000),
        ],
        journal=journal,
    )
    assert balance(bank.account) == (0, 0, 0)
    assert balance(bank.settlement) == (1000, 0, 1000)
    Hold.objects.filter(pk=hold.pk).update(
        status=Hold.Status.CAPTURED, captured_amount=1000, capture_journal_id=journal.pk
    )
    assert_ledger_ok()


def test_needs_zero_passes_an_active_account_with_nothing(bank):
    assert balance(bank.empty) == (0, 0, 0)
    tx_post(bank.fi.pk, "EUR", [leg(bank.empty, "debit", needs=0)])
    assert balance(bank.empty) == (0, 0, 0)


def test_an_internal_account_may_go_negative_under_a_debit_check(bank):
    assert balance(bank.funding) == (-1000, 0, -1000)
    tx_post(
        bank.fi.pk,
        "EUR",
        [leg(bank.funding, "debit", needs=500, posted=-500), leg(bank.empty, "credit", posted=500)],
        journal=new_journal(bank.fi, Journal.Kind.ADJUSTMENT),
    )
    assert balance(bank.funding) == (-1500, 0, -1500)
    assert balance(bank.empty) == (500, 0, 500)
    assert_ledger_ok()


@pytest.mark.parametrize("reversed_order", [False, True], ids=["given_order", "reversed_order"])
def test_checks_are_made_in_the_order_of_the_account_ids(bank, reversed_order):
    # Both fail; the first named is reported, whatever the ids' (lock) order.
    second = open_account(bank.fi, balance=50)
    legs = [
        leg(bank.account, "debit", needs=2000, posted=-2000),
        leg(second, "debit", needs=60, posted=-60),
        leg(bank.settlement, "", posted=2060),
    ]
    if reversed_order:
        legs[:2] = legs[1::-1]
    refused = refusal(bank.fi.pk, "EUR", legs, journal=new_journal(bank.fi))
    first = second if reversed_order else bank.account
    assert refused.code == "insufficient_funds"
    assert refused.details["account_id"] == first.pk


def test_the_first_failing_check_is_reported_whatever_its_kind(bank):
    set_status(bank.empty, FROZEN)
    legs = [
        leg(bank.account, "debit", needs=2000),  # insufficient_funds
        leg(bank.empty, "debit", needs=0),  # account_not_active
    ]
    assert refusal(bank.fi.pk, "EUR", legs).code == "insufficient_funds"
    assert refusal(bank.fi.pk, "EUR", legs[::-1]).code == "account_not_active"


# --- 5. A refusal writes nothing -----------------------------------------------------------------


def transfer_operation(bank, amount):
    """A transfer of `amount` from bank.account to bank.empty with everything it writes."""
    journal = new_journal(bank.fi, description="rent")
    transfer = Transfer(
        institution=bank.fi,
        source_account=bank.account,
        destination_account=bank.empty,
        amount=amount,
        posted_amount=amount,
        currency="EUR",
        description="rent",
        journal=journal,
    )
    lines = [
        StatementLine(
            institution=bank.fi,
            account=account,
            type=kind,
            settlement_status=StatementLine.SettlementStatus.PRESENTMENT,
            amount=amount,
            currency="EUR",
            description="rent",
            journal=journal,
            transfer=transfer,
        )
        for account, kind in (
            (bank.account, StatementLine.Type.CASH_DEC),
            (bank.empty, StatementLine.Type.CASH_INC),
        )
    ]
    event = Event(
        institution=bank.fi,
        type="transfer.posted",
        object_type="transfer",
        object_id=transfer.pk,
        data={"amount": amount, "currency": "EUR"},
        actor_type="system",
    )
    return SimpleNamespace(journal=journal, transfer=transfer, lines=lines, events=[event])


@pytest.mark.parametrize("refused_by", ["insufficient_funds", "account_not_active"])
def test_a_refusal_writes_nothing(bank, refused_by):
    # The last account's check fails: every other passed, the writes would come next.
    amount = 1001 if refused_by == "insufficient_funds" else 100
    if refused_by == "account_not_active":
        set_status(bank.account, FROZEN)
    operation = transfer_operation(bank, amount)
    legs = [
        leg(bank.empty, "credit", posted=amount),
        leg(bank.account, "debit", needs=amount, posted=-amount),
    ]
    accounts = list(Account.objects.order_by("pk").values())
    refused = refusal(  # compares ledger_state() before and after
        bank.fi.pk,
        "EUR",
        legs,
        journal=operation.journal,
        rows=[operation.transfer],
        lines=operation.lines,
        events=operation.events,
    )
    assert refused.code == refused_by
    assert refused.details["account_id"] == bank.account.pk
    assert list(Account.objects.order_by("pk").values()) == accounts  # balances, updated_at
    assert not Journal.objects.filter(pk=operation.journal.pk).exists()
    assert not Entry.objects.filter(journal_id=operation.journal.pk).exists()
    assert not Transfer.objects.filter(pk=operation.transfer.pk).exists()
    assert not StatementLine.objects.filter(pk__in=[line.pk for line in operation.lines]).exists()
    assert not Event.objects.filter(pk=operation.events[0].pk).exists()
    assert ledger_breaches() == []


# --- 6. A posting --------------------------------------------------------------------------------


def test_a_transfer_posts_its_journal_entries_balances_rows_lines_and_events(bank):
    operation = transfer_operation(bank, 300)
    now = operation.journal.created_at
    untouched = updated_at(bank.settlement)
    tx_post(
        bank.fi.pk,
        "EUR",
        [
            *transfer_legs(bank, 300),
            leg(bank.settlement, ""),  # named, nothing added: not updated
        ],
        journal=operation.journal,
        rows=[operation.transfer],
        lines=operation.lines,
        events=operation.events,
    )
    # The journal as given, one entry per leg with a posted amount, in the legs' order.
    assert as_row(Journal.objects.get(pk=operation.journal.pk)) == as_row(operation.journal)
    entries = Entry.objects.filter(journal_id=operation.journal.pk).order_by("pk")
    assert list(entries.values_list("account_id", "direction", "amount", "currency")) == [
        (bank.account.pk, "debit", 300, "EUR"),
        (bank.empty.pk, "credit", 300, "EUR"),
    ]
    assert {entry.created_at for entry in entries} == {now}
    # Balances added to, updated_at = p_now on the changed accounts only.
    assert balance(bank.account) == (700, 0, 700)
    assert balance(bank.empty) == (300, 0, 300)
    assert updated_at(bank.account) == now
    assert updated_at(bank.empty) == now
    assert updated_at(bank.settlement) == untouched
    assert balance(bank.settlement) == (0, 0, 0)
    # The operation's row, its statement lines and its event, as given.
    assert as_row(Transfer.objects.get(pk=operation.transfer.pk)) == as_row(operation.transfer)
    for line in operation.lines:
        assert as_row(StatementLine.objects.get(pk=line.pk)) == as_row(line)
    assert as_row(Event.objects.get(pk=operation.events[0].pk)) == as_row(operation.events[0])
    assert_ledger_ok()


def test_one_entry_per_non_zero_posted_amount(bank):
    journal = new_journal(bank.fi)
    now = journal.created_at + timedelta(seconds=1)  # p_now, not the journal's time
    untouched = updated_at(bank.settlement)
    tx_post(
        bank.fi.pk,
        "EUR",
        [
            leg(bank.empty, "credit", posted=250),
            leg(bank.settlement, "credit", posted=0),
            leg(bank.account, "debit", needs=400, posted=-400),
            leg(bank.funding, "", posted=150),
        ],
        now=now,
        journal=journal,
    )
    entries = Entry.objects.filter(journal_id=journal.pk).order_by("pk")
    assert list(entries.values_list("account_id", "direction", "amount", "currency")) == [
        (bank.empty.pk, "credit", 250, "EUR"),
        (bank.account.pk, "debit", 400, "EUR"),
        (bank.funding.pk, "credit", 150, "EUR"),
    ]
    assert {entry.created_at for entry in entries} == {now}
    assert balance(bank.empty) == (250, 0, 250)
    assert balance(bank.account) == (600, 0, 600)
    assert balance(bank.funding) == (-850, 0, -850)
    assert balance(bank.settlement) == (0, 0, 0)
    assert [updated_at(a) for a in (bank.empty, bank.account, bank.funding)] == [now] * 3
    assert updated_at(bank.settlement) == untouched
    assert_ledger_ok()


def test_a_hold_is_placed_without_a_journal(bank):
    journals, entries = Journal.objects.count(), Entry.objects.count()
    hold_placed(bank, 400)
    assert balance(bank.account) == (1000, 400, 600)
    assert (Journal.objects.count(), Entry.objects.count()) == (journals, entries)
    assert_ledger_ok()


def test_a_hold_beyond_the_available_amount_is_refused(bank):
    hold_placed(bank, 400)
    refused = refusal(bank.fi.pk, "EUR", [leg(bank.account, "debit", needs=601, pending=601)])
    assert refused.code == "insufficient_funds"
    assert refused.details == {"account_id": bank.account.pk, "available": 600, "amount": 601}


# --- 7. Misuse raises ----------------------------------------------------------------------------


def test_a_posted_amount_without_a_journal_raises(bank):
    before = ledger_state()
    error = failure(bank.fi.pk, "EUR", transfer_legs(bank, 100), journal=None)
    assert isinstance(error, psycopg.errors.RaiseException)
    assert error.sqlstate != "TX001"
    assert error.diag.message_primary == "tx_post: a change of posted balances needs a journal"
    assert ledger_state() == before


def test_an_unknown_check_raises(bank):
    before = ledger_state()
    legs = transfer_legs(bank, 100)
    legs[1]["check"] = "deposit"
    error = failure(bank.fi.pk, "EUR", legs, journal=new_journal(bank.fi))
    assert isinstance(error, psycopg.errors.RaiseException)
    assert error.sqlstate != "TX001"
    assert error.diag.message_primary == "tx_post: unknown check deposit"
    assert ledger_state() == before


def test_a_row_of_a_table_that_is_no_operation_s_raises(bank):
    # Each operation's table has its own static INSERT; any other table is refused, not
    # written (an event given as the operation's row, say).
    before = ledger_state()
    event = Event(
        institution=bank.fi,
        type="transfer.posted",
        object_type="transfer",
        object_id="trf_x",
        data={},
        actor_type="system",
    )
    journal = new_journal(bank.fi)
    error = failure(bank.fi.pk, "EUR", transfer_legs(bank, 100), journal=journal, rows=[event])
    assert isinstance(error, psycopg.errors.RaiseException)
    assert error.sqlstate != "TX001"
    assert error.diag.message_primary == "tx_post: no operation row of table events_event"
    assert ledger_state() == before
    assert not Event.objects.filter(pk=event.pk).exists()


def misuse(bank, legs, message):
    before = ledger_state()
    error = failure(bank.fi.pk, "EUR", legs, journal=new_journal(bank.fi))
    assert isinstance(error, psycopg.errors.RaiseException)
    assert error.sqlstate != "TX001"
    assert error.diag.message_primary.startswith(message), error.diag.message_primary
    assert ledger_state() == before


def test_an_account_named_twice_raises(bank):
    # Balanced, but one UPDATE per account would apply only one of its two amounts.
    legs = [
        leg(bank.account, "debit", needs=100, posted=-100),
        leg(bank.account, "credit", posted=100),
    ]
    misuse(bank, legs, "tx_post: each account once")


@pytest.mark.parametrize("short", ["check", "needs", "posted", "pending"])
def test_arrays_of_another_length_than_the_accounts_raise(bank, short):
    legs = transfer_legs(bank, 100)
    arguments_ = arguments(bank.fi.pk, "EUR", legs, journal=new_journal(bank.fi))
    position = {"check": 4, "needs": 5, "posted": 6, "pending": 7}[short]
    arguments_[position] = arguments_[position][:1]
    before = ledger_state()
    with pytest.raises(DatabaseError) as excinfo:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(TX_POST, arguments_)
    assert excinfo.value.__cause__.diag.message_primary.startswith("tx_post: each account once")
    assert ledger_state() == before


def test_a_null_check_raises(bank):
    set_status(bank.account, FROZEN)
    legs = transfer_legs(bank, 100)
    legs[0]["check"] = None
    misuse(bank, legs, "tx_post: money leaves account")


@pytest.mark.parametrize("check", ["", "credit"])
def test_money_leaving_a_customer_account_needs_the_debit_check(bank, check):
    set_status(bank.account, FROZEN)
    legs = transfer_legs(bank, 100)
    legs[0]["check"] = check
    misuse(bank, legs, "tx_post: money leaves account")


def test_a_hold_on_a_customer_account_needs_the_debit_check(bank):
    misuse(bank, [leg(bank.account, "", pending=100)], "tx_post: money leaves account")


@pytest.mark.django_db(transaction=True)
def test_an_unbalanced_journal_is_refused_at_commit(bank):
    before = ledger_state()
    journal = new_journal(bank.fi)
    with pytest.raises(IntegrityError) as excinfo:
        with transaction.atomic():
            tx_post(
                bank.fi.pk,
                "EUR",
                [
                    leg(bank.account, "debit", needs=300, posted=-300),
                    leg(bank.empty, "credit", posted=200),
                ],
                journal=journal,
            )
            # The call itself passed: the deferred trigger answers at commit.
            assert Entry.objects.filter(journal_id=journal.pk).count() == 2
    error = excinfo.value.__cause__
    assert isinstance(error, psycopg.errors.CheckViolation)
    assert error.diag.message_primary == (
        f"journal {journal.pk} does not balance in EUR: its entries sum to -100"
    )
    assert ledger_state() == before
    assert ledger_breaches() == []


@pytest.mark.django_db(transaction=True)
def test_a_balanced_posting_commits(bank):
    operation = transfer_operation(bank, 250)
    with transaction.atomic():
        tx_post(
            bank.fi.pk,
            "EUR",
            transfer_legs(bank, 250),
            journal=operation.journal,
            rows=[operation.transfer],
            lines=operation.lines,
            events=operation.events,
        )
    assert balance(bank.account) == (750, 0, 750)
    assert balance(bank.empty) == (250, 0, 250)
    assert Transfer.objects.filter(pk=operation.transfer.pk).exists()
    assert ledger_breaches() == []
