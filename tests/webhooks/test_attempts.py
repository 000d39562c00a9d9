"""One attempt at a time (`delivery_attempt`, what the job runs), without the worker: what is
sent, what is recorded, when the next attempt is due, and the addresses refused at delivery
time (DNS may have changed since the endpoint was saved)."""

import json
import socket
from datetime import timedelta

import pytest
from django.utils import timezone
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from core.outbound import targets
from events.payloads import event_payload
from tests import dns
from tests.dns import Records
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from webhooks.services import deliveries as deliveries_module
from webhooks.services import (
    delivery_attempt,
    retry_delay,
    signed_headers,
)

from .helpers import Receiver, pending_delivery, verified

pytestmark = pytest.mark.django_db


@pytest.fixture
def receiver():
    receiver = Receiver()
    yield receiver
    receiver.stop()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_what_is_sent_and_recorded_on_success(receiver):
    delivery, secret = pending_delivery(receiver.url)
    assert delivery_attempt(delivery_id=delivery.pk) is None  # final: nothing to retry

    [request] = receiver.received
    assert request.path == "/hooks?source=tx"
    assert verified(request, secret) == event_payload(delivery.event)
    assert json.loads(request.body) == event_payload(delivery.event)
    assert request.headers["webhook-id"] == delivery.event_id
    assert request.headers["user-agent"] == "TX-Webhooks/1.0"
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_status_code, delivery.last_error) == (
        "succeeded",
        1,
        200,
        "",
    )
    [attempt] = WebhookAttempt.objects.filter(delivery=delivery)
    assert (attempt.number, attempt.status_code, attempt.succeeded) == (1, 200, True)
    assert attempt.started_at <= delivery.completed_at

    # A job that runs again for a final delivery sends nothing.
    assert delivery_attempt(delivery_id=delivery.pk) is None
    assert len(receiver.received) == 1
    assert delivery_attempt(delivery_id="whd_unknown") is None


def test_the_signature_is_the_standard_one():
    secret = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    at = timezone.now().replace(microsecond=0)
    body = b'{"id":"evt_1"}'
    headers = signed_headers(secret=secret, event_id="evt_1", body=body, at=at)
    assert headers["webhook-timestamp"] == str(int(at.timestamp()))
    assert Webhook(secret).verify(body, headers) == {"id": "evt_1"}
    with pytest.raises(WebhookVerificationError, match="No matching signature"):
        Webhook(secret).verify(b'{"id":"evt_2"}', headers)


def test_a_failure_is_recorded_and_retried_later(receiver, settings):
    settings.WEBHOOK_RETRY_BASE_SECONDS = 10
    receiver.respond = lambda request: 500
    delivery, _ = pending_delivery(receiver.url)
    before = timezone.now()
    retry_at = delivery_attempt(delivery_id=delivery.pk)
    assert before <= retry_at <= timezone.now() + timedelta(seconds=10)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("pending", 1, 500)
    assert delivery.next_attempt_at == retry_at


def test_the_last_retry_is_at_the_end_of_the_window(receiver, settings, monkeypatch):
    settings.WEBHOOK_RETRY_BASE_SECONDS = 3600
    receiver.respond = lambda request: 500
    delivery, _ = pending_delivery(receiver.url)
    end = timezone.now() + timedelta(seconds=5)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(retry_until=end)
    monkeypatch.setattr(deliveries_module._random, "uniform", lambda low, high: high)
    assert delivery_attempt(delivery_id=delivery.pk) == end  # the longest wait ends there
    WebhookDelivery.objects.filter(pk=delivery.pk).update(retry_until=timezone.now())
    assert delivery_attempt(delivery_id=delivery.pk) is None
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.next_attempt_at) == ("failed", 2, None)


def test_backoff_is_exponential_with_full_jitter(settings, monkeypatch):
    settings.WEBHOOK_RETRY_BASE_SECONDS = 10
    settings.WEBHOOK_RETRY_CAP_SECONDS = 3600
    monkeypatch.setattr(deliveries_module._random, "uniform", lambda low, high: (low, high))
    assert [retry_delay(n) for n in range(1, 11)] == [
        (0, 10),
        (0, 20),
        (0, 40),
        (0, 80),
        (0, 160),
        (0, 320),
        (0, 640),
        (0, 1280),
        (0, 2560),
        (0, 3600),
    ]
    assert retry_delay(10_000) == (0, 3600)
    monkeypatch.undo()
    delays = [retry_delay(3) for _ in range(200)]
    assert all(0 <= delay <= 40 for delay in delays) and len(set(delays)) > 100


def test_errors_name_no_url_and_no_token(settings):
    delivery, _ = pending_delivery(f"http://127.0.0.1:{free_port()}/hooks?token=s3cr3t")
    assert delivery_attempt(delivery_id=delivery.pk) is not None
    attempt = WebhookAttempt.objects.get(delivery=delivery)
    assert (attempt.status_code, attempt.error) == (None, "connection failed: Connection refused")
    delivery.refresh_from_db()
    assert delivery.last_error == "connection failed: Connection refused"


# --- SSRF at delivery time
def test_a_private_target_is_refused_at_delivery_with_production_rules(receiver, settings):
    delivery, _ = pending_delivery(receiver.url)  # saved while private targets were allowed
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
    settings.WEBHOOK_REQUIRE_HTTPS = False
    assert delivery_attempt(delivery_id=delivery.pk) is not None  # retried: DNS may change
    assert receiver.received == []
    attempt = WebhookAttempt.objects.get(delivery=delivery)
    assert (attempt.status_code, attempt.succeeded, attempt.error) == (
        None,
        False,
        f"refused: {targets.REFUSED}",
    )


def test_http_is_refused_at_delivery_when_https_is_required(receiver, settings):
    delivery, _ = pending_delivery(receiver.url)
    settings.WEBHOOK_REQUIRE_HTTPS = True
    delivery_attempt(delivery_id=delivery.pk)
    assert receiver.received == []
    assert WebhookAttempt.objects.get(delivery=delivery).error == (
        "refused: The scheme must be https."
    )


def test_a_name_that_rebinds_to_loopback_is_refused_on_connect(receiver, settings, monkeypatch):
    """The check resolved a public address (here, the check's lookup says so), the connection's
    lookup (the DNS's answer now, tests/dns.py) lands on loopback: the socket's peer is what
    counts, and nothing is sent."""
    with dns.serving() as names:
        names.records = {"hooks.rebind.example": Records(["127.0.0.1"], ttl=0)}
        dns.use(monkeypatch, names)
        url = f"http://hooks.rebind.example:{receiver.port}/hooks"
        delivery, _ = pending_delivery(url)
        settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
        monkeypatch.setattr(targets, "resolve", lambda host: ["93.184.216.34"])
        assert delivery_attempt(delivery_id=delivery.pk) is not None
    assert names.questions("hooks.rebind.example") >= 1  # the connection asked
    assert receiver.received == []
    assert WebhookAttempt.objects.get(delivery=delivery).error == f"refused: {targets.REFUSED}"


def test_a_request_that_cannot_be_made_is_a_failed_attempt(receiver, settings, caplog):
    """A secret that no longer decrypts (its key left FIELD_ENCRYPTION_KEYS) fails the attempt,
    so the retry window still ends the delivery (the resource's next events are not held up)."""
    delivery, _ = pending_delivery(receiver.url)
    WebhookEndpoint.objects.filter(pk=delivery.endpoint_id).update(secret_encrypted="old:AAAA")
    WebhookDelivery.objects.filter(pk=delivery.pk).update(retry_until=timezone.now())
    assert delivery_attempt(delivery_id=delivery.pk) is None
    assert receiver.received == []
    delivery.refresh_from_db()
    assert (delivery.status, delivery.last_error) == (
        "failed",
        "internal error: the request could not be made (worker log)",
    )
    assert "the request could not be made" in caplog.text
