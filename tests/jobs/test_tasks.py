"""Each periodic job does its work when its task runs; the schedule is the documented one."""

from datetime import timedelta

import pytest
from django.utils import timezone
from procrastinate.contrib.django import app

from accounts.models import Hold
from api.models import IdempotencyRecord
from authorizations.models import Authorization
from cards.models import Card
from events.models import Event
from jobs import tasks
from jobs.services import job_defer
from tests.cards.helpers import card_events, fresh_card, make_institution, new_card
from tests.factories import InstitutionFactory

from . import probe_tasks
from .helpers import (
    authorizations,
    expired_holds,
    expiring_in,
    job_rows,
    pending_of,
    run_async_task,
    sql,
    successors_of,
)

pytestmark = pytest.mark.django_db


def test_the_schedule():
    periodic = {
        p.periodic_id: (p.task.name, p.cron, p.task.queue, p.task.queueing_lock, p.task.lock)
        for p in app.periodic_registry.periodic_tasks.values()
        if p.task.name.startswith("jobs.")
    }
    assert periodic == {
        "expire_holds": (
            "jobs.expire_holds",
            "* * * * *",
            "periodic",
            "jobs.expire_holds",
            "jobs.expire_holds",
        ),
        "resolve_stranded_authorizations": (
            "jobs.resolve_stranded_authorizations",
            "* * * * * */5",
            "periodic",
            "jobs.resolve_stranded_authorizations",
            "jobs.resolve_stranded_authorizations",
        ),
        "watch_dispute_deadlines": (
            "jobs.watch_dispute_deadlines",
            "23 * * * *",
            "periodic",
            "jobs.watch_dispute_deadlines",
            "jobs.watch_dispute_deadlines",
        ),
        "watch_reconciliation_breaks": (
            "jobs.watch_reconciliation_breaks",
            "41 * * * *",
            "periodic",
            "jobs.watch_reconciliation_breaks",
            "jobs.watch_reconciliation_breaks",
        ),
        "run_rails": (
            "jobs.run_rails",
            "* * * * *",
            "periodic",
            "jobs.run_rails",
            "jobs.run_rails",
        ),
        "purge_idempotency_keys": (
            "jobs.purge_idempotency_keys",
            "7 * * * *",
            "periodic",
            "jobs.purge_idempotency_keys",
            "jobs.purge_idempotency_keys",
        ),
        "renew_expiring_cards": (
            "jobs.renew_expiring_cards",
            "30 0 * * *",
            "periodic",
            "jobs.renew_expiring_cards",
            "jobs.renew_expiring_cards",
        ),
        "charge_monthly_fees": (
            "jobs.charge_monthly_fees",
            "45 1 * * *",
            "periodic",
            "jobs.charge_monthly_fees",
            "jobs.charge_monthly_fees",
        ),
        "accrue_interest": (
            "jobs.accrue_interest",
            "17 * * * *",
            "periodic",
            "jobs.accrue_interest",
            "jobs.accrue_interest",
        ),
        "post_interest": (
            "jobs.post_interest",
            "47 * * * *",
            "periodic",
            "jobs.post_interest",
            "jobs.post_interest",
        ),
        # No lock: a recovery job stranded on a dead worker must not block the next one.
        "retry_stalled_jobs": (
            "jobs.retry_stalled_jobs",
            "* * * * *",
            "periodic",
            "jobs.retry_stalled_jobs",
            None,
        ),
        "remove_old_jobs": (
            "jobs.remove_old_jobs",
            "0 4 * * *",
            "periodic",
            "jobs.remove_old_jobs",
            "jobs.remove_old_jobs",
        ),
    }


def test_expire_holds_releases_expired_holds_and_card_authorizations():
    holds = expired_holds(2, accounts=1)
    stale, fresh = authorizations(1_000, 500)
    Hold.objects.filter(pk=stale.hold_id).update(expires_at=timezone.now() - timedelta(seconds=1))

    assert tasks.expire_holds(timestamp=0) == {"holds": 2, "authorizations": 1, "transfers": 0}

    assert [Hold.objects.get(pk=hold.pk).status for hold in holds] == ["expired", "expired"]
    assert pending_of(holds[0]) == 0
    assert Authorization.objects.get(pk=stale.pk).status == "expired"
    assert Hold.objects.get(pk=stale.hold_id).status == "expired"
    assert Authorization.objects.get(pk=fresh.pk).status == "pending"
    assert Hold.objects.get(pk=fresh.hold_id).status == "active"
    assert Event.objects.filter(type="hold.expired").count() == 3
    assert Event.objects.filter(type="authorization.expired").count() == 1
    # Nothing left to do.
    assert tasks.expire_holds(timestamp=0) == {"holds": 0, "authorizations": 0, "transfers": 0}


def test_purge_idempotency_keys_deletes_records_older_than_a_day():
    fi = InstitutionFactory()

    def record(hours_ago: int) -> IdempotencyRecord:
        return IdempotencyRecord.objects.create(
            institution=fi,
            key=f"00000000-0000-4000-8000-{hours_ago:012d}",
            fingerprint="f" * 64,
            method="POST",
            path="/TX/v2/customers",
            created_at=timezone.now() - timedelta(hours=hours_ago),
        )

    old, recent = record(25), record(23)

    assert tasks.purge_idempotency_keys(timestamp=0) == {
        "purged": 1,
        "rateCounters": 0,
        "replicaMarks": 0,
    }
    assert list(IdempotencyRecord.objects.values_list("pk", flat=True)) == [recent.pk]
    assert not IdempotencyRecord.objects.filter(pk=old.pk).exists()


def test_renew_expiring_cards_expires_ended_cards_and_renews_those_due(settings):
    fi = make_institution()
    ended = expiring_in(new_card(fi, status=Card.Status.ACTIVE), -1)
    due = expiring_in(new_card(fi, status=Card.Status.ACTIVE), 0)  # ends this month
    later = expiring_in(new_card(fi, status=Card.Status.ACTIVE), 2)  # in 59 to 92 days

    assert settings.CARD_RENEWAL_WITHIN_DAYS == 30
    assert tasks.renew_expiring_cards(timestamp=0) == {"expired": 1, "renewed": 1, "skipped": {}}

    assert fresh_card(ended).status == Card.Status.EXPIRED
    assert successors_of(ended) == []
    [renewal] = successors_of(due)
    assert renewal.pan() == fresh_card(due).pan()
    assert renewal.expires_on > due.expires_on
    assert [data["predecessorCardId"] for _, data in card_events(renewal, "card.renewed")] == [
        due.pk
    ]
    assert successors_of(later) == []

    settings.CARD_RENEWAL_WITHIN_DAYS = 100
    assert tasks.renew_expiring_cards(timestamp=0) == {"expired": 0, "renewed": 1, "skipped": {}}
    assert len(successors_of(later)) == 1


def test_remove_old_jobs_deletes_old_finished_jobs_but_keeps_failed_and_aborted_ones():
    ids = {
        name: job_defer(probe_tasks.noop, via=name)
        for name in ("old succeeded", "old cancelled", "old failed", "old aborted", "new done")
    }
    for name, status in [
        ("old succeeded", "succeeded"),
        ("old cancelled", "cancelled"),
        ("old failed", "failed"),
        ("old aborted", "aborted"),
        ("new done", "succeeded"),
    ]:
        if status != "cancelled":
            sql("UPDATE procrastinate_jobs SET status = 'doing' WHERE id = %s", [ids[name]])
        sql("UPDATE procrastinate_jobs SET status = %s WHERE id = %s", [status, ids[name]])
    old = [ids[name] for name in ids if name.startswith("old")]
    sql(
        "UPDATE procrastinate_events SET at = now() - interval '8 days' WHERE job_id = ANY(%s)",
        [old],
    )

    run_async_task(tasks.remove_old_jobs, timestamp=0)

    assert {row["args"]["via"] for row in job_rows()} == {"old failed", "old aborted", "new done"}
