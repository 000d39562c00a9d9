"""Deliveries: scheduled with the event (`webhooks.services.scheduling`), attempted by the
`webhooks.deliver` job, retried by staff.

An attempt (`delivery_attempt`): POST the event as JSON (the body of `GET /events/{id}`, the
same in both versions, without `meta`), signed per Standard Webhooks: `webhook-id` is the event
id (the same on every attempt: receivers deduplicate by it), `webhook-timestamp` the time of the
attempt, `webhook-signature` `v1,<base64 HMAC-SHA256>` by `standardwebhooks.Webhook`. A 2xx
succeeds; anything else (another status, a redirect, a timeout, no connection, a refused
address) is retried after an exponential backoff with full jitter, until `retry_until`
(WEBHOOK_RETRY_WINDOW_SECONDS, three days, after the delivery was created); the attempt that
fails after it marks the delivery failed. The HTTP call runs outside any transaction; its
attempt is recorded in one. It has one wall-clock deadline (WEBHOOK_TIMEOUT_SECONDS) and reads
at most WEBHOOK_MAX_RESPONSE_BYTES (`core.outbound.transport`), and it runs only in one of the
institution's delivery slots (`webhooks.services.slots`): when none is free, `NoDeliverySlot`
says when to look again, and nothing is attempted or recorded.
"""

import json
import logging
import random
import time
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from standardwebhooks import Webhook

from core.exceptions import InvalidStateTransition, ValidationFailed
from core.metrics import WEBHOOK_ATTEMPTS, WEBHOOK_DELIVERIES, count_on_commit
from core.outbound import transport
from core.outbound.targets import TargetRefused, check_addresses, parse_url
from events.models import Event
from events.payloads import event_payload

from ..locks import lock_delivery, lock_delivery_to_retry
from ..models import WebhookAttempt, WebhookDelivery
from .scheduling import deliveries_defer
from .slots import delivery_slot, slot_wait

USER_AGENT = "TX-Webhooks/1.0"
logger = logging.getLogger(__name__)
_random = random.SystemRandom()


class NoDeliverySlot(Exception):  # noqa: N818 (not an error: the delivery waits its turn)
    """Every delivery slot of the endpoint's institution is taken: nothing was attempted; look
    again at `retry_at`."""

    def __init__(self, retry_at: datetime):
        self.retry_at = retry_at
        super().__init__(f"no delivery slot free; again at {retry_at.isoformat()}")


def retry_delay(attempt: int) -> float:
    """Seconds to wait after failed attempt number `attempt` (1, 2, ...): exponential backoff
    with full jitter, uniform in [0, min(cap, base * 2 ** (attempt - 1))]."""
    base = settings.WEBHOOK_RETRY_BASE_SECONDS
    cap = settings.WEBHOOK_RETRY_CAP_SECONDS
    ceiling = min(cap, base * 2 ** min(max(attempt - 1, 0), 62))
    return _random.uniform(0, ceiling)


def payload(event: Event) -> bytes:
    """The request body: the event as `GET /events/{id}` shows it (without `meta`)."""
    return json.dumps(event_payload(event), separators=(",", ":")).encode()


def signed_headers(*, secret: str, event_id: str, body: bytes, at: datetime) -> dict[str, str]:
    """The Standard Webhooks headers of one attempt at `at` (whole seconds, UTC)."""
    signature = Webhook(secret).sign(msg_id=event_id, timestamp=at, data=body.decode())
    return {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": event_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": signature,
    }


def delivery_attempt(*, delivery_id: str) -> datetime | None:
    """Attempt one delivery (the `webhooks.deliver` job). Returns when to try again, or None
    when the delivery is final (succeeded, failed, or not pending any more: a job run twice
    sends nothing twice). An endpoint disabled since the delivery was scheduled gets nothing:
    the delivery fails without an attempt (staff may retry it once the endpoint is enabled).
    Raises NoDeliverySlot, having attempted and recorded nothing, when the institution's
    WEBHOOK_SLOTS_PER_INSTITUTION attempts are all in flight."""
    delivery = (
        WebhookDelivery.objects.select_related("endpoint", "event").filter(pk=delivery_id).first()
    )
    if delivery is None or delivery.status != WebhookDelivery.Status.PENDING:
        return None
    if not delivery.endpoint.enabled:
        _fail_unattempted(delivery, "endpoint disabled")
        return None
    with delivery_slot(institution_id=delivery.endpoint.institution_id) as slot:
        if slot is None:
            raise NoDeliverySlot(timezone.now() + timedelta(seconds=slot_wait()))
        started_at = timezone.now()
        try:
            outcome = _send(delivery)
        except Exception:
            # A bug, or a secret that no longer decrypts (its key left FIELD_ENCRYPTION_KEYS):
            # an attempt like any failed one, so the retry window still ends it and the
            # resource's next events are not held up for ever.
            logger.exception("Webhook delivery %s: the request could not be made", delivery.pk)
            outcome = transport.Outcome(
                duration_ms=0, error="internal error: the request could not be made (worker log)"
            )
    return _record(delivery, started_at, outcome)


def _send(delivery: WebhookDelivery) -> transport.Outcome:
    endpoint, event = delivery.endpoint, delivery.event
    started = time.monotonic()
    try:
        target = parse_url(endpoint.url)
        if not settings.WEBHOOK_ALLOW_PRIVATE_TARGETS:
            check_addresses(target)  # again: DNS may have changed since the endpoint was saved
    except TargetRefused as exc:
        elapsed = round((time.monotonic() - started) * 1000)
        return transport.Outcome(duration_ms=elapsed, error=f"refused: {exc}")
    body = payload(event)
    at = datetime.fromtimestamp(int(time.time()), tz=UTC)
    headers = signed_headers(secret=endpoint.secret(), event_id=event.pk, body=body, at=at)
    return transport.post(
        target.url,
        body=body,
        headers=headers,
        timeout=settings.WEBHOOK_TIMEOUT_SECONDS,
        max_response_bytes=settings.WEBHOOK_MAX_RESPONSE_BYTES,
    )


def _record(
    delivery: WebhookDelivery, started_at: datetime, outcome: transport.Outcome
) -> datetime | None:
    """The attempt, and the delivery's new state, in one transaction."""
    retry_at = None
    with transaction.atomic():
        delivery = lock_delivery(delivery.pk)
        number = delivery.attempts + 1
        WebhookAttempt.objects.create(
            delivery=delivery,
            number=number,
            started_at=started_at,
            duration_ms=outcome.duration_ms,
            status_code=outcome.status_code,
            error=outcome.error,
            response_excerpt=outcome.response_excerpt,
            succeeded=outcome.succeeded,
        )
        count_on_commit(
            WEBHOOK_ATTEMPTS.labels(outcome="succeeded" if outcome.succeeded else "failed")
        )
        delivery.attempts = number
        delivery.last_status_code = outcome.status_code
        delivery.last_error = outcome.error
        fields = ["attempts", "last_status_code", "last_error"]
        if delivery.status == WebhookDelivery.Status.PENDING:
            now = timezone.now()
            if outcome.succeeded:
                _complete(delivery, WebhookDelivery.Status.SUCCEEDED, now)
            elif now >= delivery.retry_until:
                _complete(delivery, WebhookDelivery.Status.FAILED, now)
            else:
                retry_at = min(now + timedelta(seconds=retry_delay(number)), delivery.retry_until)
                delivery.next_attempt_at = retry_at
            fields += ["status", "next_attempt_at", "completed_at"]
        delivery.save(update_fields=fields)
    return retry_at


def _complete(delivery: WebhookDelivery, status: str, now: datetime) -> None:
    count_on_commit(WEBHOOK_DELIVERIES.labels(outcome=status))
    delivery.status = status
    delivery.completed_at = now
    delivery.next_attempt_at = None


def _fail_unattempted(delivery: WebhookDelivery, reason: str) -> None:
    with transaction.atomic():
        delivery = lock_delivery(delivery.pk)
        if delivery.status != WebhookDelivery.Status.PENDING:
            return
        _complete(delivery, WebhookDelivery.Status.FAILED, timezone.now())
        delivery.last_error = reason
        delivery.save(update_fields=["status", "completed_at", "next_attempt_at", "last_error"])


def delivery_retry(*, delivery: WebhookDelivery) -> WebhookDelivery:
    """Staff: try a failed delivery again. It becomes pending with a new retry window
    (WEBHOOK_RETRY_WINDOW_SECONDS from now) and a new job, queued behind the jobs of its
    resource waiting now (it was failed: the events after it have gone already, so it arrives
    late). 409 `invalid_state_transition` unless failed; 400 when the endpoint is disabled."""
    with transaction.atomic():
        delivery = lock_delivery_to_retry(delivery.pk)
        if delivery.status != WebhookDelivery.Status.FAILED:
            raise InvalidStateTransition(
                f"Only a failed delivery can be retried; this one is {delivery.status}.",
                from_state=delivery.status,
                to_state=WebhookDelivery.Status.PENDING,
            )
        if not delivery.endpoint.enabled:
            raise ValidationFailed(
                "The endpoint is disabled: enable it before retrying its deliveries.",
                details={"endpoint": "Disabled."},
            )
        now = timezone.now()
        delivery.status = WebhookDelivery.Status.PENDING
        delivery.completed_at = None
        delivery.next_attempt_at = now
        delivery.retry_until = now + timedelta(seconds=settings.WEBHOOK_RETRY_WINDOW_SECONDS)
        delivery.save(update_fields=["status", "completed_at", "next_attempt_at", "retry_until"])
        deliveries_defer([delivery])
    return delivery
