"""The money core under real concurrency: real threads, each with its own connection and its own
committed transactions (`transaction=True`).

Correctness comes from row locks taken in one order (`accounts.locks`: the operation's own row,
then its accounts by id, the accounts locked by the posting function, accounts/sql/posting.sql)
and from the funds check made on the locked row.
"""

import queue
import random
import threading
import time
from collections import Counter
from datetime import timedelta

import pytest
from django.db import OperationalError, connection, transaction
from django.db.models import Sum
from django.utils import timezone

from accounts.models import Account, Adjustment, Hold
from accounts.services import (
    adjustment_create,
    hold_capture,
    hold_place,
    holds_expire,
    internal_account,
)
from accounts.verification import ledger_breaches
from core.actors import SYSTEM
from core.exceptions import InsufficientFunds
from events.models import Event
from transfers.models import Transfer
from transfers.services import transfer_create, transfer_reverse

from .helpers import balance, institution, open_account, run_threads

pytestmark = pytest.mark.django_db(transaction=True)


def move(fi, source_id, destination_id, amount):
    # As the API hands them over: loaded, not locked (the posting function locks them).
    accounts = Account.objects.in_bulk([source_id, destination_id])
    return transfer_create(
        institution=fi,
        source=accounts[source_id],
        destination=accounts[destination_id],
        amount=amount,
        currency="EUR",
        actor=SYSTEM,
    )


class Watch(threading.Thread):
    """Runs `ledger_breaches()` over and over until stopped: `seen` lists every breach (or
    error) it met, none is expected while the transfers go on."""

    def __init__(self):
        super().__init__()
        self.stop = threading.Event()
        self.seen = []
        self.runs = 0

    def run(self):
        try:
            while not self.stop.is_set():
                self.seen.extend(ledger_breaches())
                self.runs += 1
                time.sleep(0.01)
        except Exception as error:  # noqa: BLE001 - reported to the test
            self.seen.append(error)
        finally:
            connection.close()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.join(timeout=30)


def test_concurrent_transfers_among_a_few_accounts_keep_the_ledger_exact():
    fi = institution()
    ids = [open_account(fi, balance=2000).pk for _ in range(4)]
    initial = {pk: 2000 for pk in ids}

    def work(index):
        rng = random.Random(index)
        posted, refused = [], 0
        for _ in range(25):
            source, destination = rng.sample(ids, 2)
            amount = rng.randint(1, 1500)
            try:
                move(fi, source, destination, amount)
            except InsufficientFunds:
                refused += 1
            else:
                posted.append((source, destination, amount))
        return posted, refused

    with Watch() as watch:
        results = run_threads(8, work)

    posted = [done for moves, _ in results for done in moves]
    refused = sum(count for _, count in results)
    assert len(posted) + refused == 8 * 25
    assert posted  # the lock lets transfers through, it does not only refuse them
    expected = dict(initial)
    for source, destination, amount in posted:
        expected[source] -= amount
        expected[destination] += amount
    assert dict(Account.objects.filter(pk__in=ids).values_list("pk", "posted")) == expected
    assert Transfer.objects.count() == len(posted)
    assert Event.objects.filter(type="transfer.posted").count() == len(posted)
    assert Account.objects.filter(institution=fi).aggregate(total=Sum("posted")) == {"total": 0}
    assert not Account.objects.filter(kind="customer", available__lt=0).exists()
    assert ledger_breaches() == []
    assert watch.runs > 0
    assert watch.seen == []


HOT_FUNDS, HOT_AMOUNT, THREADS, ATTEMPTS = 1000, 70, 8, 4  # 32 attempts, 14 can pass


def debit_by_transfer(fi, hot, sink):
    move(fi, hot.pk, sink.pk, HOT_AMOUNT)


def debit_by_adjustment(fi, hot, sink):
    adjustment_create(
        account=hot,
        direction=Adjustment.Direction.DEBIT,
        amount=HOT_AMOUNT,
        currency="EUR",
        actor=SYSTEM,
    )


def debit_by_hold(fi, hot, sink):
    hold_place(
        account=hot,
        amount=HOT_AMOUNT,
        currency="EUR",
        expires_at=timezone.now() + timedelta(days=1),
        actor=SYSTEM,
    )


@pytest.mark.parametrize(
    "debit, left",
    [
        (debit_by_transfer, (20, 0, 20)),
        (debit_by_adjustment, (20, 0, 20)),
        (debit_by_hold, (1000, 980, 20)),
    ],
    ids=["transfer", "adjustment", "hold"],
)
def test_a_hot_account_lets_exactly_its_funds_go(debit, left):
    fi = institution()
    hot = open_account(fi, balance=HOT_FUNDS)
    sink = open_account(fi)

    def work(index):
        outcomes = Counter()
        for _ in range(ATTEMPTS):
            try:
                debit(fi, hot, sink)
            except InsufficientFunds:
                outcomes["refused"] += 1
            else:
                outcomes["passed"] += 1
        return outcomes

    with Watch() as watch:
        outcomes = sum(run_threads(THREADS, work), Counter())

    passed = HOT_FUNDS // HOT_AMOUNT
    assert outcomes == {"passed": passed, "refused": THREADS * ATTEMPTS - passed}
    assert balance(hot) == left
    assert HOT_FUNDS - passed * HOT_AMOUNT == left[2]
    assert ledger_breaches() == []
    assert watch.seen == []


# --- Lock order ---------------------------------------------------------------------------------
# The posting function takes the locks inside PostgreSQL, so the order is observed from outside:
# the test holds one row, the operation (in a thread) queues behind it, and a NOWAIT probe shows
# which rows the operation holds while it waits.


def locked_elsewhere(model, pk) -> bool:
    """Whether another transaction holds the row's lock (probed NOWAIT, in a savepoint of the
    test's own transaction)."""
    try:
        with transaction.atomic():
            list(model.objects.select_for_update(nowait=True).filter(pk=pk).values_list("pk"))
    except OperationalError:
        return True
    return False


def held_while_blocked(run, blocker) -> dict:
    """Run `run` in a thread while the test holds the row `blocker` (model, pk); once it waits
    for that row, report which of the rows named in `probes` it holds."""

    def probe(rows):
        pids, errors = queue.Queue(), []
        with transaction.atomic():
            model, pk = blocker
            model.objects.select_for_update().get(pk=pk)
            thread = in_thread(run, pids, errors)
            wait_until_blocked(pids.get(timeout=10))
            held = {name: locked_elsewhere(model, pk) for name, (model, pk) in rows.items()}
        thread.join(timeout=30)
        assert not thread.is_alive() and errors == []
        return held

    return probe


def test_a_transfer_locks_both_accounts_in_id_order_before_any_write():
    fi = institution()
    low, high = sorted(
        (open_account(fi, balance=1000), open_account(fi, balance=1000)), key=lambda a: a.pk
    )
    for source, destination in ((low, high), (high, low)):
        # Waiting for the higher account, it holds the lower one...
        probe = held_while_blocked(
            lambda s=source, d=destination: move(fi, s.pk, d.pk, 10), (Account, high.pk)
        )
        assert probe({"low": (Account, low.pk)}) == {"low": True}
        # ...and waiting for the lower one, it holds nothing yet.
        probe = held_while_blocked(
            lambda s=source, d=destination: move(fi, s.pk, d.pk, 10), (Account, low.pk)
        )
        assert probe({"high": (Account, high.pk)}) == {"high": False}
    assert balance(low) == (1000, 0, 1000)
    assert balance(high) == (1000, 0, 1000)
    assert ledger_breaches() == []


def test_reversals_and_captures_lock_their_own_row_then_the_accounts_in_id_order():
    fi = institution()
    low, high = sorted(
        (open_account(fi, balance=1000), open_account(fi, balance=1000)), key=lambda a: a.pk
    )
    moved = move(fi, high.pk, low.pk, 100)  # from the higher id to the lower

    def reverse():
        transfer_reverse(transfer=moved, amount=20, actor=SYSTEM)

    accounts = {"low": (Account, low.pk), "high": (Account, high.pk)}
    # Waiting for its transfer, a reversal holds no account; then the lower before the higher.
    assert held_while_blocked(reverse, (Transfer, moved.pk))(accounts) == {
        "low": False,
        "high": False,
    }
    assert held_while_blocked(reverse, (Account, high.pk))(
        {"transfer": (Transfer, moved.pk), "low": (Account, low.pk)}
    ) == {"transfer": True, "low": True}
    assert held_while_blocked(reverse, (Account, low.pk))(
        {"transfer": (Transfer, moved.pk), "high": (Account, high.pk)}
    ) == {"transfer": True, "high": False}

    settlement = internal_account(
        institution=fi, code=Account.InternalCode.SETTLEMENT, currency="EUR"
    )  # exists already, as after the institution's first capture
    first, second = sorted([high.pk, settlement.pk])
    for _ in range(2):
        hold = hold_place(
            account=high,
            amount=50,
            currency="EUR",
            expires_at=timezone.now() + timedelta(days=1),
            actor=SYSTEM,
        )
        capture = lambda hold=hold: hold_capture(hold=hold, amount=30)  # noqa: E731
        blocker = (Account, second) if _ == 0 else (Hold, hold.pk)
        held = held_while_blocked(capture, blocker)(
            {"hold": (Hold, hold.pk), "first": (Account, first)}
            if _ == 0
            else {"first": (Account, first), "second": (Account, second)}
        )
        assert held == (
            {"hold": True, "first": True} if _ == 0 else {"first": False, "second": False}
        )
    assert balance(high) == (1000 - 100 + 3 * 20 - 2 * 30, 0, 900)
    assert ledger_breaches() == []


def test_opposite_transfers_at_the_same_time_never_deadlock():
    fi = institution()
    a, b = open_account(fi, balance=100_000).pk, open_account(fi, balance=100_000).pk

    def work(index):
        source, destination = (a, b) if index % 2 else (b, a)
        rng = random.Random(index)
        net = 0
        for round_ in range(20):
            amount = rng.randint(1, 50)
            moved = move(fi, source, destination, amount)
            net += amount
            if round_ % 5 == 4:  # a reversal: the transfer's row, then the same two accounts
                transfer_reverse(transfer=moved, amount=1, actor=SYSTEM)
                net -= 1
        return (source, net)

    results = run_threads(8, work)  # a deadlock would raise psycopg's DeadlockDetected here

    flow = Counter()
    for source, net in results:
        flow[source] += net
    final_a, final_b = 100_000 - flow[a] + flow[b], 100_000 - flow[b] + flow[a]
    assert balance(Account(pk=a)) == (final_a, 0, final_a)
    assert balance(Account(pk=b)) == (final_b, 0, final_b)
    assert Transfer.objects.count() == 8 * 20
    assert ledger_breaches() == []


# --- The expiry job against the transfers ---------------------------------------------------------


def backend_pid() -> int:
    connection.ensure_connection()
    return connection.connection.info.backend_pid


def wait_until_blocked(pid: int) -> None:
    deadline = time.monotonic() + 10
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute("SELECT cardinality(pg_blocking_pids(%s))", [pid])
            if cursor.fetchone()[0]:
                return
            time.sleep(0.01)
    pytest.fail(f"backend {pid} never waited for a lock")


def in_thread(target, pids: queue.Queue, errors: list) -> threading.Thread:
    def run():
        try:
            pids.put(backend_pid())
            target()
        except BaseException as error:  # noqa: BLE001 - reported to the test
            errors.append(error)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_expiring_holds_on_two_accounts_does_not_deadlock_with_a_transfer_between_them():
    """The expiry job closes a batch of holds in one transaction. If it locked each hold's
    account as it went (in expiry order), it could hold the higher account while waiting for
    the lower one, which a transfer holds while waiting for the higher: a deadlock. Forced
    here: a third party holds the lower account until both are queued behind it."""
    fi = institution()
    low, high = sorted(
        (open_account(fi, balance=1000), open_account(fi, balance=1000)), key=lambda a: a.pk
    )
    now = timezone.now()
    for account, minutes in ((high, 2), (low, 1)):  # the higher account's hold expires first
        hold_place(
            account=account,
            amount=100,
            currency="EUR",
            expires_at=now - timedelta(minutes=minutes),
            actor=SYSTEM,
        )
    pids, errors = queue.Queue(), []
    expired = []
    with transaction.atomic():
        Account.objects.select_for_update().get(pk=low.pk)
        transfer = in_thread(lambda: move(fi, low.pk, high.pk, 10), pids, errors)
        wait_until_blocked(pids.get(timeout=10))
        expiry = in_thread(lambda: expired.append(holds_expire()), pids, errors)
        wait_until_blocked(pids.get(timeout=10))
    for thread in (transfer, expiry):
        thread.join(timeout=30)
    assert not transfer.is_alive() and not expiry.is_alive()

    deadlocks = [e for e in errors if isinstance(e, OperationalError)]
    assert deadlocks == [], [str(e) for e in deadlocks]
    assert errors == []
    assert expired == [2]
    assert set(Hold.objects.values_list("status", flat=True)) == {"expired"}
    assert balance(low) == (990, 0, 990)
    assert balance(high) == (1010, 0, 1010)
    assert ledger_breaches() == []
