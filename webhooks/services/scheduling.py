"""Scheduling: a delivery, and its job, for each endpoint that wants an event.

`deliveries_schedule` is an events consumer (`events.consumers`, registered by
`webhooks.apps.WebhooksConfig.ready`): `emit()` calls it inside the transaction of the change.
One query finds the institution's enabled endpoints subscribed to the event's type; only when
there are some, one INSERT writes their deliveries and one more defers their jobs
(procrastinate, same connection, same transaction: nothing is delivered for a change that
rolled back, nothing is lost for one that committed; also when the change is made by a job in
a worker, e.g. a hold expiring).

Order: each job carries the lock `webhook:<endpoint>:<object type>:<object id>`. procrastinate
runs a job only when no earlier job with its lock is waiting or running, also while that
earlier job waits for its retry. So the events of one resource reach one endpoint in the order
they were written, one at a time; other resources and other endpoints do not wait for them.
A delivery that fails for good ends its job successfully, and the next one of the resource goes.

The job is named, not imported (`DELIVER_TASK`): `webhooks.tasks` imports the services, never
the other way round. The task module is loaded at startup (`WebhooksConfig.ready`), so the name
always resolves; an unknown name raises rather than deferring a job nobody runs.
"""

from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from procrastinate.contrib.django import app

from core import pg_array
from events.consumers import Lookup
from events.models import Event
from jobs.services import django_job_manager

from ..models import ALL_EVENTS, WebhookDelivery

DELIVER_TASK = "webhooks.deliver"


def delivery_lock(*, endpoint_id: str, event: Event) -> str:
    """The procrastinate lock that keeps one resource's events in order for one endpoint."""
    return f"webhook:{endpoint_id}:{event.object_type}:{event.object_id}"


def deliveries_schedule(*, events: list[Event], found: list | None = None) -> list[WebhookDelivery]:
    """One pending delivery, and its job, per event and per enabled endpoint of the event's
    institution subscribed to the event's type (or to "*"). Runs in the caller's transaction
    (the one that wrote the events). One query when no endpoint matches, three otherwise,
    however many events (a transfer batch announces all its events at once); none for the
    endpoints when `found` holds them already ([id, institution, types] each: `ENDPOINTS`,
    read by the posting function's statement)."""
    if not events:
        return []
    endpoints = found
    if endpoints is None:
        # Every event emitted alone asks this once: a plain statement, not an ORM query built
        # anew each time (its compilation was a tenth of a transfer's CPU, bench/README.md).
        with connection.cursor() as cursor:
            cursor.execute(_ENDPOINTS_SQL, _endpoints_params(events))
            endpoints = cursor.fetchall()
    if not endpoints:
        return []
    now = timezone.now()
    retry_until = now + timedelta(seconds=settings.WEBHOOK_RETRY_WINDOW_SECONDS)
    deliveries = [
        WebhookDelivery(
            endpoint_id=endpoint_id,
            event=event,
            next_attempt_at=now,
            retry_until=retry_until,
            created_at=now,
        )
        for event in events
        for endpoint_id, institution_id, types in endpoints
        if institution_id == event.institution_id and (event.type in types or ALL_EVENTS in types)
    ]
    if not deliveries:
        return []
    with transaction.atomic(savepoint=False):
        WebhookDelivery.objects.bulk_create(deliveries)
        deliveries_defer(deliveries)
    return deliveries


_ENDPOINTS_WHERE = (
    'FROM "webhooks_webhookendpoint" WHERE institution_id = ANY(%s::varchar[]) AND enabled '
    "AND event_types && %s::varchar[]"
)
_ENDPOINTS_SQL = f"SELECT id, institution_id, event_types {_ENDPOINTS_WHERE} ORDER BY id"


def _endpoints_params(events: list[Event]) -> list[str]:
    return [
        pg_array.literal(sorted({event.institution_id for event in events})),
        pg_array.literal([*sorted({event.type for event in events}), ALL_EVENTS]),
    ]


# The same read as one JSON value, for the posting function's statement to carry
# (`events.consumers.Lookup`, registered by `webhooks.apps`).
ENDPOINTS = Lookup(
    sql=(
        "SELECT coalesce(json_agg(json_build_array(id, institution_id, event_types) ORDER BY id),"
        f" '[]') {_ENDPOINTS_WHERE}"
    ),
    params=_endpoints_params,
)


def deliveries_defer(deliveries: list[WebhookDelivery]) -> None:
    """One job per delivery, each with its own lock, in one statement on Django's connection:
    in the caller's transaction, also when the caller is itself a job in a worker (whose app
    defers on a pool of its own; `jobs.services.django_job_manager`)."""
    jobs = [
        app.configure_task(
            DELIVER_TASK,
            allow_unknown=False,
            lock=delivery_lock(endpoint_id=delivery.endpoint_id, event=delivery.event),
        ).make_new_job(delivery_id=delivery.pk)
        for delivery in deliveries
    ]
    django_job_manager.batch_defer_jobs(jobs=jobs)
