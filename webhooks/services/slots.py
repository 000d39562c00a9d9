"""Delivery slots: at most WEBHOOK_SLOTS_PER_INSTITUTION attempts of one institution in flight
at once, over every worker.

Why: an attempt holds a worker's job slot for up to WEBHOOK_TIMEOUT_SECONDS. The per-resource
job locks (`delivery_lock`) keep one resource's events in order, but do not stop one
institution with 16 slow endpoints and many resources from filling every slot of every
delivery worker, and so from delaying every other institution's webhooks.

How: slot `n` of an institution is a session-level PostgreSQL advisory lock on the key
`hashtextextended('webhooks.slot:<institution>:<n>', 0)`, taken with `pg_try_advisory_lock`
(never waits) on the worker thread's database connection before the HTTP call and released
after it. A worker that dies releases its slots with its connection: nothing to clean up,
nothing stale. This needs a session-level connection to PostgreSQL (direct, or a pooler in
session mode), as the rest of the service does.

When all of an institution's slots are taken, the delivery is not attempted: the job raises,
procrastinate puts the same job back in the queue `slot_wait()` seconds later, and the worker's
slot is free at once (`webhooks.tasks.SlotsBusy`). The delivery records no attempt and its
retry window is not touched; the job keeps its place before the later events of its resource.
"""

import logging
import random
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import DatabaseError, connection

logger = logging.getLogger(__name__)
_random = random.SystemRandom()

_TRY = "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))"
_RELEASE = "SELECT pg_advisory_unlock(hashtextextended(%s, 0))"


def _key(institution_id: str, slot: int) -> str:
    return f"webhooks.slot:{institution_id}:{slot}"


@contextmanager
def delivery_slot(*, institution_id: str) -> Iterator[int | None]:
    """Hold one of the institution's WEBHOOK_SLOTS_PER_INSTITUTION slots for the block; yields
    its number, or None when every slot is taken (then nothing is held). At most K + 1
    queries."""
    taken = None
    with connection.cursor() as cursor:
        for slot in range(settings.WEBHOOK_SLOTS_PER_INSTITUTION):
            cursor.execute(_TRY, [_key(institution_id, slot)])
            if cursor.fetchone()[0]:
                taken = slot
                break
    try:
        yield taken
    finally:
        if taken is not None:
            _release(institution_id, taken)


def _release(institution_id: str, slot: int) -> None:
    try:
        with connection.cursor() as cursor:
            cursor.execute(_RELEASE, [_key(institution_id, slot)])
    except DatabaseError:
        # The lock lives as long as the session: ending the session frees it for sure.
        logger.warning(
            "Webhook slot %s of %s: release failed; connection closed", slot, institution_id
        )
        connection.close()


def slot_wait() -> float:
    """Seconds before a delivery that found no free slot is tried again: random (so the
    waiting jobs of a busy institution spread out) between 1 s and WEBHOOK_TIMEOUT_SECONDS,
    the longest a slot stays taken by one attempt."""
    return _random.uniform(1.0, max(1.0, settings.WEBHOOK_TIMEOUT_SECONDS))
