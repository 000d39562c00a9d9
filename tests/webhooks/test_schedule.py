"""Scheduling: `emit` writes one delivery and one job per enabled endpoint subscribed to the
event's type, in the transaction of the change (rolled back with it), with the lock of the
event's resource; one query when no endpoint matches, three otherwise."""

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from procrastinate.connector import BaseConnector
from procrastinate.contrib.django import app

from events.services import emit
from tests.factories import InstitutionFactory
from webhooks.models import WebhookDelivery
from webhooks.services import webhook_endpoint_create

pytestmark = pytest.mark.django_db

URL = "https://hooks.example.com/tx"


def endpoint(institution, event_types, **fields):
    return webhook_endpoint_create(
        institution=institution, url=URL, event_types=event_types, **fields
    ).endpoint


def job_rows() -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT task_name, queue_name, lock, args->>'delivery_id', status, scheduled_at "
            "FROM procrastinate_jobs ORDER BY id"
        )
        return cursor.fetchall()


def fire(institution, type="customer.created", object_id="cus_1"):
    with transaction.atomic():
        return emit(institution=institution, type=type, object_type="customer", object_id=object_id)


def test_one_delivery_and_one_job_per_matching_enabled_endpoint():
    institution, other = InstitutionFactory(), InstitutionFactory()
    everything = endpoint(institution, ["*"])
    customers = endpoint(institution, ["customer.created", "customer.updated"])
    endpoint(institution, ["account.opened"])  # another type
    endpoint(institution, ["*"], enabled=False)  # disabled
    endpoint(other, ["*"])  # another institution's

    event = fire(institution)

    deliveries = WebhookDelivery.objects.filter(event=event).order_by("endpoint_id")
    assert [d.endpoint_id for d in deliveries] == sorted([everything.pk, customers.pk])
    for delivery in deliveries:
        assert (delivery.status, delivery.attempts, delivery.last_status_code) == (
            "pending",
            0,
            None,
        )
        assert delivery.next_attempt_at == delivery.created_at
        assert (delivery.retry_until - delivery.created_at).total_seconds() == 3 * 24 * 3600
        assert delivery.completed_at is None
    assert sorted(job_rows()) == sorted(
        (
            "webhooks.deliver",
            "webhooks",
            f"webhook:{delivery.endpoint_id}:customer:cus_1",
            delivery.pk,
            "todo",
            None,
        )
        for delivery in deliveries
    )


def test_no_endpoint_costs_one_query_and_writes_nothing():
    institution = InstitutionFactory()
    endpoint(institution, ["account.opened"])
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        emit(
            institution=institution, type="customer.created", object_type="customer", object_id="c"
        )
    assert [query["sql"].split()[0] for query in queries.captured_queries] == ["INSERT", "SELECT"]
    assert '"webhooks_webhookendpoint"' in queries.captured_queries[1]["sql"]
    assert not WebhookDelivery.objects.exists()
    assert job_rows() == []


def test_matching_endpoints_cost_three_queries_however_many():
    institution = InstitutionFactory()
    for _ in range(3):
        endpoint(institution, ["*"])
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        emit(
            institution=institution, type="customer.created", object_type="customer", object_id="c"
        )
    statements = [query["sql"] for query in queries.captured_queries]
    assert len(statements) == 4  # the event, the endpoints, the deliveries, the jobs
    assert statements[2].startswith('INSERT INTO "webhooks_webhookdelivery"')
    assert "procrastinate_defer_jobs" in statements[3]
    assert WebhookDelivery.objects.count() == 3
    assert len(job_rows()) == 3


def test_a_change_rolled_back_schedules_nothing():
    institution = InstitutionFactory()
    endpoint(institution, ["*"])
    with pytest.raises(RuntimeError), transaction.atomic():
        emit(
            institution=institution, type="customer.created", object_type="customer", object_id="c"
        )
        assert WebhookDelivery.objects.count() == 1 and len(job_rows()) == 1
        raise RuntimeError("the change fails after its event")
    assert not WebhookDelivery.objects.exists()
    assert job_rows() == []


def test_the_events_of_one_resource_share_a_lock_per_endpoint():
    institution = InstitutionFactory()
    first, second = endpoint(institution, ["*"]), endpoint(institution, ["*"])
    for type in ("customer.created", "customer.updated", "customer.updated"):
        fire(institution, type=type, object_id="cus_A")
    fire(institution, object_id="cus_B")
    locks = [row[2] for row in job_rows()]
    for ep in (first, second):
        assert locks.count(f"webhook:{ep.pk}:customer:cus_A") == 3
        assert locks.count(f"webhook:{ep.pk}:customer:cus_B") == 1


class Unusable(BaseConnector):
    """The connector a worker gives procrastinate's app: deliveries must not defer on it."""

    def __getattribute__(self, name):
        raise AssertionError(f"the app's own connector was used ({name})")


def test_jobs_are_deferred_on_djangos_connection_even_inside_a_worker():
    """In `manage.py procrastinate worker` the app defers on a pool of its own (committed at
    once); an event written by a job (a hold expiring) must get its jobs in its transaction."""
    institution = InstitutionFactory()
    endpoint(institution, ["*"])
    with app.replace_connector(Unusable()):
        with pytest.raises(RuntimeError), transaction.atomic():
            fire(institution)
            assert len(job_rows()) == 1
            raise RuntimeError("the job's change rolls back")
        assert job_rows() == []
        fire(institution)
    assert len(job_rows()) == 1
