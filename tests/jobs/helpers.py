"""Set-up shared by the job tests (plain functions, no fixtures)."""

from datetime import timedelta

from asgiref.sync import async_to_sync
from django.db import connection
from django.utils import timezone
from procrastinate.contrib.django import app
from procrastinate.contrib.django.models import ProcrastinateJob

from accounts.models import Account, Hold
from accounts.services import hold_place
from authorizations.models import Authorization
from authorizations.services import authorization_create
from cards.dates import add_months, today_of
from cards.models import Card
from core.actors import SYSTEM
from tests.accounts.ledger.helpers import institution, load, open_account
from tests.cards.helpers import fresh_card, issue_card, make_account, make_institution

MERCHANT = {"name": "Corner Shop", "mcc": "5411", "country_code": "276", "channel": "pos"}


class Context:
    """What a task given `pass_context=True` reads from its job context: the app."""

    app = app


def run_async_task(task, **kwargs):
    """Run an async task's function here, on this thread's Django connection (the test's)."""
    return async_to_sync(task.func)(Context(), **kwargs)


def expired_holds(count: int, *, accounts: int = 4) -> list[Hold]:
    """`count` holds of 100 already past their expiry, spread over `accounts` new accounts."""
    fi = institution()
    owners = [open_account(fi, balance=100 * count) for _ in range(accounts)]
    past = timezone.now() - timedelta(minutes=1)
    return [
        hold_place(
            account=owners[n % accounts],
            amount=100,
            currency="EUR",
            expires_at=past,
            actor=SYSTEM,
        )
        for n in range(count)
    ]


def authorizations(*amounts: int) -> list[Authorization]:
    """Approved card authorizations of `amounts` on one funded card, each with its hold."""
    fi = make_institution()
    account = make_account(fi)
    load(account, 100_000)
    card = issue_card(account, status=Card.Status.ACTIVE)
    made = [
        authorization_create(
            card=card, amount=amount, currency="EUR", type="Goods", merchant=MERCHANT, actor=SYSTEM
        )
        for amount in amounts
    ]
    statuses = [(a.status, a.decline_code) for a in made]
    assert statuses == [("pending", "")] * len(made), statuses
    return made


def pending_of(hold: Hold) -> int:
    return Account.objects.get(pk=hold.account_id).pending


def expiring_in(card: Card, months: int) -> Card:
    """The card, valid through the end of the month `months` from this one (-1: last month)."""
    today = today_of(card.institution)
    card.set_expiry(*add_months(today.year, today.month, months))
    card.save(update_fields=["expiry_year", "expiry_month", "expires_on"])
    return fresh_card(card)


def successors_of(card: Card) -> list[Card]:
    return list(Card.objects.filter(predecessor_id=card.pk))


def job_rows(task_name: str | None = None) -> list[dict]:
    jobs = ProcrastinateJob.objects.order_by("id")
    if task_name is not None:
        jobs = jobs.filter(task_name=task_name)
    return list(jobs.values("id", "task_name", "status", "args", "attempts", "worker_id"))


def job_status(job_id: int) -> str:
    return ProcrastinateJob.objects.get(pk=job_id).status


def sql(query: str, params=()) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(query, params)
        return cursor.fetchall() if cursor.description else []
