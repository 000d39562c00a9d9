"""`balance_at` (accounts/selectors.py) against a replay: random loads, unloads, transfers and
holds (placed, captured in part or in full, released, expired) on two customer accounts; after
each operation the stored `(posted, pending)` and the instant are recorded. At any instant
between two operations, `balance_at` answers what was stored after the earlier one (before
the first: (0, 0)), and `verify_ledger` holds after every example.
"""

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts.models import Adjustment, Hold
from accounts.selectors import balance_at
from accounts.services import (
    adjustment_create,
    hold_capture,
    hold_place,
    hold_release,
    holds_expire,
)
from core.actors import SYSTEM
from core.exceptions import TXError
from transfers.services import transfer_create

from .helpers import assert_ledger_ok, fresh, institution, open_account

pytestmark = pytest.mark.django_db

ACCOUNT = st.integers(min_value=0, max_value=1)
AMOUNT = st.integers(min_value=1, max_value=700)
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("load"), ACCOUNT, AMOUNT),
        st.tuples(st.just("unload"), ACCOUNT, AMOUNT),
        st.tuples(st.just("transfer"), ACCOUNT, AMOUNT),
        st.tuples(st.just("hold"), ACCOUNT, AMOUNT),
        st.tuples(st.just("capture"), st.integers(0, 9), st.integers(1, 100)),
        st.tuples(st.just("release"), st.integers(0, 9), st.just(0)),
        st.tuples(st.just("expire"), st.just(0), st.just(0)),
    ),
    min_size=1,
    max_size=10,
)


def run(operation, accounts, holds) -> None:
    """One operation; a refusal (TXError) writes nothing and is part of the game."""
    kind, which, amount = operation
    account = fresh(accounts[which % 2])
    try:
        with transaction.atomic():  # a refusal rolls back to here
            _run(kind, which, amount, account, accounts, holds)
    except TXError:
        pass


def _run(kind, which, amount, account, accounts, holds) -> None:
    """`kind` done (in the caller's savepoint)."""
    if kind in ("load", "unload"):
        adjustment_create(
            account=account,
            direction=Adjustment.Direction.CREDIT if kind == "load" else "debit",
            amount=amount,
            currency="EUR",
            actor=SYSTEM,
        )
    elif kind == "transfer":
        transfer_create(
            institution=account.institution,
            source=account,
            destination=fresh(accounts[1 - which % 2]),
            amount=amount,
            currency="EUR",
            actor=SYSTEM,
        )
    elif kind == "hold":
        holds.append(
            hold_place(
                account=account,
                amount=amount,
                currency="EUR",
                expires_at=timezone.now() + timedelta(hours=1),
                actor=SYSTEM,
            )
        )
    elif kind in ("capture", "release") and holds:
        hold = Hold.objects.get(pk=holds[which % len(holds)].pk)
        if kind == "release":
            hold_release(hold=hold)
        else:
            hold_capture(hold=hold, amount=max(hold.amount * amount // 100, 1))
    elif kind == "expire":
        holds_expire(now=timezone.now() + timedelta(hours=2))


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(operations=OPERATIONS, data=st.data())
def test_balances_at_instants_between_operations_equal_the_replay(operations, data):
    with transaction.atomic():
        fi = institution()
        accounts = [open_account(fi), open_account(fi)]
        start = timezone.now()
        # Quiet spans, from just after an operation to just before the next one (nothing
        # moves in between), with the stored (posted, pending) of each account then.
        quiet = []
        stored, since = [(0, 0), (0, 0)], start
        holds: list[Hold] = []
        for operation in operations:
            quiet.append((since, timezone.now(), stored))
            run(operation, accounts, holds)
            stored = [(a.posted, a.pending) for a in map(fresh, accounts)]
            since = timezone.now()
        quiet.append((since, timezone.now(), stored))
        for since, until, expected in quiet:
            fraction = data.draw(st.floats(min_value=0, max_value=1))
            for account, balances in zip(accounts, expected, strict=True):
                for instant in (since, since + (until - since) * fraction, until):
                    assert balance_at(account=account, at=instant) == balances
        for account in accounts:
            assert balance_at(account=account, at=start - timedelta(seconds=1)) == (0, 0)
        assert_ledger_ok()
        transaction.set_rollback(True)
