"""Card limits (`spend`, `unspend`, `card_usage`, `card_limits_set`): each limit holds exactly at
its boundary, usage counts per day in the institution's time zone and follows the card's
lineage, and concurrent payments of one card, each locking it, never pass a limit together."""

from datetime import UTC, date, datetime
from types import SimpleNamespace

import pytest
from django.db import transaction
from django.utils import timezone

from cards.dates import today_of
from cards.models import Card, CardSpend
from cards.services import (
    card_limits_set,
    card_renew,
    card_replace,
    card_usage,
    lock_card,
    spend,
    unspend,
)
from cards.services import limits as limits_module
from core.exceptions import CardNotActive, LimitExceeded, ValidationFailed
from tests.accounts.ledger.helpers import run_threads

from .helpers import card_events, force_status, fresh_card, make_institution, new_card, refused

pytestmark = pytest.mark.django_db

S = Card.Status
LIMITS = {
    "limit_per_transaction": 1000,
    "limit_daily": 3000,
    "limit_monthly": 5000,
    "limit_daily_cash": 500,
}


def limited_card(fi=None, limits=LIMITS) -> Card:
    card = new_card(fi or make_institution(), status=S.ACTIVE)
    card_limits_set(card=card, changes=limits)
    return fresh_card(card)


@pytest.fixture
def card():
    return limited_card()


@pytest.fixture
def clock(monkeypatch):
    """`clock.day` is the institution's today as the limits see it."""
    clock = SimpleNamespace(day=date(2031, 5, 10))
    monkeypatch.setattr(limits_module, "today_of", lambda institution: clock.day)
    return clock


def pay(card, amount, *, cash=False):
    """As a payment does: lock the card, then count the amount against its limits."""
    return spend(lock_card(card.pk), amount, cash=cash)


def refused_payment(card, amount, *, cash=False) -> dict:
    with refused(LimitExceeded) as excinfo:
        pay(card, amount, cash=cash)
    assert (excinfo.value.status, excinfo.value.code) == (422, "limit_exceeded")
    return excinfo.value.details


def spent_rows(card) -> dict:
    return {
        day: (spent, cash)
        for day, spent, cash in CardSpend.objects.filter(card_id=card.lineage_root_id).values_list(
            "day", "spent", "cash_spent"
        )
    }


def test_per_transaction_limit_holds_at_its_boundary(card):
    assert pay(card, 1000) == today_of(card.institution)
    assert refused_payment(card, 1001) == {
        "limit": "perTransaction",
        "value": 1000,
        "used": 0,
        "amount": 1001,
        "remaining": 1000,
    }
    assert card_usage(card).daily == 1000


def test_daily_limit_holds_at_its_boundary(card):
    pay(card, 1000)
    pay(card, 1000)
    pay(card, 999)
    assert refused_payment(card, 2) == {
        "limit": "daily",
        "value": 3000,
        "used": 2999,
        "amount": 2,
        "remaining": 1,
    }
    pay(card, 1)
    assert refused_payment(card, 1)["remaining"] == 0
    assert card_usage(card).daily == 3000


def test_monthly_limit_holds_at_its_boundary_across_the_days_of_the_month(card, clock):
    for day in (1, 2):
        clock.day = date(2031, 5, day)
        pay(card, 1000)
        pay(card, 1000)
    clock.day = date(2031, 5, 31)
    assert card_usage(card).monthly == 4000
    pay(card, 1000)  # 5000: exactly the limit
    details = refused_payment(card, 1)
    assert (details["limit"], details["used"], details["remaining"]) == ("monthly", 5000, 0)
    clock.day = date(2031, 6, 1)  # a new month
    pay(card, 1000)
    assert card_usage(card) == limits_module.Usage(
        day=date(2031, 6, 1), daily=1000, daily_cash=0, monthly=1000
    )


def test_daily_cash_limit_holds_at_its_boundary_for_cash_only(card):
    pay(card, 300, cash=True)
    pay(card, 200, cash=True)
    details = refused_payment(card, 1, cash=True)
    assert (details["limit"], details["used"], details["remaining"]) == ("dailyCash", 500, 0)
    pay(card, 1000)  # not cash: only the other limits apply
    usage = card_usage(card)
    assert (usage.daily, usage.daily_cash) == (1500, 500)


def test_cash_counts_against_the_daily_limit_too(card):
    pay(card, 1000)
    pay(card, 1000)
    pay(card, 500, cash=True)
    details = refused_payment(card, 501)
    assert details["limit"] == "daily"
    pay(card, 500)
    assert card_usage(card).daily == 3000


def test_a_refused_payment_counts_nothing(card):
    pay(card, 400)
    before = spent_rows(card)
    refused_payment(card, 1001)
    refused_payment(card, 501, cash=True)
    assert spent_rows(card) == before


def test_a_zero_limit_refuses_every_amount():
    card = limited_card(limits={**LIMITS, "limit_daily_cash": 0})
    assert refused_payment(card, 1, cash=True)["limit"] == "dailyCash"
    pay(card, 1)


def test_unspend_gives_back_and_never_goes_below_zero(card):
    pay(card, 1000)
    day = pay(card, 500, cash=True)
    unspend(card, day, 300, cash=True)
    assert spent_rows(card) == {day: (1200, 200)}
    pay(card, 300, cash=True)  # the cash given back can be spent again
    unspend(card, day, 1000)
    assert spent_rows(card) == {day: (500, 500)}
    unspend(card, day, 900, cash=True)
    assert spent_rows(card) == {day: (0, 0)}


def test_card_usage_sums_the_day_and_the_month_of_the_lineage(card):
    rows = {
        date(2031, 4, 30): (900, 100),  # the month before
        date(2031, 5, 1): (700, 0),
        date(2031, 5, 10): (500, 200),
        date(2031, 5, 11): (300, 300),  # after the day asked for
    }
    for day, (spent, cash) in rows.items():
        CardSpend.objects.create(card=card, day=day, spent=spent, cash_spent=cash)
    usage = card_usage(card, day=date(2031, 5, 10))
    assert (usage.day, usage.daily, usage.daily_cash, usage.monthly) == (
        date(2031, 5, 10),
        500,
        200,
        1200,
    )
    assert usage.month == "2031-05"
    assert card_usage(card, day=date(2031, 5, 12)).daily == 0
    assert card_usage(card, day=date(2031, 5, 12)).monthly == 1500
    assert card_usage(new_card(card.institution)).monthly == 0  # another card: its own


def test_usage_counts_per_day_in_the_institutions_time_zone(monkeypatch):
    kiritimati = make_institution(time_zone="Pacific/Kiritimati")  # UTC+14
    utc = make_institution()
    far, near = new_card(kiritimati, status=S.ACTIVE), new_card(utc, status=S.ACTIVE)
    clock = SimpleNamespace(now=datetime(2031, 3, 31, 9, 30, tzinfo=UTC))
    monkeypatch.setattr(timezone, "now", lambda: clock.now)

    # 09:30 UTC is 23:30 on 31 March in Kiritimati
    assert today_of(kiritimati) == today_of(utc) == date(2031, 3, 31)
    assert pay(far, 1000) == pay(near, 1000) == date(2031, 3, 31)

    clock.now = datetime(2031, 3, 31, 10, 30, tzinfo=UTC)  # 00:30 on 1 April in Kiritimati
    assert (today_of(kiritimati), today_of(utc)) == (date(2031, 4, 1), date(2031, 3, 31))
    assert card_usage(far) == limits_module.Usage(
        day=date(2031, 4, 1), daily=0, daily_cash=0, monthly=0
    )
    assert (card_usage(near).daily, card_usage(near).monthly) == (1000, 1000)
    assert pay(far, 2000) == date(2031, 4, 1)
    assert pay(near, 2000) == date(2031, 3, 31)
    assert spent_rows(far) == {date(2031, 3, 31): (1000, 0), date(2031, 4, 1): (2000, 0)}
    assert spent_rows(near) == {date(2031, 3, 31): (3000, 0)}


@pytest.mark.parametrize("operation", ["renewal", "replacement"])
def test_a_successor_continues_its_predecessors_usage(card, operation):
    pay(card, 1000)
    pay(card, 1000)
    pay(card, 400, cash=True)
    if operation == "renewal":
        successor = card_renew(card=card)
    else:
        successor = card_replace(card=card, reason="stolen")
    successor = fresh_card(successor)
    assert successor.lineage_root_id == card.pk
    assert (card_usage(successor).daily, card_usage(successor).daily_cash) == (2400, 400)
    assert refused_payment(successor, 601)["used"] == 2400
    assert refused_payment(successor, 101, cash=True)["limit"] == "dailyCash"
    pay(successor, 600)
    assert spent_rows(card) == {today_of(card.institution): (3000, 400)}
    assert not CardSpend.objects.filter(card=successor).exists()

    third = fresh_card(card_renew(card=successor))
    assert third.lineage_id == card.pk
    assert refused_payment(third, 1)["limit"] == "daily"


# --- Setting limits -----------------------------------------------------------------------------


def limits_of(card) -> dict:
    stored = fresh_card(card)
    return {field: getattr(stored, field) for field in LIMITS}


def test_setting_limits_changes_them_and_emits_the_new_limits():
    card = new_card(make_institution(), status=S.ACTIVE)
    card_limits_set(card=card, changes={"limit_daily": 150_000, "limit_daily_cash": 0})
    assert limits_of(card) == {
        "limit_per_transaction": 100_000,
        "limit_daily": 150_000,
        "limit_monthly": 1_000_000,
        "limit_daily_cash": 0,
    }
    assert card_events(card, "card.limits_changed") == [
        (
            "card.limits_changed",
            {
                "changedFields": ["daily", "dailyCash"],
                "limits": {
                    "perTransaction": 100_000,
                    "daily": 150_000,
                    "monthly": 1_000_000,
                    "dailyCash": 0,
                },
            },
        )
    ]
    # the same values again: nothing changes, nothing is emitted
    updated_at = fresh_card(card).updated_at
    card_limits_set(card=card, changes={"limit_daily": 150_000})
    assert fresh_card(card).updated_at == updated_at
    assert len(card_events(card, "card.limits_changed")) == 1


def test_equal_limits_are_in_order(card):
    same = dict.fromkeys(LIMITS, 2000)
    card_limits_set(card=card, changes=same)
    assert limits_of(card) == same


@pytest.mark.parametrize(
    ("changes", "fields"),
    [
        ({"limit_per_transaction": 3001}, ["limit_per_transaction"]),
        ({"limit_daily": 5001}, ["limit_daily"]),
        ({"limit_daily": 499}, ["limit_daily_cash", "limit_per_transaction"]),
        ({"limit_daily_cash": 3001}, ["limit_daily_cash"]),
        ({"limit_monthly": 2999}, ["limit_daily"]),
        (
            {"limit_daily": 6000, "limit_monthly": 5999, "limit_daily_cash": 6001},
            ["limit_daily", "limit_daily_cash"],
        ),
    ],
)
def test_limits_out_of_order_are_refused(card, changes, fields):
    with refused(ValidationFailed) as excinfo:
        card_limits_set(card=card, changes=changes)
    assert sorted(excinfo.value.details) == fields
    assert limits_of(card) == LIMITS


def test_unknown_limits_are_a_programming_error(card):
    with pytest.raises(ValueError, match="Not limits"):
        card_limits_set(card=card, changes={"limit_weekly": 1})


def test_the_limits_of_a_final_card_do_not_change(card):
    card = force_status(card, S.CLOSED)
    with refused(CardNotActive):
        card_limits_set(card=card, changes={"limit_daily": 100})


# --- Concurrency --------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_concurrent_payments_of_one_card_never_pass_its_daily_limit():
    card = new_card(make_institution(), status=S.ACTIVE)  # PREPAID: 200_000 a day
    amount, threads, attempts = 30_000, 8, 3  # 24 attempts, 720_000 asked, 6 can pass

    def work(index):
        passed = refused_count = 0
        for _ in range(attempts):
            try:
                with transaction.atomic():
                    spend(lock_card(card.pk), amount)
            except LimitExceeded:
                refused_count += 1
            else:
                passed += 1
        return passed, refused_count

    results = run_threads(threads, work)
    passed = sum(done for done, _ in results)
    assert passed == card.limit_daily // amount == 6
    assert sum(no for _, no in results) == threads * attempts - passed
    assert spent_rows(card) == {today_of(card.institution): (passed * amount, 0)}
