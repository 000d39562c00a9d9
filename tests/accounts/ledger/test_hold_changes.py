"""The steps of an account's pending balance (accounts_holdchange, accounts/sql/hold_changes.sql;
docs/balances-at-an-instant.md): one per hold placed or closed, written by the database with the
pending balance after it; `balance_at` reads the pending balance at an instant from the last
step by then, one index lookup whatever the account's history. That migration accounts/0023
gives the holds written before it the same steps is tested in balance_after_migration.py, with
accounts/0016, in the upgrade walk of tests/test_migrations_forward.py."""

from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import Q, Sum
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import Hold, HoldChange
from accounts.selectors import balance_at
from accounts.services import hold_capture, hold_place, hold_release, holds_expire
from accounts.verification import ledger_breaches
from core.actors import SYSTEM

from .helpers import assert_ledger_ok, fresh, institution, open_account

US = timedelta(microseconds=1)
MS = timedelta(milliseconds=1)


def place(account, amount: int) -> Hold:
    return hold_place(
        account=fresh(account),
        amount=amount,
        currency="EUR",
        expires_at=timezone.now() + timedelta(hours=1),
        actor=SYSTEM,
    )


def steps(account) -> list[tuple]:
    return list(
        HoldChange.objects.filter(account_id=account.pk)
        .order_by("id")
        .values_list("hold_id", "amount", "pending_after", "at")
    )


def replay(account, at) -> int:
    """The pending balance at `at` as it was computed before the steps: the sum of the holds
    placed by then and not closed then."""
    return (
        Hold.objects.filter(account_id=account.pk, created_at__lte=at)
        .filter(Q(closed_at__isnull=True) | Q(closed_at__gt=at))
        .aggregate(total=Sum("amount"))["total"]
        or 0
    )


def execute(sql, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


@pytest.mark.django_db
def test_each_hold_placed_and_closed_is_a_step_with_the_pending_balance_after_it():
    account = open_account(institution(), balance=1000)
    a, b, c = place(account, 100), place(account, 200), place(account, 50)
    hold_release(hold=a)
    hold_capture(hold=Hold.objects.get(pk=b.pk), amount=150)
    holds_expire(now=timezone.now() + timedelta(hours=2))
    a, b, c = (Hold.objects.get(pk=hold.pk) for hold in (a, b, c))
    assert steps(account) == [
        (a.pk, 100, 100, a.created_at),
        (b.pk, 200, 300, b.created_at),
        (c.pk, 50, 350, c.created_at),
        (a.pk, -100, 250, a.closed_at),
        (b.pk, -200, 50, b.closed_at),
        (c.pk, -50, 0, c.closed_at),
    ]
    assert fresh(account).pending == 0
    assert balance_at(account=account, at=c.created_at) == (1000, 350)
    assert balance_at(account=account, at=a.closed_at - US) == (1000, 350)
    assert balance_at(account=account, at=a.closed_at) == (1000, 250)  # closed at T: not held
    assert balance_at(account=account, at=b.closed_at)[1] == 50
    assert_ledger_ok()


@pytest.mark.django_db
def test_a_step_dated_before_the_previous_one_is_moved_up_to_it():
    """A close that waited for the account's lock may carry an instant before the step written
    meanwhile: it is moved up, so the steps' instants never go back in id order."""
    account = open_account(institution(), balance=1000)
    a, b = place(account, 100), place(account, 200)
    Hold.objects.filter(pk=a.pk).update(
        status=Hold.Status.RELEASED, closed_at=b.created_at - timedelta(seconds=1)
    )
    assert steps(account)[-1] == (a.pk, -100, 200, b.created_at)


@pytest.mark.django_db
def test_a_holds_account_amount_and_instants_do_not_change():
    account = open_account(institution(), balance=1000)
    hold = place(account, 100)
    hold_release(hold=hold)
    later = timezone.now() + timedelta(seconds=1)
    for change in (
        {"closed_at": later},
        {"closed_at": None},
        {"amount": 50},
        {"created_at": later},
        {"account": open_account(account.institution)},
    ):
        with pytest.raises(IntegrityError, match="do not change"), transaction.atomic():
            Hold.objects.filter(pk=hold.pk).update(**change)
    # What is not its history may change; no step is written for it.
    Hold.objects.filter(pk=hold.pk).update(reason="kept", metadata={"a": "b"})
    assert [amount for _, amount, _, _ in steps(account)] == [100, -100]


@pytest.mark.django_db
def test_the_pending_balance_at_an_instant_is_one_index_lookup():
    account = open_account(institution(), balance=10_000_000)
    first = place(account, 7)
    # 3,000 more holds of the account, a minute apart, every other one closed 90 s after it
    # was placed (the trigger writes their steps, as for holds written by the services).
    execute(
        """
        INSERT INTO accounts_hold
        SELECT (jsonb_populate_record(NULL::accounts_hold, to_jsonb(h) || jsonb_build_object(
                    'id', 'hold_many_' || k,
                    'created_at', h.created_at + k * interval '1 minute',
                    'closed_at', CASE WHEN k %% 2 = 0
                                      THEN h.created_at + k * interval '1 minute'
                                           + interval '90 seconds' END))).*
          FROM accounts_hold h, generate_series(1, 3000) AS k
         WHERE h.id = %s
         ORDER BY k
        """,
        [first.pk],
    )
    execute("ANALYZE accounts_holdchange")
    at = first.created_at + timedelta(minutes=2000, seconds=30)
    with CaptureQueriesContext(connection) as queries:
        posted, pending = balance_at(account=account, at=at)
    assert (posted, pending) == (10_000_000, replay(account, at))
    sqls = [q["sql"] for q in queries.captured_queries]
    assert len(sqls) == 2 and not [sql for sql in sqls if '"accounts_hold"' in sql], sqls
    (lookup,) = [sql for sql in sqls if "accounts_holdchange" in sql]
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + lookup)
        (plan,) = cursor.fetchone()[0]
    limit = plan["Plan"]
    (scan,) = limit["Plans"]
    assert limit["Node Type"] == "Limit"
    assert scan["Node Type"] == "Index Scan", plan
    assert scan["Index Name"] == "holdchange_account_at_idx"
    assert scan["Scan Direction"] == "Backward"
    assert scan["Actual Rows"] == 1  # one row read of the account's 6,000 steps, no sort, no sum
    assert "Plans" not in scan


@pytest.mark.django_db
def test_verify_ledger_reports_a_step_that_is_not_the_running_sum():
    account = open_account(institution(), balance=1000)
    place(account, 100)
    place(account, 200)
    assert ledger_breaches() == []
    last = HoldChange.objects.filter(account_id=account.pk).latest("id")
    HoldChange.objects.filter(pk=last.pk).update(pending_after=250)
    (breach,) = ledger_breaches()
    assert breach.check == (
        "hold steps whose pending_after is not the running sum of their account's steps"
    )
    assert breach.rows == [(last.pk, account.pk, 250, 300)]
