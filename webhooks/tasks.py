"""The delivery job: `deliver(delivery_id=...)`, deferred by name (`DELIVER_TASK`) by
`webhooks.services.scheduling` with the lock of its resource (`delivery_lock`). This module
imports the services; they never import it.

A failed attempt that is to be retried raises `RetryLater` carrying the moment the service
computed (exponential backoff, full jitter, never past the delivery's `retry_until`);
`ComputedRetry` hands that moment to procrastinate, which puts the same job back in the queue
at that time. Keeping the same job (rather than deferring a new one) keeps its place before the
later events of its resource, which wait for it. Any other error (the database unreachable,
say) is retried on the same backoff, counted by the job's attempts; the delivery's own retry
window still decides, at the next attempt, when it fails for good.

When every delivery slot of the endpoint's institution is taken (`NoDeliverySlot`, see
`webhooks.services.slots`), the job raises `SlotsBusy`, a `RetryLater` a few seconds ahead:
the same job goes back to the queue (its place before the later events of its resource kept,
nothing recorded on the delivery) and the worker's slot is free for another institution.
"""

import logging
from datetime import datetime, timedelta

from django.utils import timezone
from procrastinate import RetryDecision
from procrastinate.contrib.django import app
from procrastinate.retry import BaseRetryStrategy

from .services import DELIVER_TASK, NoDeliverySlot, delivery_attempt, retry_delay

# Deliveries have their own queue, so their workers are not the periodic jobs' (docs/jobs.md).
QUEUE = "webhooks"


class RetryLater(Exception):  # noqa: N818 (not an error: the job is to run again)
    def __init__(self, retry_at: datetime, what: str = "delivery attempt failed"):
        self.retry_at = retry_at
        super().__init__(f"{what}; next attempt at {retry_at.isoformat()}")


class SlotsBusy(RetryLater):
    """No delivery slot of the institution was free: nothing was attempted."""

    def __init__(self, retry_at: datetime):
        super().__init__(retry_at, "no delivery slot of the institution free")


class PlannedRetryLogFilter(logging.Filter):
    """A planned retry is no error: the worker's line for it ("Error, to retry") keeps its
    message and job, gets `retryAt`, and loses the traceback (one per attempt, for days, when
    a receiver is down). Installed on procrastinate's worker logger by `WebhooksConfig`."""

    def filter(self, record: logging.LogRecord) -> bool:
        exception = record.exc_info[1] if record.exc_info else None
        if isinstance(exception, RetryLater):
            record.exc_info = None
            record.retryAt = exception.retry_at.isoformat()
        return True


class ComputedRetry(BaseRetryStrategy):
    def get_retry_decision(self, *, exception: BaseException, job) -> RetryDecision:
        if isinstance(exception, RetryLater):
            return RetryDecision(retry_at=exception.retry_at)
        return RetryDecision(
            retry_at=timezone.now() + timedelta(seconds=retry_delay(job.attempts + 1))
        )


@app.task(name=DELIVER_TASK, retry=ComputedRetry(), queue=QUEUE)
def deliver(*, delivery_id: str) -> None:
    """Attempt the delivery; raise RetryLater when it is to be tried again (SlotsBusy when it
    could not be attempted yet)."""
    try:
        retry_at = delivery_attempt(delivery_id=delivery_id)
    except NoDeliverySlot as busy:
        raise SlotsBusy(busy.retry_at) from None
    if retry_at is not None:
        raise RetryLater(retry_at)
