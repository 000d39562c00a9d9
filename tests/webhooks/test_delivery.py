"""Delivery end to end: endpoints subscribed through the API, API calls that write events, a
real HTTP receiver on loopback, and the procrastinate worker run in this process.

Every expected event arrives signed (checked with the Standard Webhooks library), acknowledged
once, with the body of `GET /events/{id}`, and in order per resource; a receiver that fails is
sent the same event (same `webhook-id`) again; one that is down for a while gets what it missed,
in order; a delivery whose three days ran out fails and lets the next event of its resource go.
These tests commit (the worker has its own connections).
"""

from collections import defaultdict
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from events.models import Event
from tests.accounts.api.helpers import (
    create_customer,
    created,
    funded_account,
    load,
    open_account,
    resource,
    set_status,
    transfer,
)
from tests.conftest import Api
from tests.factories import InstitutionFactory, issue_key
from webhooks.models import WebhookAttempt, WebhookDelivery

from .helpers import QUEUE, Receiver, run_jobs, subscribe, verified

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def fast(settings):
    settings.RATE_LIMIT_REQUESTS = 0
    settings.WEBHOOK_RETRY_BASE_SECONDS = 0  # a failed attempt is due again at once
    settings.WEBHOOK_TIMEOUT_SECONDS = 5  # generous: a loaded machine answers late


@pytest.fixture(autouse=True)
def no_jobs_left():
    """The job table is not Django's (the flush between tests leaves it): clear this queue."""
    yield
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM procrastinate_jobs WHERE queue_name = %s", [QUEUE])


@pytest.fixture
def receiver():
    receiver = Receiver()
    yield receiver
    receiver.stop()


def jobs() -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT status, lock, attempts, args->>'delivery_id' FROM procrastinate_jobs "
            "WHERE queue_name = %s ORDER BY id",
            [QUEUE],
        )
        return cursor.fetchall()


def due_now() -> None:
    """Every waiting retry is due now (instead of after its backoff)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE procrastinate_jobs SET scheduled_at = now() "
            "WHERE queue_name = %s AND status = 'todo'",
            [QUEUE],
        )


def by_object(events) -> dict[str, list[str]]:
    """Event ids per object, in the order given."""
    grouped = defaultdict(list)
    for event in events:
        grouped[event["objectId"]].append(event["id"])
    return dict(grouped)


def stored_events(institution) -> list[dict]:
    """The institution's events as GET /events/{id} shows them, oldest first."""
    from events.payloads import event_payload

    return [
        event_payload(event)
        for event in Event.objects.filter(institution=institution).order_by("id")
    ]


def banking(api) -> dict:
    """API calls that write events on several objects: customers, accounts, a load, transfers,
    a status change."""
    customer = create_customer(api)
    api.patch(f"/customers/{customer}", {"email": "ada@example.com"})
    source = funded_account(api, 10_000, customer_id=customer)["accountId"]
    destination = open_account(api)["accountId"]
    for amount in (100, 200, 300):
        created(transfer(api, source, destination, amount), api.version)
    resource(set_status(api, destination, "frozen"), api.version)
    return {"customer": customer, "source": source, "destination": destination}


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_every_event_arrives_once_signed_in_order(version, receiver):
    institution = InstitutionFactory()
    api = Api(version, issue_key(institution)[1])
    endpoint = subscribe(api, receiver.url)
    banking(api)
    expected = stored_events(institution)
    assert len(expected) >= 10

    run_jobs()

    arrived = receiver.acknowledged()
    assert len(arrived) == len(receiver.received) == len(expected)
    events = [verified(request, endpoint["secret"]) for request in arrived]
    assert sorted(events, key=lambda event: event["id"]) == expected  # each once, as GET shows it
    assert [request.webhook_id for request in arrived] == [event["id"] for event in events]
    assert by_object(events) == by_object(expected)  # in order per resource
    for request in arrived:
        assert request.headers["content-type"] == "application/json"
        assert request.headers["webhook-signature"].startswith("v1,")
    deliveries = WebhookDelivery.objects.filter(endpoint_id=endpoint["endpointId"])
    assert {(d.status, d.attempts, d.last_status_code) for d in deliveries} == {
        ("succeeded", 1, 200)
    }
    assert all(job[0] == "succeeded" for job in jobs())


def test_a_receiver_failing_twice_gets_the_event_three_times_with_the_same_id(receiver):
    institution = InstitutionFactory()
    api = Api("v2", issue_key(institution)[1])
    endpoint = subscribe(api, receiver.url, ["customer.created"])
    statuses = iter([500, 503, 200])
    receiver.respond = lambda request: next(statuses)
    customer = create_customer(api)
    event = Event.objects.get(object_id=customer)

    run_jobs()

    assert [request.status for request in receiver.received] == [500, 503, 200]
    assert [request.webhook_id for request in receiver.received] == [event.id] * 3
    for request in receiver.received:  # each attempt signed anew, the same event
        assert verified(request, endpoint["secret"])["id"] == event.id
    delivery = WebhookDelivery.objects.get(event=event)
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("succeeded", 3, 200)
    assert delivery.completed_at is not None and delivery.next_attempt_at is None
    attempts = list(WebhookAttempt.objects.filter(delivery=delivery))
    assert [(a.number, a.status_code, a.succeeded, a.error) for a in attempts] == [
        (1, 500, False, ""),
        (2, 503, False, ""),
        (3, 200, True, ""),
    ]
    for attempt in attempts:  # the first 500 characters of the response
        assert attempt.response_excerpt.startswith(f'{{"status": {attempt.status_code}, "note": "x')
        assert len(attempt.response_excerpt) == 500
        assert attempt.duration_ms >= 0
    # One job, run three times (the same job keeps its place in the resource's order).
    assert jobs() == [
        ("succeeded", f"webhook:{endpoint['endpointId']}:customer:{customer}", 3, delivery.pk)
    ]


@pytest.mark.parametrize("outage", ["connection refused", "503"])
def test_a_receiver_down_for_a_while_gets_everything_it_missed_in_order(outage, receiver, settings):
    settings.WEBHOOK_RETRY_BASE_SECONDS = 3600  # retries wait (until `due_now`)
    # As many delivery slots as workers: a job finding none would be put back seconds ahead
    # and missed by `run_jobs` (the slots have their own tests: test_limits.py).
    settings.WEBHOOK_SLOTS_PER_INSTITUTION = 4
    institution = InstitutionFactory()
    api = Api("v2", issue_key(institution)[1])
    endpoint = subscribe(api, receiver.url)
    if outage == "503":
        receiver.respond = lambda request: 503
    else:
        receiver.stop()
    banking(api)
    expected = stored_events(institution)
    order = by_object(expected)

    run_jobs(concurrency=4)

    # Down: the first event of each resource was tried; every later one waits behind it.
    firsts = {ids[0] for ids in order.values()}
    tried = WebhookDelivery.objects.filter(attempts__gt=0)
    assert {delivery.event_id for delivery in tried} == firsts
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"pending"}
    assert receiver.acknowledged() == []
    if outage == "503":
        assert {request.webhook_id for request in receiver.received} == firsts
        assert {a.status_code for a in WebhookAttempt.objects.all()} == {503}
    else:
        assert receiver.received == []
        assert {(a.status_code, a.error) for a in WebhookAttempt.objects.all()} == {
            (None, "connection failed: Connection refused")
        }

    # Back: the retries fall due, and everything arrives, in order per resource.
    if outage == "503":
        receiver.respond = lambda request: 200
    else:
        receiver.start()
    due_now()
    run_jobs(concurrency=4)

    arrived = [verified(request, endpoint["secret"]) for request in receiver.acknowledged()]
    assert sorted(arrived, key=lambda event: event["id"]) == expected  # each once
    assert by_object(arrived) == order
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"succeeded"}
    assert {job[0] for job in jobs()} == {"succeeded"}


def test_after_three_days_the_delivery_fails_and_the_next_event_of_its_resource_goes(
    receiver, settings
):
    settings.WEBHOOK_RETRY_BASE_SECONDS = 3600
    institution = InstitutionFactory()
    api = Api("v2", issue_key(institution)[1])
    endpoint = subscribe(api, receiver.url, ["customer.created", "customer.updated"])
    customer = create_customer(api)
    first = Event.objects.get(object_id=customer)
    receiver.respond = lambda request: 500 if request.webhook_id == first.id else 200
    resource(api.patch(f"/customers/{customer}", {"email": "ada@example.com"}), "v2")
    second = Event.objects.get(object_id=customer, type="customer.updated")

    run_jobs()

    assert {request.webhook_id for request in receiver.received} == {first.id}  # 2nd waits
    delivery = WebhookDelivery.objects.get(event=first)
    assert delivery.status == "pending"
    assert delivery.retry_until == delivery.created_at + timedelta(days=3)
    assert delivery.created_at < delivery.next_attempt_at <= delivery.retry_until

    # Three days of failures later: the next failed attempt is the last.
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        created_at=delivery.created_at - timedelta(days=3),
        retry_until=timezone.now() - timedelta(seconds=1),
    )
    due_now()
    run_jobs()

    delivery.refresh_from_db()
    assert (delivery.status, delivery.last_status_code) == ("failed", 500)
    assert delivery.completed_at is not None and delivery.next_attempt_at is None
    assert delivery.attempts == WebhookAttempt.objects.filter(delivery=delivery).count() >= 2
    assert [request.webhook_id for request in receiver.acknowledged()] == [second.id]
    assert WebhookDelivery.objects.get(event=second).status == "succeeded"
    # The failed delivery's job ended without error: the resource's queue moved on.
    assert {job[0] for job in jobs()} == {"succeeded"}
    assert verified(receiver.acknowledged()[0], endpoint["secret"])["type"] == "customer.updated"


def test_a_timeout_is_an_attempt_and_the_event_is_sent_again(receiver, settings):
    settings.WEBHOOK_TIMEOUT_SECONDS = 1
    institution = InstitutionFactory()
    api = Api("v2", issue_key(institution)[1])
    subscribe(api, receiver.url, ["customer.created"])

    def respond(request):
        receiver.delay = 3 if not receiver.received else 0  # the first answer comes too late
        return 200

    receiver.respond = respond
    customer = create_customer(api)

    run_jobs()

    delivery = WebhookDelivery.objects.get(event__object_id=customer)
    attempts = list(WebhookAttempt.objects.filter(delivery=delivery))
    first, last = attempts[0], attempts[-1]
    assert (first.status_code, first.succeeded, first.error, first.response_excerpt) == (
        None,
        False,
        "timeout: no response within 1 s",
        "",
    )
    assert 1000 <= first.duration_ms < 3000
    assert (last.status_code, last.succeeded, last.error) == (200, True, "")
    assert (delivery.status, delivery.attempts) == ("succeeded", len(attempts))
    assert [request.webhook_id for request in receiver.received] == [delivery.event_id] * len(
        attempts
    )


def test_redirects_are_not_followed(receiver):
    institution = InstitutionFactory()
    api = Api("v2", issue_key(institution)[1])
    subscribe(api, receiver.url, ["customer.created"])
    statuses = iter([302, 200])
    receiver.respond = lambda request: next(statuses)
    create_customer(api)

    run_jobs()

    assert [(request.path, request.status) for request in receiver.received] == [
        ("/hooks?source=tx", 302),
        ("/hooks?source=tx", 200),
    ]
    assert list(WebhookAttempt.objects.values_list("status_code", "succeeded")) == [
        (302, False),
        (200, True),
    ]


def test_only_subscribed_types_of_the_institution_are_delivered(receiver):
    institution = InstitutionFactory()
    api = Api("v2", issue_key(institution)[1])
    other = Api("v2", issue_key(InstitutionFactory())[1])
    endpoint = subscribe(api, receiver.url, ["account.opened", "transfer.posted"])
    disabled = subscribe(api, receiver.url, ["*"], enabled=False)
    banking(api)
    banking(other)  # another institution's events: not for this endpoint

    run_jobs()

    expected = [
        event
        for event in stored_events(institution)
        if event["type"] in ("account.opened", "transfer.posted")
    ]
    arrived = [verified(request, endpoint["secret"]) for request in receiver.acknowledged()]
    assert sorted(arrived, key=lambda event: event["id"]) == expected
    assert not WebhookDelivery.objects.filter(endpoint_id=disabled["endpointId"]).exists()


def test_an_endpoint_disabled_before_its_turn_gets_nothing(receiver, settings):
    settings.WEBHOOK_RETRY_BASE_SECONDS = 3600
    institution = InstitutionFactory()
    api = Api("v2", issue_key(institution)[1])
    endpoint = subscribe(api, receiver.url, ["customer.created"])
    customer = create_customer(api)
    resource(api.patch(f"/webhook-endpoints/{endpoint['endpointId']}", {"enabled": False}), "v2")

    run_jobs()

    assert receiver.received == []
    delivery = WebhookDelivery.objects.get(event__object_id=customer)
    assert (delivery.status, delivery.attempts, delivery.last_error) == (
        "failed",
        0,
        "endpoint disabled",
    )
    assert not WebhookAttempt.objects.exists()


def test_load_and_transfer_reach_the_endpoint_while_the_money_moves(receiver):
    """The jobs commit with the change: a transfer's event is deliverable once it answered."""
    institution = InstitutionFactory()
    api = Api("v2", issue_key(institution)[1])
    endpoint = subscribe(api, receiver.url, ["adjustment.posted", "transfer.posted"])
    source = open_account(api)["accountId"]
    destination = open_account(api)["accountId"]
    load(api, source, 1_000)
    posted = created(transfer(api, source, destination, 250), "v2")

    run_jobs()

    arrived = [verified(request, endpoint["secret"]) for request in receiver.acknowledged()]
    assert [event["type"] for event in arrived] == ["adjustment.posted", "transfer.posted"]
    assert arrived[1]["objectId"] == posted["transferId"]


def test_a_failed_delivery_retried_by_staff_arrives(receiver, settings, admin_client):
    institution = InstitutionFactory()
    api = Api("v2", issue_key(institution)[1])
    endpoint = subscribe(api, receiver.url, ["customer.created"])
    receiver.respond = lambda request: 500
    customer = create_customer(api)
    delivery = WebhookDelivery.objects.get(event__object_id=customer)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(retry_until=timezone.now())
    run_jobs()
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("failed", 1)

    receiver.respond = lambda request: 200
    action = {"action": "retry_deliveries", "_selected_action": [delivery.pk]}
    changelist = "/admin/webhooks/webhookdelivery/"
    assert admin_client.post(changelist, action).status_code == 200  # the confirmation page
    admin_client.post(changelist, {**action, "confirm": "yes"})
    run_jobs()

    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("succeeded", 2, 200)
    assert [request.status for request in receiver.received] == [500, 200]
    assert verified(receiver.received[-1], endpoint["secret"])["objectId"] == customer
