"""The batch posting function `tx_post_many` (accounts/sql/posting_many.sql) keeps its contract
when called directly, in raw SQL, bypassing `accounts.posting.post_many` and every Python check;
and it agrees with `tx_post` (through `accounts.posting.post`) item by item.

Proven here:

- Refusals come back as the returned JSON list `[{index (0-based), code, message, details}]`
  (not raised): `not_found` for an unknown account or one of another institution (as source
  or destination); `currency_mismatch` for the source before the destination, and before any
  status or funds check; `account_not_active` for a frozen or closed source and a closed
  destination (a frozen one receives); `insufficient_funds` with `{account_id, available,
  amount}` when a customer source has less available than the amount (an internal one may go
  negative), checked after the source's status and before the destination's.
- Checks run item after item on running balances: an item may spend what an earlier one
  credited, and not what a later one will.
- `p_atomic`: the first refusal alone is returned and nothing is written, even when earlier
  items passed. Otherwise refused items are skipped, every refusal is returned in order, and
  the passing items are written exactly: journals as given, two entries per item (debit then
  credit, at `p_now`), balances, `updated_at = p_now` on the touched accounts only, the items'
  rows, statement lines and events; nothing of a refused item.
- Misuse raises (not returned): arrays or JSON arrays of another length, a source equal to its
  destination, a non-positive amount.
- A real committed call passes the deferred journal-balance trigger; `ledger_breaches() == []`.
- For random movements among three accounts, `tx_post_many(atomic=false)` leaves the same
  balances and refuses the same items with the same errors as `post()` called once per
  movement, in order, on a twin set of accounts.
"""

import json
import random
from dataclasses import dataclass
from datetime import timedelta
from types import SimpleNamespace

import psycopg.errors
import pytest
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from accounts.models import Account, Entry, Journal, StatementLine
from accounts.posting import Movement as PostingMovement
from accounts.posting import credit, debit, post, post_many
from accounts.services import hold_place
from accounts.verification import ledger_breaches
from core.actors import SYSTEM
from core.exceptions import InsufficientFunds, NotFound, TXError
from core.rows import as_row
from events.models import Event
from transfers.models import Transfer
from transfers.services import transfer_new

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
ACTIVE, FROZEN, CLOSED = Account.Status.ACTIVE, Account.Status.FROZEN, Account.Status.CLOSED

TX_POST_MANY = (
    "SELECT tx_post_many(%s, %s, %s, %s::text[], %s::text[], %s::bigint[], %s::text[], "
    "%s::jsonb, %s, %s::jsonb, %s::jsonb, %s::jsonb)"
)
NOT_FOUND_MESSAGE = "An account of this operation does not exist."


# --- Calling the function -----------------------------------------------------------------------


@dataclass
class Item:
    """One movement of a call: its ids and amount, and the rows that record it (built by
    `transfers.services.transfer_new`, as a transfer batch builds them)."""

    source_id: str
    destination_id: str
    amount: int
    currency: str
    journal: Journal
    transfer: Transfer
    lines: list
    event: Event


def item(bank, source, destination, amount, currency="EUR", description="batch") -> Item:
    """A transfer item from `source` to `destination` (Accounts; an unsaved Account is an
    unknown id)."""
    new = transfer_new(
        institution=bank.fi,
        source=source,
        destination=destination,
        amount=amount,
        currency=currency,
        description=description,
        actor=SYSTEM,
    )
    return Item(
        source.pk, destination.pk, amount, currency, new.journal, new.transfer, new.lines, new.event
    )


def arguments(institution_id, items, *, atomic, now=None) -> list:
    """tx_post_many's twelve arguments, built as `post_many()` builds them."""
    return [
        institution_id,
        now if now is not None else timezone.now(),
        atomic,
        [one.source_id for one in items],
        [one.destination_id for one in items],
        [one.amount for one in items],
        [one.currency for one in items],
        json.dumps([as_row(one.journal) for one in items]),
        Transfer._meta.db_table,
        json.dumps([as_row(one.transfer) for one in items]),
        json.dumps([[as_row(line) for line in one.lines] for one in items]),
        json.dumps([as_row(one.event) for one in items]),
    ]


def execute(args) -> list[dict]:
    with connection.cursor() as cursor:
        cursor.execute(TX_POST_MANY, args)
        (answer,) = cursor.fetchone()
    return json.loads(answer) if isinstance(answer, str) else answer


def tx_post_many(institution_id, items, *, atomic, now=None) -> list[dict]:
    """The refusals the call returns."""
    return execute(arguments(institution_id, items, atomic=atomic, now=now))


def refused_alone(bank, items, *, atomic=True) -> dict:
    """The one refusal of a call (of one item, or atomic) that must write nothing."""
    before = ledger_state()
    refusals = tx_post_many(bank.fi.pk, items, atomic=atomic)
    assert len(refusals) == 1, refusals
    assert ledger_state() == before
    assert_nothing_of(items)
    return refusals[0]


def failure(args):
    """The psycopg error of a call that must raise, its savepoint rolled back."""
    with pytest.raises(DatabaseError) as excinfo:
        with transaction.atomic():
            execute(args)
    return excinfo.value.__cause__


def assert_nothing_of(items) -> None:
    """No row of `items` was written."""
    for one in items:
        assert not Journal.objects.filter(pk=one.journal.pk).exists()
        assert not Entry.objects.filter(journal_id=one.journal.pk).exists()
        assert not Transfer.objects.filter(pk=one.transfer.pk).exists()
        assert not StatementLine.objects.filter(pk__in=[line.pk for line in one.lines]).exists()
        assert not Event.objects.filter(pk=one.event.pk).exists()


def assert_written(one: Item) -> None:
    """`one`'s rows as given, its two entries (debit then credit) at its journal's instant."""
    assert as_row(Journal.objects.get(pk=one.journal.pk)) == as_row(one.journal)
    entries = Entry.objects.filter(journal_id=one.journal.pk).order_by("pk")
    assert list(entries.values_list("account_id", "direction", "amount", "currency")) == [
        (one.source_id, "debit", one.amount, one.currency),
        (one.destination_id, "credit", one.amount, one.currency),
    ]
    assert {entry.created_at for entry in entries} == {one.journal.created_at}
    assert as_row(Transfer.objects.get(pk=one.transfer.pk)) == as_row(one.transfer)
    assert StatementLine.objects.filter(journal_id=one.journal.pk).count() == len(one.lines)
    for line in one.lines:
        assert as_row(StatementLine.objects.get(pk=line.pk)) == as_row(line)
    assert as_row(Event.objects.get(pk=one.event.pk)) == as_row(one.event)


def refusal(index, code, message, details) -> dict:
    return {"index": index, "code": code, "message": message, "details": details}


@pytest.fixture
def bank():
    return ledger_bank()


# --- 1. not_found --------------------------------------------------------------------------------


@pytest.mark.parametrize("unknown", ["source", "destination"])
def test_an_unknown_account_is_not_found(bank, unknown):
    missing = Account(institution=bank.fi, currency="EUR")  # never saved: an unknown id
    source, destination = (missing, bank.empty) if unknown == "source" else (bank.account, missing)
    assert not Account.objects.filter(pk=missing.pk).exists()
    assert refused_alone(bank, [item(bank, source, destination, 100)]) == refusal(
        0, "not_found", NOT_FOUND_MESSAGE, None
    )


@pytest.mark.parametrize("elsewhere_is", ["source", "destination"])
def test_an_account_of_another_institution_is_not_found(bank, elsewhere_is):
    elsewhere = open_account(institution(), balance=500)
    before = (balance(elsewhere), updated_at(elsewhere))
    if elsewhere_is == "source":
        one = item(bank, elsewhere, bank.empty, 100)
    else:
        one = item(bank, bank.account, elsewhere, 100)
    assert refused_alone(bank, [one]) == refusal(0, "not_found", NOT_FOUND_MESSAGE, None)
    assert (balance(elsewhere), updated_at(elsewhere)) == before


# --- 2. currency_mismatch ------------------------------------------------------------------------


def test_a_destination_in_another_currency_is_a_currency_mismatch(bank):
    assert refused_alone(bank, [item(bank, bank.account, bank.ghs, 100)]) == refusal(
        0,
        "currency_mismatch",
        "The account is in GHS, the request in EUR.",
        {"account_id": bank.ghs.pk, "account_currency": "GHS", "currency": "EUR"},
    )


def test_a_source_in_another_currency_is_a_currency_mismatch(bank):
    assert refused_alone(bank, [item(bank, bank.ghs, bank.account, 100, "GHS")]) == refusal(
        0,
        "currency_mismatch",
        "The account is in EUR, the request in GHS.",
        {"account_id": bank.account.pk, "account_currency": "EUR", "currency": "GHS"},
    )


@pytest.mark.parametrize("reversed_order", [False, True], ids=["eur_to_ghs", "ghs_to_eur"])
def test_the_source_currency_is_checked_before_the_destination(bank, reversed_order):
    # Both accounts differ from the request's USD: the source is reported.
    source, destination = (bank.ghs, bank.account) if reversed_order else (bank.account, bank.ghs)
    answer = refused_alone(bank, [item(bank, source, destination, 100, "USD")])
    assert answer == refusal(
        0,
        "currency_mismatch",
        f"The account is in {source.currency}, the request in USD.",
        {"account_id": source.pk, "account_currency": source.currency, "currency": "USD"},
    )


@pytest.mark.parametrize("source_fails_by", ["insufficient_funds", "account_not_active"])
def test_currencies_are_checked_before_the_sources_status_and_funds(bank, source_fails_by):
    amount = 5000 if source_fails_by == "insufficient_funds" else 100
    if source_fails_by == "account_not_active":
        set_status(bank.account, FROZEN)
    # Into an EUR account, the source fails its own check...
    alone = refused_alone(bank, [item(bank, bank.account, bank.empty, amount)])
    assert alone["code"] == source_fails_by
    # ...but the destination's currency is reported first.
    answer = refused_alone(bank, [item(bank, bank.account, bank.ghs, amount)])
    assert answer["code"] == "currency_mismatch"
    assert answer["details"]["account_id"] == bank.ghs.pk


# --- 3. account_not_active -----------------------------------------------------------------------


@pytest.mark.parametrize("status", [FROZEN, CLOSED])
def test_money_cannot_leave_a_frozen_or_closed_account(bank, status):
    set_status(bank.account, status)
    assert refused_alone(bank, [item(bank, bank.account, bank.empty, 100)]) == refusal(
        0,
        "account_not_active",
        f"The account is {status}: money cannot leave it.",
        {"account_id": bank.account.pk, "status": status},
    )


def test_money_cannot_come_into_a_closed_account(bank):
    set_status(bank.empty, CLOSED)
    assert refused_alone(bank, [item(bank, bank.account, bank.empty, 100)]) == refusal(
        0,
        "account_not_active",
        "The account is closed.",
        {"account_id": bank.empty.pk, "status": "closed"},
    )


def test_money_comes_into_a_frozen_account(bank):
    set_status(bank.empty, FROZEN)
    one = item(bank, bank.account, bank.empty, 100)
    assert tx_post_many(bank.fi.pk, [one], atomic=True) == []
    assert balance(bank.account) == (900, 0, 900)
    assert balance(bank.empty) == (100, 0, 100)
    assert_written(one)
    assert_ledger_ok()


def test_the_source_is_checked_before_the_destination(bank):
    set_status(bank.account, FROZEN)
    set_status(bank.empty, CLOSED)
    answer = refused_alone(bank, [item(bank, bank.account, bank.empty, 100)])
    assert answer["code"] == "account_not_active"
    assert answer["details"] == {"account_id": bank.account.pk, "status": "frozen"}


def test_the_sources_status_is_checked_before_its_funds(bank):
    set_status(bank.account, FROZEN)
    answer = refused_alone(bank, [item(bank, bank.account, bank.empty, 5000)])
    assert answer["code"] == "account_not_active"


def test_the_sources_funds_are_checked_before_the_destinations_status(bank):
    set_status(bank.empty, CLOSED)
    answer = refused_alone(bank, [item(bank, bank.account, bank.empty, 5000)])
    assert answer["code"] == "insufficient_funds"


# --- 4. insufficient_funds -----------------------------------------------------------------------


def test_a_customer_account_without_the_funds_is_refused(bank):
    assert refused_alone(bank, [item(bank, bank.account, bank.empty, 1001)]) == refusal(
        0,
        "insufficient_funds",
        None,  # the class's default message applies
        {"account_id": bank.account.pk, "available": 1000, "amount": 1001},
    )


def test_exactly_the_available_amount_passes(bank):
    assert tx_post_many(bank.fi.pk, [item(bank, bank.account, bank.empty, 1000)], atomic=True) == []
    assert balance(bank.account) == (0, 0, 0)
    assert balance(bank.empty) == (1000, 0, 1000)
    assert_ledger_ok()


def test_the_amount_is_compared_with_available_not_posted(bank):
    hold_place(
        account=bank.account,
        amount=300,
        currency="EUR",
        expires_at=timezone.now() + timedelta(days=1),
        actor=SYSTEM,
    )
    assert balance(bank.account) == (1000, 300, 700)
    answer = refused_alone(bank, [item(bank, bank.account, bank.empty, 701)])
    assert answer["details"] == {"account_id": bank.account.pk, "available": 700, "amount": 701}
    assert tx_post_many(bank.fi.pk, [item(bank, bank.account, bank.empty, 700)], atomic=True) == []
    assert balance(bank.account) == (300, 300, 0)
    assert_ledger_ok()


def test_an_internal_account_may_go_negative(bank):
    assert balance(bank.funding) == (-1000, 0, -1000)
    assert tx_post_many(bank.fi.pk, [item(bank, bank.funding, bank.empty, 500)], atomic=True) == []
    assert balance(bank.funding) == (-1500, 0, -1500)
    assert balance(bank.empty) == (500, 0, 500)
    assert_ledger_ok()


# --- 5. Running balances -------------------------------------------------------------------------


@pytest.mark.parametrize("atomic", [True, False])
def test_an_item_may_spend_what_an_earlier_item_credited(bank, atomic):
    items = [
        item(bank, bank.account, bank.empty, 300),
        item(bank, bank.empty, bank.other, 300),
    ]
    assert tx_post_many(bank.fi.pk, items, atomic=atomic) == []
    assert balance(bank.account) == (700, 0, 700)
    assert balance(bank.empty) == (0, 0, 0)
    assert balance(bank.other) == (300, 0, 300)
    assert_ledger_ok()


def test_an_item_may_not_spend_what_a_later_item_credits(bank):
    items = [
        item(bank, bank.empty, bank.other, 300),  # empty has nothing yet
        item(bank, bank.account, bank.empty, 300),
    ]
    expected = refusal(
        0,
        "insufficient_funds",
        None,
        {"account_id": bank.empty.pk, "available": 0, "amount": 300},
    )
    # Atomic: refused, nothing written (the second item passed its own check).
    assert refused_alone(bank, items) == expected
    # Otherwise the first is skipped, the second posts.
    assert tx_post_many(bank.fi.pk, items, atomic=False) == [expected]
    assert balance(bank.account) == (700, 0, 700)
    assert balance(bank.empty) == (300, 0, 300)
    assert balance(bank.other) == (0, 0, 0)
    assert not Transfer.objects.filter(pk=items[0].transfer.pk).exists()
    assert Transfer.objects.filter(pk=items[1].transfer.pk).exists()
    assert_ledger_ok()


def test_an_item_is_checked_against_what_earlier_items_spent(bank):
    items = [
        item(bank, bank.account, bank.empty, 600),
        item(bank, bank.account, bank.other, 600),  # 400 left
        item(bank, bank.account, bank.other, 400),
    ]
    assert tx_post_many(bank.fi.pk, items, atomic=False) == [
        refusal(
            1,
            "insufficient_funds",
            None,
            {"account_id": bank.account.pk, "available": 400, "amount": 600},
        )
    ]
    assert balance(bank.account) == (0, 0, 0)
    assert balance(bank.empty) == (600, 0, 600)
    assert balance(bank.other) == (400, 0, 400)
    assert_ledger_ok()


# --- 6. atomic: the first refusal, nothing written ----------------------------------------------


def test_an_atomic_call_returns_the_first_refusal_and_writes_nothing(bank):
    set_status(bank.other, CLOSED)
    items = [
        item(bank, bank.account, bank.empty, 100),  # passes
        item(bank, bank.empty, bank.account, 50),  # passes on the running balance
        item(bank, bank.account, bank.empty, 5000),  # insufficient_funds
        item(bank, bank.account, bank.other, 10),  # account_not_active
    ]
    accounts = list(Account.objects.order_by("pk").values())
    answer = refused_alone(bank, items)  # compares ledger_state() before and after
    assert answer == refusal(
        2,
        "insufficient_funds",
        None,
        {"account_id": bank.account.pk, "available": 950, "amount": 5000},
    )
    assert list(Account.objects.order_by("pk").values()) == accounts  # balances, updated_at
    assert ledger_breaches() == []


# --- 7. Not atomic: refused items skipped, the others written exactly ---------------------------


def test_a_call_skips_refused_items_and_writes_the_others_exactly(bank):
    set_status(bank.other, CLOSED)
    bystander = open_account(bank.fi, balance=50)  # named by a refused item only
    items = [
        item(bank, bank.account, bank.empty, 300, description="rent"),
        item(bank, bank.account, bank.other, 10),  # closed destination
        item(bank, bank.empty, bank.funding, 100, description="fee"),
        item(bank, bystander, bank.empty, 51),  # insufficient_funds
        item(bank, bank.funding, bank.account, 20, description="refund"),
    ]
    untouched = {a.pk: updated_at(a) for a in (bank.other, bystander, bank.settlement)}
    counts = (Journal.objects.count(), Entry.objects.count(), Event.objects.count())
    now = timezone.now() + timedelta(seconds=1)  # p_now, not the journals' time
    assert tx_post_many(bank.fi.pk, items, atomic=False, now=now) == [
        refusal(
            1,
            "account_not_active",
            "The account is closed.",
            {"account_id": bank.other.pk, "status": "closed"},
        ),
        refusal(
            3,
            "insufficient_funds",
            None,
            {"account_id": bystander.pk, "available": 50, "amount": 51},
        ),
    ]
    # The passing items, as given, their entries at their journals' instants (not p_now);
    # nothing of the refused ones.
    written, refused = [items[0], items[2], items[4]], [items[1], items[3]]
    for one in written:
        assert_written(one)
    assert_nothing_of(refused)
    assert (Journal.objects.count(), Entry.objects.count(), Event.objects.count()) == (
        counts[0] + 3,
        counts[1] + 6,
        counts[2] + 3,
    )
    # Entries in item order, debit then credit.
    entries = Entry.objects.filter(journal_id__in=[one.journal.pk for one in written])
    assert list(entries.order_by("pk").values_list("journal_id", "direction")) == [
        (one.journal.pk, direction) for one in written for direction in ("debit", "credit")
    ]
    # Balances, and updated_at = p_now on the touched accounts only.
    assert balance(bank.account) == (720, 0, 720)
    assert balance(bank.empty) == (200, 0, 200)
    assert balance(bank.funding) == (-970, 0, -970)  # -1000, -50 (bystander), +100, -20
    assert balance(bank.other) == (0, 0, 0)
    assert balance(bystander) == (50, 0, 50)
    for account in (bank.account, bank.empty, bank.funding):
        assert updated_at(account) == now
    assert {a.pk: updated_at(a) for a in (bank.other, bystander, bank.settlement)} == untouched
    # Internal accounts have no statement lines: the funding items wrote one line each.
    assert len(items[2].lines) == len(items[4].lines) == 1
    assert_ledger_ok()


def test_a_call_refusing_every_item_writes_nothing(bank):
    set_status(bank.empty, FROZEN)
    items = [
        item(bank, bank.empty, bank.account, 10),  # frozen source
        item(bank, bank.account, bank.ghs, 10),  # currency
        item(bank, bank.account, bank.empty, 1001),  # funds
    ]
    before = ledger_state()
    answer = tx_post_many(bank.fi.pk, items, atomic=False)
    assert [(one["index"], one["code"]) for one in answer] == [
        (0, "account_not_active"),
        (1, "currency_mismatch"),
        (2, "insufficient_funds"),
    ]
    assert ledger_state() == before
    assert_nothing_of(items)


# --- 8. Misuse raises ---------------------------------------------------------------------------


def misuse(bank, args) -> None:
    before = ledger_state()
    error = failure(args)
    assert isinstance(error, psycopg.errors.RaiseException)
    assert error.sqlstate != "TX001"
    assert error.diag.message_primary.startswith("tx_post_many: one source, destination"), (
        error.diag.message_primary
    )
    assert ledger_state() == before


def two_items(bank) -> list[Item]:
    return [item(bank, bank.account, bank.empty, 100), item(bank, bank.empty, bank.other, 50)]


@pytest.mark.parametrize(
    "short",
    ["sources", "destinations", "amounts", "currencies", "journals", "rows", "lines", "events"],
)
def test_arrays_of_another_length_raise(bank, short):
    args = arguments(bank.fi.pk, two_items(bank), atomic=False)
    position = {
        "sources": 3,
        "destinations": 4,
        "amounts": 5,
        "currencies": 6,
        "journals": 7,
        "rows": 9,
        "lines": 10,
        "events": 11,
    }[short]
    value = args[position]
    args[position] = json.dumps(json.loads(value)[:1]) if isinstance(value, str) else value[:1]
    misuse(bank, args)


def test_a_longer_array_raises(bank):
    args = arguments(bank.fi.pk, two_items(bank), atomic=False)
    args[5] = [*args[5], 10]
    misuse(bank, args)


def test_no_item_raises(bank):
    misuse(bank, arguments(bank.fi.pk, [], atomic=False))


def test_a_source_equal_to_its_destination_raises(bank):
    items = two_items(bank)
    items[1].destination_id = items[1].source_id
    misuse(bank, arguments(bank.fi.pk, items, atomic=False))


@pytest.mark.parametrize("amount", [0, -100, None])
def test_a_non_positive_amount_raises(bank, amount):
    items = two_items(bank)
    items[1].amount = amount
    misuse(bank, arguments(bank.fi.pk, items, atomic=False))


# --- 9. A committed call -------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_committed_call_passes_the_journal_balance_trigger(bank):
    set_status(bank.other, CLOSED)
    with transaction.atomic():
        items = [
            item(bank, bank.account, bank.empty, 250),
            item(bank, bank.account, bank.other, 10),  # refused
            item(bank, bank.empty, bank.funding, 50),
        ]
        answer = tx_post_many(bank.fi.pk, items, atomic=False)
    # Committed: the deferred triggers fired at COMMIT and let it through.
    assert not connection.in_atomic_block
    assert [one["index"] for one in answer] == [1]
    assert balance(bank.account) == (750, 0, 750)
    assert balance(bank.empty) == (200, 0, 200)
    assert balance(bank.funding) == (-950, 0, -950)
    assert Transfer.objects.filter(pk__in=[items[0].transfer.pk, items[2].transfer.pk]).count() == 2
    assert not Transfer.objects.filter(pk=items[1].transfer.pk).exists()
    assert ledger_breaches() == []


# --- 10. The wrapper -----------------------------------------------------------------------------


def movement(one: Item) -> PostingMovement:
    return PostingMovement(
        one.source_id,
        one.destination_id,
        one.amount,
        one.currency,
        one.journal,
        one.transfer,
        one.lines,
        one.event,
    )


def test_post_many_turns_refusals_into_tx_errors_by_index(bank):
    missing = Account(institution=bank.fi, currency="EUR")
    items = [
        item(bank, bank.account, bank.empty, 100),
        item(bank, bank.account, missing, 100),
        item(bank, bank.empty, bank.other, 101),
    ]
    refused = post_many(
        institution_id=bank.fi.pk, movements=[movement(one) for one in items], atomic=False
    )
    assert sorted(refused) == [1, 2]
    assert isinstance(refused[1], NotFound)
    assert isinstance(refused[2], InsufficientFunds)
    assert refused[2].details == {"account_id": bank.empty.pk, "available": 100, "amount": 101}
    assert refused[2].message == InsufficientFunds.message
    assert items[0].transfer._state.adding is False  # written
    assert Transfer.objects.filter(pk=items[0].transfer.pk).exists()
    assert_ledger_ok()


# --- 11. The two posting paths agree -------------------------------------------------------------


def twin_accounts(fi, starts, statuses) -> list[Account]:
    accounts = [open_account(fi, balance=start) for start in starts]
    for account, status in zip(accounts, statuses, strict=True):
        set_status(account, status)
    return accounts


def normalized(error_code, details, accounts) -> tuple:
    """A refusal with its account ids replaced by their position among `accounts`."""
    positions = {account.pk: index for index, account in enumerate(accounts)}
    if isinstance(details, dict) and "account_id" in details:
        details = {**details, "account_id": positions[details["account_id"]]}
    return error_code, details


@pytest.mark.parametrize("seed", range(8))
def test_the_batch_agrees_with_posting_one_movement_at_a_time(seed):
    rng = random.Random(seed)
    fi = institution()
    starts = [rng.choice([0, 300, 1000, 2000]) for _ in range(3)]
    statuses = [rng.choice([ACTIVE] * 8 + [FROZEN, CLOSED]) for _ in range(3)]
    batch_set = twin_accounts(fi, starts, statuses)
    one_by_one = twin_accounts(fi, starts, statuses)
    plan = []
    for _ in range(20):
        source, destination = rng.sample(range(3), 2)
        amount = rng.choice([1, 50, 100, 250, 400, 800, 1500])
        currency = "GHS" if rng.random() < 0.05 else "EUR"
        plan.append((source, destination, amount, currency))
    bank = SimpleNamespace(fi=fi)

    # The batch path: one call, refused items skipped.
    items = [item(bank, batch_set[s], batch_set[d], a, c) for s, d, a, c in plan]
    batch_refused = post_many(
        institution_id=fi.pk, movements=[movement(one) for one in items], atomic=False
    )

    # The other path: post() per movement, in order, each in a savepoint.
    single_refused = {}
    for index, (s, d, a, c) in enumerate(plan):
        one = item(bank, one_by_one[s], one_by_one[d], a, c)
        try:
            with transaction.atomic():
                post(
                    institution_id=fi.pk,
                    currency=c,
                    moves=[debit(one.source_id, a), credit(one.destination_id, a)],
                    journal=one.journal,
                    rows=[one.transfer],
                    lines=one.lines,
                    events=[one.event],
                )
        except TXError as error:
            single_refused[index] = error

    assert sorted(batch_refused) == sorted(single_refused), plan
    for index, error in batch_refused.items():
        other = single_refused[index]
        assert type(error) is type(other)
        assert error.message == other.message
        assert normalized(error.code, error.details, batch_set) == normalized(
            other.code, other.details, one_by_one
        ), (index, plan)
    assert [balance(a) for a in batch_set] == [balance(a) for a in one_by_one], plan
    for accounts in (batch_set, one_by_one):
        ids = [a.pk for a in accounts]
        assert Transfer.objects.filter(source_account_id__in=ids).count() == len(plan) - len(
            batch_refused
        )
    assert_ledger_ok()
