"""The money services: adjustments, transfers and reversals, holds, account status, and the
two commands that watch over them (`verify_ledger`, `expire_holds`).

Every refused call must change nothing (balances, rows, events); after every test the ledger's
invariants hold, deferred trigger included (`helpers.assert_ledger_ok`).
"""

import io
from contextlib import contextmanager
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.core.management import call_command
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import Account, Entry, Hold, StatementLine
from accounts.services import (
    account_set_status,
    adjustment_create,
    hold_capture,
    hold_place,
    hold_release,
    holds_expire,
)
from core.actors import SYSTEM
from core.exceptions import (
    AccountNotActive,
    AccountNotEmpty,
    AmountExceedsRemaining,
    CurrencyMismatch,
    InsufficientFunds,
    InvalidStateTransition,
    NotFound,
    ValidationFailed,
)
from events.models import Event
from events.payloads import event_payload
from transfers.models import Transfer
from transfers.services import transfer_create, transfer_reverse

from .helpers import (
    GHS_PREPAID,
    assert_ledger_ok,
    balance,
    institution,
    internal,
    ledger_state,
    load,
    open_account,
)

pytestmark = pytest.mark.django_db

FUNDING = Account.InternalCode.FUNDING
SETTLEMENT = Account.InternalCode.SETTLEMENT
LINE_FIELDS = ("account_id", "type", "settlement_status", "amount", "currency", "description")


@pytest.fixture(autouse=True)
def ledger_check(db):
    """After each test the ledger holds; a test that corrupts it on purpose sets `enabled`."""
    check = SimpleNamespace(enabled=True)
    yield check
    if check.enabled:
        assert_ledger_ok()


@pytest.fixture
def fi():
    return institution()


@contextmanager
def refused(error_class):
    """The block raises `error_class` and leaves every money table and the events as they were.

    The services run without a savepoint of their own (`atomic(savepoint=False)`): like the API
    view, the caller gives a refusal one, or the refusal spoils the caller's transaction."""
    before = ledger_state()
    with pytest.raises(error_class) as excinfo:
        with transaction.atomic():
            yield excinfo
    assert ledger_state() == before


def entries(journal) -> list[tuple]:
    return sorted(
        Entry.objects.filter(journal=journal).values_list(
            "account_id", "direction", "amount", "currency"
        )
    )


def lines(**filters) -> list[tuple]:
    return list(StatementLine.objects.filter(**filters).order_by("id").values_list(*LINE_FIELDS))


def events(type_: str) -> list[tuple]:
    return [
        (event.institution_id, event.object_type, event.object_id, event_payload(event)["data"])
        for event in Event.objects.filter(type=type_).order_by("id")
    ]


def adjust(account, direction, amount, currency="EUR", description=""):
    return adjustment_create(
        account=account,
        direction=direction,
        amount=amount,
        currency=currency,
        description=description,
        actor=SYSTEM,
    )


def transfer(source, destination, amount, currency="EUR", description=""):
    return transfer_create(
        institution=source.institution,
        source=source,
        destination=destination,
        amount=amount,
        currency=currency,
        description=description,
        actor=SYSTEM,
    )


def place(account, amount, *, expires_at=None, currency="EUR", reason=""):
    return hold_place(
        account=account,
        amount=amount,
        currency=currency,
        expires_at=expires_at or timezone.now() + timedelta(days=7),
        reason=reason,
        actor=SYSTEM,
    )


def set_status(account, status):
    return account_set_status(account=account, status=status)


# --- Adjustments --------------------------------------------------------------------------------


def test_amounts_past_32_bits_post_exactly_after_the_statement_is_reused(fi):
    """Amounts are bigint end to end. The same posting statement run many times with small
    amounts, then with one past 2**31 (a database driver that prepares a statement after a few
    runs may fix its parameter types from the first ones): every cent arrives."""
    account = open_account(fi)
    for _ in range(7):
        load(account, 1)
    big = 10**12
    load(account, big)
    assert balance(account) == (big + 7, 0, big + 7)


def test_transfers_and_holds_past_32_bits_are_exact_after_their_statements_are_reused(fi):
    """The same for a transfer and a hold: parameters are bound server-side and a statement is
    prepared after a few runs (config/settings/base.py); an amount past 2**31 must not take the
    types of the small ones before it."""
    source = open_account(fi, balance=3 * 10**12)
    destination = open_account(fi)
    for _ in range(7):
        transfer(source, destination, 1)
        place(source, 1)
    big = 10**12 + 1
    transfer(source, destination, big)
    place(source, big)
    assert balance(destination) == (big + 7, 0, big + 7)
    assert balance(source) == (3 * 10**12 - big - 7, big + 7, 3 * 10**12 - 2 * (big + 7))


def test_a_credit_adjustment_loads_the_account_against_the_funding_account(fi):
    account = open_account(fi)
    assert internal(fi, FUNDING) is None

    adjustment = adjust(account, "credit", 1050, description="Top-up")

    funding = internal(fi, FUNDING)
    assert balance(account) == (1050, 0, 1050)
    assert balance(funding) == (-1050, 0, -1050)
    assert (
        adjustment.institution_id,
        adjustment.account_id,
        adjustment.direction,
        adjustment.amount,
        adjustment.currency,
        adjustment.description,
    ) == (fi.pk, account.pk, "credit", 1050, "EUR", "Top-up")
    journal = adjustment.journal
    assert (journal.institution_id, journal.kind, journal.description) == (
        fi.pk,
        "adjustment",
        "Top-up",
    )
    assert entries(journal) == sorted(
        [(funding.pk, "debit", 1050, "EUR"), (account.pk, "credit", 1050, "EUR")]
    )
    assert lines(journal=journal) == [(account.pk, "CashInc", "Presentment", 1050, "EUR", "Top-up")]
    assert list(StatementLine.objects.values_list("adjustment_id", "transfer_id", "hold_id")) == [
        (adjustment.pk, None, None)
    ]
    assert events("adjustment.posted") == [
        (
            fi.pk,
            "adjustment",
            adjustment.pk,
            {"accountId": account.pk, "direction": "credit", "amount": 1050, "currency": "EUR"},
        )
    ]


def test_a_debit_adjustment_unloads_the_account_to_the_funding_account(fi):
    account = open_account(fi, balance=1000)

    adjustment = adjust(account, "debit", 400, description="Payout")

    funding = internal(fi, FUNDING)
    assert balance(account) == (600, 0, 600)
    assert balance(funding) == (-600, 0, -600)
    assert entries(adjustment.journal) == sorted(
        [(account.pk, "debit", 400, "EUR"), (funding.pk, "credit", 400, "EUR")]
    )
    assert lines(journal=adjustment.journal) == [
        (account.pk, "CashDec", "Presentment", 400, "EUR", "Payout")
    ]
    assert lines(account=funding) == []  # internal accounts have no statement
    assert events("adjustment.posted")[-1] == (
        fi.pk,
        "adjustment",
        adjustment.pk,
        {"accountId": account.pk, "direction": "debit", "amount": 400, "currency": "EUR"},
    )


def test_a_debit_adjustment_needs_the_available_funds(fi):
    account = open_account(fi, balance=1000)
    place(account, 300)
    assert balance(account) == (1000, 300, 700)

    with refused(InsufficientFunds) as excinfo:
        adjust(account, "debit", 701)
    assert excinfo.value.code == "insufficient_funds"
    assert excinfo.value.details == {"account_id": account.pk, "available": 700, "amount": 701}

    adjust(account, "debit", 700)
    assert balance(account) == (300, 300, 0)


def test_an_adjustment_in_another_currency_is_refused_and_creates_nothing(fi):
    account = open_account(fi)  # no load yet: the funding account does not exist
    with refused(CurrencyMismatch) as excinfo:
        adjust(account, "credit", 100, currency="GHS")
    assert excinfo.value.details == {
        "account_id": account.pk,
        "account_currency": "EUR",
        "currency": "GHS",
    }
    assert internal(fi, FUNDING) is None


def test_each_currency_has_its_own_funding_account(fi):
    eur = open_account(fi, balance=500)
    ghs = open_account(fi, product=GHS_PREPAID, balance=700)
    assert balance(eur) == (500, 0, 500)
    assert balance(ghs) == (700, 0, 700)
    assert balance(internal(fi, FUNDING, "EUR")) == (-500, 0, -500)
    assert balance(internal(fi, FUNDING, "GHS")) == (-700, 0, -700)


# --- Transfers ----------------------------------------------------------------------------------


def test_a_transfer_moves_money_between_two_accounts(fi):
    source = open_account(fi, balance=1000)
    destination = open_account(fi, balance=10)

    moved = transfer(source, destination, 250, description="Rent")

    assert balance(source) == (750, 0, 750)
    assert balance(destination) == (260, 0, 260)
    assert (
        moved.institution_id,
        moved.source_account_id,
        moved.destination_account_id,
        moved.amount,
        moved.currency,
        moved.status,
        moved.reversed_amount,
        moved.description,
    ) == (fi.pk, source.pk, destination.pk, 250, "EUR", "posted", 0, "Rent")
    assert (moved.journal.kind, moved.journal.description) == ("transfer", "Rent")
    assert entries(moved.journal) == sorted(
        [(source.pk, "debit", 250, "EUR"), (destination.pk, "credit", 250, "EUR")]
    )
    assert sorted(lines(transfer=moved)) == sorted(
        [
            (source.pk, "CashDec", "Presentment", 250, "EUR", "Rent"),
            (destination.pk, "CashInc", "Presentment", 250, "EUR", "Rent"),
        ]
    )
    assert set(
        StatementLine.objects.filter(transfer=moved).values_list("journal_id", flat=True)
    ) == {moved.journal_id}
    assert events("transfer.posted") == [
        (
            fi.pk,
            "transfer",
            moved.pk,
            {
                "amount": 250,
                "currency": "EUR",
                "sourceAccountId": source.pk,
                "destinationAccountId": destination.pk,
            },
        )
    ]


def test_a_transfer_needs_the_available_funds(fi):
    source = open_account(fi, balance=1000)
    destination = open_account(fi)
    place(source, 400)

    with refused(InsufficientFunds) as excinfo:
        transfer(source, destination, 601)
    assert excinfo.value.details == {"account_id": source.pk, "available": 600, "amount": 601}

    transfer(source, destination, 600)
    assert balance(source) == (400, 400, 0)
    assert balance(destination) == (600, 0, 600)


def test_a_transfer_between_currencies_is_refused(fi):
    eur = open_account(fi, balance=1000)
    eur_too = open_account(fi)
    ghs = open_account(fi, product=GHS_PREPAID, balance=1000)

    with refused(CurrencyMismatch) as excinfo:
        transfer(eur, ghs, 100, currency="EUR")
    assert excinfo.value.details == {
        "account_id": ghs.pk,
        "account_currency": "GHS",
        "currency": "EUR",
    }
    with refused(CurrencyMismatch) as excinfo:
        transfer(ghs, eur, 100, currency="GHS")
    assert excinfo.value.details["account_id"] == eur.pk
    with refused(CurrencyMismatch) as excinfo:
        transfer(eur, eur_too, 100, currency="GHS")
    assert excinfo.value.details == {
        "account_id": eur.pk,
        "account_currency": "EUR",
        "currency": "GHS",
    }


def test_a_transfer_stays_within_one_institution_and_between_two_accounts(fi):
    source = open_account(fi, balance=1000)
    foreign = open_account(institution())
    with refused(NotFound):
        transfer(source, foreign, 100)
    with refused(NotFound):
        transfer_create(
            institution=fi,
            source=foreign,
            destination=source,
            amount=100,
            currency="EUR",
            actor=SYSTEM,
        )
    # The one check that a transfer has two accounts (the API's answer, whatever named them).
    with refused(ValidationFailed) as excinfo:
        transfer(source, source, 100)
    assert (excinfo.value.status, excinfo.value.code) == (400, "validation_error")
    assert excinfo.value.details == {"destination": "Must be another account than the source's."}


# --- Reversals ----------------------------------------------------------------------------------


@pytest.fixture
def posted(fi):
    """A transfer of 1000 from `a` (left with 0) to `b` (left with 1000)."""
    a = open_account(fi, balance=1000)
    b = open_account(fi)
    moved = transfer(a, b, 1000)
    return SimpleNamespace(a=a, b=b, transfer=moved)


def test_a_partial_reversal_sends_part_of_the_transfer_back(fi, posted):
    reversal = transfer_reverse(transfer=posted.transfer, amount=300, actor=SYSTEM)

    moved = Transfer.objects.get(pk=posted.transfer.pk)
    assert (moved.status, moved.reversed_amount, moved.amount) == ("posted", 300, 1000)
    assert (reversal.transfer_id, reversal.amount, reversal.currency) == (moved.pk, 300, "EUR")
    assert balance(posted.a) == (300, 0, 300)
    assert balance(posted.b) == (700, 0, 700)
    description = f"Reversal of {moved.pk}"
    assert (reversal.journal.kind, reversal.journal.description) == (
        "transfer_reversal",
        description,
    )
    assert entries(reversal.journal) == sorted(
        [(posted.b.pk, "debit", 300, "EUR"), (posted.a.pk, "credit", 300, "EUR")]
    )
    assert sorted(lines(journal=reversal.journal)) == sorted(
        [
            (posted.b.pk, "CashDec", "Presentment", 300, "EUR", description),
            (posted.a.pk, "CashInc", "Presentment", 300, "EUR", description),
        ]
    )
    assert StatementLine.objects.filter(journal=reversal.journal, transfer=moved).count() == 2
    assert events("transfer.reversed") == [
        (
            fi.pk,
            "transfer",
            moved.pk,
            {"reversalId": reversal.pk, "amount": 300, "reversedAmount": 300, "currency": "EUR"},
        )
    ]


def test_reversals_add_up_and_a_fully_reversed_transfer_takes_no_more(posted):
    transfer_reverse(transfer=posted.transfer, amount=300, actor=SYSTEM)
    second = transfer_reverse(transfer=posted.transfer, amount=700, actor=SYSTEM)

    moved = Transfer.objects.get(pk=posted.transfer.pk)
    assert (moved.status, moved.reversed_amount) == ("reversed", 1000)
    assert second.amount == 700
    assert balance(posted.a) == (1000, 0, 1000)
    assert balance(posted.b) == (0, 0, 0)
    assert [e[3]["reversedAmount"] for e in events("transfer.reversed")] == [300, 1000]

    for amount in (1, None):
        with refused(InvalidStateTransition) as excinfo:
            transfer_reverse(transfer=moved, amount=amount, actor=SYSTEM)
        assert excinfo.value.code == "invalid_state_transition"
        assert excinfo.value.details == {"from": "reversed", "to": "reversed"}


def test_reversals_never_exceed_the_original(posted):
    transfer_reverse(transfer=posted.transfer, amount=300, actor=SYSTEM)
    with refused(AmountExceedsRemaining) as excinfo:
        transfer_reverse(transfer=posted.transfer, amount=701, actor=SYSTEM)
    assert excinfo.value.code == "amount_exceeds_remaining"
    assert excinfo.value.details == {"amount": 701, "remaining": 700}

    rest = transfer_reverse(transfer=posted.transfer, actor=SYSTEM)  # default: what remains
    assert rest.amount == 700
    moved = Transfer.objects.get(pk=posted.transfer.pk)
    assert (moved.status, moved.reversed_amount) == ("reversed", 1000)
    assert balance(posted.a) == (1000, 0, 1000)
    assert balance(posted.b) == (0, 0, 0)


def test_a_reversal_needs_the_destinations_funds(posted):
    adjust(posted.b, "debit", 800)  # b keeps 200
    with refused(InsufficientFunds) as excinfo:
        transfer_reverse(transfer=posted.transfer, amount=201, actor=SYSTEM)
    assert excinfo.value.details == {"account_id": posted.b.pk, "available": 200, "amount": 201}
    transfer_reverse(transfer=posted.transfer, amount=200, actor=SYSTEM)
    assert balance(posted.b) == (0, 0, 0)
    assert Transfer.objects.get(pk=posted.transfer.pk).reversed_amount == 200


def test_a_reversal_to_a_closed_source_is_refused(posted):
    set_status(posted.a, "closed")  # a sent everything: empty, may close
    with refused(AccountNotActive) as excinfo:
        transfer_reverse(transfer=posted.transfer, amount=100, actor=SYSTEM)
    assert excinfo.value.message == "The account is closed."
    assert excinfo.value.details == {"account_id": posted.a.pk, "status": "closed"}


# --- Holds --------------------------------------------------------------------------------------


def test_a_hold_reduces_the_available_balance_only(fi):
    account = open_account(fi, balance=1000)
    expires_at = timezone.now() + timedelta(hours=2)

    hold = place(account, 300, expires_at=expires_at, reason="Hotel")

    assert balance(account) == (1000, 300, 700)
    hold = Hold.objects.get(pk=hold.pk)
    assert (
        hold.institution_id,
        hold.account_id,
        hold.amount,
        hold.captured_amount,
        hold.currency,
        hold.status,
        hold.reason,
        hold.expires_at,
        hold.capture_journal_id,
        hold.closed_at,
    ) == (fi.pk, account.pk, 300, 0, "EUR", "active", "Hotel", expires_at, None, None)
    assert lines(hold=hold) == []
    assert events("hold.created") == [
        (
            fi.pk,
            "hold",
            hold.pk,
            {"accountId": account.pk, "amount": 300, "capturedAmount": 0, "currency": "EUR"},
        )
    ]


def test_a_hold_needs_the_available_funds_and_the_currency(fi):
    account = open_account(fi, balance=1000)
    place(account, 600)
    with refused(InsufficientFunds) as excinfo:
        place(account, 401)
    assert excinfo.value.details == {"account_id": account.pk, "available": 400, "amount": 401}
    with refused(CurrencyMismatch):
        place(account, 10, currency="GHS")
    place(account, 400)
    assert balance(account) == (1000, 1000, 0)


def test_releasing_a_hold_gives_the_amount_back(fi):
    account = open_account(fi, balance=1000)
    hold = place(account, 300)

    released = hold_release(hold=hold)

    assert balance(account) == (1000, 0, 1000)
    hold = Hold.objects.get(pk=hold.pk)
    assert (hold.status, hold.captured_amount, hold.capture_journal_id) == ("released", 0, None)
    assert hold.closed_at is not None
    assert released.status == "released"
    assert events("hold.released") == [
        (
            fi.pk,
            "hold",
            hold.pk,
            {"accountId": account.pk, "amount": 300, "capturedAmount": 0, "currency": "EUR"},
        )
    ]
    with refused(InvalidStateTransition) as excinfo:
        hold_release(hold=hold)
    assert excinfo.value.details == {"from": "released", "to": "released"}
    with refused(InvalidStateTransition) as excinfo:
        hold_capture(hold=hold)
    assert excinfo.value.details == {"from": "released", "to": "captured"}


def test_capturing_a_whole_hold_moves_it_to_the_settlement_account(fi):
    account = open_account(fi, balance=1000)
    hold = place(account, 300, reason="Taxi")

    captured = hold_capture(hold=hold)

    settlement = internal(fi, SETTLEMENT)
    assert balance(account) == (700, 0, 700)
    assert balance(settlement) == (300, 0, 300)
    hold = Hold.objects.get(pk=hold.pk)
    assert (hold.status, hold.amount, hold.captured_amount) == ("captured", 300, 300)
    assert hold.capture_journal_id == captured.capture_journal_id
    assert hold.closed_at is not None
    journal = hold.capture_journal
    assert (journal.kind, journal.description) == ("hold_capture", "Taxi")
    assert entries(journal) == sorted(
        [(account.pk, "debit", 300, "EUR"), (settlement.pk, "credit", 300, "EUR")]
    )
    assert lines(hold=hold) == [(account.pk, "CashDec", "Presentment", 300, "EUR", "Taxi")]
    assert StatementLine.objects.get(hold=hold).journal_id == journal.pk
    assert events("hold.captured") == [
        (
            fi.pk,
            "hold",
            hold.pk,
            {"accountId": account.pk, "amount": 300, "capturedAmount": 300, "currency": "EUR"},
        )
    ]
    with refused(InvalidStateTransition) as excinfo:
        hold_capture(hold=hold)
    assert excinfo.value.details == {"from": "captured", "to": "captured"}
    with refused(InvalidStateTransition):
        hold_release(hold=hold)


def test_a_partial_capture_releases_the_rest(fi):
    account = open_account(fi, balance=1000)
    hold = place(account, 300)
    place(account, 100)  # another hold stays active
    assert balance(account) == (1000, 400, 600)

    hold_capture(hold=hold, amount=120)

    assert balance(account) == (880, 100, 780)
    assert balance(internal(fi, SETTLEMENT)) == (120, 0, 120)
    hold = Hold.objects.get(pk=hold.pk)
    assert (hold.status, hold.amount, hold.captured_amount) == ("captured", 300, 120)
    assert entries(hold.capture_journal) == sorted(
        [(account.pk, "debit", 120, "EUR"), (internal(fi, SETTLEMENT).pk, "credit", 120, "EUR")]
    )
    assert lines(hold=hold) == [(account.pk, "CashDec", "Presentment", 120, "EUR", "")]
    assert events("hold.captured")[0][3]["capturedAmount"] == 120


def test_a_capture_never_exceeds_the_hold(fi):
    account = open_account(fi, balance=1000)
    hold = place(account, 300)
    with refused(AmountExceedsRemaining) as excinfo:
        hold_capture(hold=hold, amount=301)
    assert excinfo.value.details == {"amount": 301, "held": 300}
    assert Hold.objects.get(pk=hold.pk).status == "active"


def test_a_hold_on_an_account_frozen_since_cannot_be_captured(fi):
    account = open_account(fi, balance=1000)
    hold = place(account, 300)
    set_status(account, "frozen")
    with refused(AccountNotActive) as excinfo:
        hold_capture(hold=hold)
    assert excinfo.value.details == {"account_id": account.pk, "status": "frozen"}
    hold_release(hold=hold)  # a release is still possible
    assert balance(account) == (1000, 0, 1000)


# --- Expiry -------------------------------------------------------------------------------------


def test_holds_expire_expires_only_the_active_holds_that_are_due(fi):
    account = open_account(fi, balance=1000)
    now = timezone.now()
    past = now - timedelta(minutes=1)
    due = place(account, 100, expires_at=past)
    due_now = place(account, 50, expires_at=now)  # expiresAt <= now is due
    future = place(account, 200, expires_at=now + timedelta(seconds=1))
    released = place(account, 10, expires_at=past)
    hold_release(hold=released)
    captured = place(account, 20, expires_at=now + timedelta(minutes=1))
    hold_capture(hold=captured)  # in time (a hold past expiry cannot be captured)
    Hold.objects.filter(pk=captured.pk).update(expires_at=past)
    assert balance(account) == (980, 350, 630)

    assert holds_expire(now=now) == 2

    statuses = dict(Hold.objects.values_list("pk", "status"))
    assert statuses == {
        due.pk: "expired",
        due_now.pk: "expired",
        future.pk: "active",
        released.pk: "released",
        captured.pk: "captured",
    }
    assert balance(account) == (980, 200, 780)
    assert sorted(event[2] for event in events("hold.expired")) == sorted([due.pk, due_now.pk])
    assert events("hold.expired")[0][3]["capturedAmount"] == 0
    assert holds_expire(now=now) == 0  # nothing left to do
    assert len(events("hold.expired")) == 2


def test_holds_expire_works_through_batches(fi):
    account = open_account(fi, balance=1000)
    past = timezone.now() - timedelta(hours=1)
    holds = [place(account, 10 * (i + 1), expires_at=past) for i in range(5)]
    assert holds_expire(batch_size=2) == 5
    assert set(Hold.objects.values_list("status", flat=True)) == {"expired"}
    assert balance(account) == (1000, 0, 1000)
    assert sorted(event[2] for event in events("hold.expired")) == sorted(h.pk for h in holds)


def test_the_expire_holds_command(fi):
    account = open_account(fi, balance=1000)
    due = place(account, 100, expires_at=timezone.now() - timedelta(seconds=1))
    place(account, 200, expires_at=timezone.now() + timedelta(days=1))

    out = io.StringIO()
    call_command("expire_holds", stdout=out)
    assert (
        out.getvalue() == "Expired 1 hold(s), 0 card authorization(s) and 0 pending transfer(s).\n"
    )
    assert Hold.objects.get(pk=due.pk).status == "expired"
    assert balance(account) == (1000, 200, 800)

    out = io.StringIO()
    call_command("expire_holds", stdout=out)
    assert (
        out.getvalue() == "Expired 0 hold(s), 0 card authorization(s) and 0 pending transfer(s).\n"
    )


# --- Account status -----------------------------------------------------------------------------


def test_a_frozen_account_takes_money_in_but_lets_none_out(fi):
    account = open_account(fi, balance=1000)
    other = open_account(fi, balance=1000)
    incoming = transfer(other, account, 100)
    set_status(account, "frozen")

    adjust(account, "credit", 50)
    transfer(other, account, 25)
    assert balance(account) == (1175, 0, 1175)

    frozen = {"account_id": account.pk, "status": "frozen"}
    for attempt in (
        lambda: adjust(account, "debit", 1),
        lambda: transfer(account, other, 1),
        lambda: place(account, 1),
        lambda: transfer_reverse(transfer=incoming, amount=1, actor=SYSTEM),
    ):
        with refused(AccountNotActive) as excinfo:
            attempt()
        assert excinfo.value.message == "The account is frozen: money cannot leave it."
        assert excinfo.value.details == frozen

    set_status(account, "active")
    adjust(account, "debit", 175)
    assert balance(account) == (1000, 0, 1000)


def test_a_closed_account_takes_nothing(fi):
    account = open_account(fi)
    other = open_account(fi, balance=1000)
    set_status(account, "closed")

    for attempt in (
        lambda: adjust(account, "credit", 1),
        lambda: transfer(other, account, 1),
    ):
        with refused(AccountNotActive) as excinfo:
            attempt()
        assert excinfo.value.message == "The account is closed."
        assert excinfo.value.details == {"account_id": account.pk, "status": "closed"}
    for attempt in (
        lambda: adjust(account, "debit", 1),
        lambda: transfer(account, other, 1),
        lambda: place(account, 1),
    ):
        with refused(AccountNotActive) as excinfo:
            attempt()
        assert excinfo.value.details == {"account_id": account.pk, "status": "closed"}


def test_closing_needs_a_zero_balance_and_no_active_hold(fi):
    account = open_account(fi, balance=100)
    with refused(AccountNotEmpty) as excinfo:
        set_status(account, "closed")
    assert excinfo.value.code == "account_not_empty"
    assert excinfo.value.details == {"posted": 100, "pending": 0}

    hold = place(account, 100)
    with refused(AccountNotEmpty) as excinfo:
        set_status(account, "closed")
    assert excinfo.value.details == {"posted": 100, "pending": 100}
    set_status(account, "frozen")  # the same rule from the frozen state
    with refused(AccountNotEmpty) as excinfo:
        set_status(account, "closed")
    assert excinfo.value.details == {"posted": 100, "pending": 100}
    set_status(account, "active")

    hold_capture(hold=hold)
    assert balance(account) == (0, 0, 0)
    closed = set_status(account, "closed")
    assert (closed.value.status, closed.changed, closed.previous) == ("closed", True, "active")
    assert Account.objects.get(pk=account.pk).status == "closed"
    assert [event[2:] for event in events("account.status_changed")] == [
        (account.pk, {"from": "active", "to": "frozen"}),
        (account.pk, {"from": "frozen", "to": "active"}),
        (account.pk, {"from": "active", "to": "closed"}),
    ]


def test_closing_is_refused_while_a_hold_rests_on_an_overdraft(fi):
    # With an overdraft a hold can exist on a zero posted balance: then only the pending amount
    # and the active hold stop the closing.
    account = open_account(fi)
    Account.objects.filter(pk=account.pk).update(overdraft_limit=100)  # an overdraft product's
    hold = place(account, 60)
    assert balance(account) == (0, 60, 40)
    with refused(AccountNotEmpty) as excinfo:
        set_status(account, "closed")
    assert excinfo.value.details == {"posted": 0, "pending": 60}
    hold_release(hold=hold)
    assert set_status(account, "closed").value.status == "closed"


def test_closed_is_terminal(fi):
    account = open_account(fi)
    set_status(account, "closed")
    for status in ("active", "frozen"):
        with refused(InvalidStateTransition) as excinfo:
            set_status(account, status)
        assert excinfo.value.details == {"from": "closed", "to": status}
    set_status(account, "closed")  # the current status: nothing happens
    assert len(events("account.status_changed")) == 1


# --- verify_ledger ------------------------------------------------------------------------------


def verify_ledger() -> tuple[int, str]:
    """Run the command: (exit status, output)."""
    out = io.StringIO()
    try:
        call_command("verify_ledger", stdout=out)
    except SystemExit as exit_:
        return exit_.code, out.getvalue()
    return 0, out.getvalue()


@pytest.fixture
def busy(fi):
    """A ledger that has seen every kind of journal."""
    a = open_account(fi, balance=1000)
    b = open_account(fi, product=GHS_PREPAID, balance=500)
    c = open_account(fi)
    moved = transfer(a, c, 400)
    transfer_reverse(transfer=moved, amount=150, actor=SYSTEM)
    hold_capture(hold=place(a, 100), amount=60)
    hold_release(hold=place(a, 50))
    place(a, 25)
    adjust(b, "debit", 200, currency="GHS")
    return SimpleNamespace(a=a, b=b, c=c)


def test_verify_ledger_passes_a_clean_ledger(busy):
    assert verify_ledger() == (0, "Ledger OK: 26 checks passed.\n")


def test_verify_ledger_reports_a_stored_posted_balance_that_drifted(fi, busy, ledger_check):
    ledger_check.enabled = False
    funding = internal(fi, FUNDING)
    assert balance(funding) == (-1000, 0, -1000)
    Account.objects.filter(pk=funding.pk).update(posted=F("posted") + 7)  # internal: no CHECK

    assert verify_ledger() == (
        1,
        "BREACH: accounts whose posted balance is not the sum of their entries (1):\n"
        f"  ('{funding.pk}', -993, -1000)\n"
        "BREACH: accounts whose posted balance is not their last entry's balance_after (1):\n"
        f"  ('{funding.pk}', -993, -1000)\n"
        "BREACH: institutions whose balances do not sum to zero per currency (1):\n"
        f"  ('{fi.pk}', 'EUR', 7)\n",
    )
    Account.objects.filter(pk=funding.pk).update(posted=F("posted") - 7)
    assert verify_ledger() == (0, "Ledger OK: 26 checks passed.\n")


def test_verify_ledger_reports_a_stored_pending_balance_that_drifted(busy, ledger_check):
    ledger_check.enabled = False
    Account.objects.filter(pk=busy.a.pk).update(pending=F("pending") + 5)
    assert verify_ledger() == (
        1,
        "BREACH: accounts whose pending balance is not the sum of their active holds (1):\n"
        f"  ('{busy.a.pk}', 30, 25)\n",
    )


def test_verify_ledger_reports_an_unbalanced_journal(busy):
    # Before the commit the deferred trigger has not fired: verify_ledger sees what it would.
    with transaction.atomic():
        journal = adjust(busy.c, "credit", 1).journal
        Entry.objects.create(
            journal=journal,
            account=busy.c,
            direction="debit",
            amount=1,
            currency="EUR",
            balance_after=250,  # the ledger rule's running balance (balance_after.sql)
        )
        assert verify_ledger() == (
            1,
            "BREACH: journals that do not sum to zero per currency (1):\n"
            f"  ('{journal.pk}', 'EUR', -1)\n"
            "BREACH: accounts whose posted balance is not the sum of their entries (1):\n"
            f"  ('{busy.c.pk}', 251, 250)\n"
            "BREACH: accounts whose posted balance is not their last entry's balance_after (1):\n"
            f"  ('{busy.c.pk}', 251, 250)\n",
        )
        transaction.set_rollback(True)
    assert verify_ledger() == (0, "Ledger OK: 26 checks passed.\n")
