"""Card-number guessing: failed PAN resolutions are counted per API key, and per staff user in
the back office's search, over a sliding window; at `PAN_GUESSING_MAX_FAILURES` within
`PAN_GUESSING_WINDOW_SECONDS` the key gets 429 `rate_limited` on every operation that resolves
a PAN (the staff user: no card-number search) until enough failures leave the window.

- `card_by_pan` resolves a PAN to its card for every operation that takes one, guarded by the
  two below. It is a service, not a selector: a failed resolution writes (the failure it keeps).
- `pan_guard_wait` / `pan_guard_check` run before a PAN is resolved (one index-backed query:
  the subject's N-th newest failure in the window; when it exists the subject is refused until
  it leaves the window, which is the `Retry-After`).
- `pan_failure_record` is the write a failed resolution keeps: `card_by_pan` asks its operation to
  keep it (`core.operations.keep_if_refused`), which runs it after the operation's own
  transaction has been rolled back, in a short transaction of its own. The system (jobs) and
  staff outside the search resolve PANs uncounted; the search counts each staff user's misses
  here too (`pan_failure_count`, from `backoffice.services.pan_guessing`).
- The crossing (the failure that brings the count to the threshold) emits exactly one
  `security.pan_guessing_suspected` event: the key's row is locked (FOR NO KEY UPDATE, which
  does not block the foreign-key checks of the key's other writes) while the failure is written
  and counted, so concurrent failures are counted one after the other and only one of them sees
  the count reach the threshold. A successful resolution does not reset the count.
"""

import math
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.actors import Actor
from core.exceptions import NotFound, RateLimited
from core.operations import keep_if_refused
from events.services import emit_for
from institutions.locks import lock_api_key_for_counting, lock_staff_user_for_counting
from institutions.models import ApiKey, Institution

from ..models import Card, PanResolutionFailure
from ..secrets import pan_fingerprint

EVENT_TYPE = "security.pan_guessing_suspected"


def _window() -> timedelta:
    return timedelta(seconds=settings.PAN_GUESSING_WINDOW_SECONDS)


def _failures_of(*, api_key_id: str | None, staff_user_id: int | None):
    if (api_key_id is None) == (staff_user_id is None):
        raise ValueError("One subject: an API key or a staff user.")
    if api_key_id is not None:
        return PanResolutionFailure.objects.filter(api_key_id=api_key_id)
    return PanResolutionFailure.objects.filter(staff_user_id=staff_user_id)


def pan_guard_wait(*, api_key_id: str | None = None, staff_user_id: int | None = None) -> int:
    """Seconds before the API key or the staff user may resolve a PAN again: 0 when they may
    now. One index-backed query, no write."""
    limit = settings.PAN_GUESSING_MAX_FAILURES
    now = timezone.now()
    # The limit-th newest failure in the window: when it exists the subject has reached the
    # limit, and is unblocked when that failure (the oldest one that matters) leaves the window.
    blocking = list(
        _failures_of(api_key_id=api_key_id, staff_user_id=staff_user_id)
        .filter(created_at__gt=now - _window())
        .order_by("-created_at")
        .values_list("created_at", flat=True)[limit - 1 : limit]
    )
    if not blocking:
        return 0
    return max(1, math.ceil((blocking[0] + _window() - now).total_seconds()))


def pan_guard_check(*, api_key: ApiKey) -> None:
    """Refuse (429 `rate_limited`, `Retry-After` in seconds) a key that has reached the number
    of failed PAN resolutions allowed in the window. Writes nothing."""
    wait = pan_guard_wait(api_key_id=api_key.pk)
    if wait:
        raise RateLimited(
            "Too many card numbers that match no card: operations that take a PAN are refused "
            "for this API key until the time in Retry-After.",
            retry_after=wait,
        )


def pan_failure_count(*, api_key_id: str | None = None, staff_user_id: int | None = None) -> int:
    """Write one failed PAN resolution of the API key or the staff user (the PAN is not kept)
    in the caller's transaction, and return their failures in the window, this one included.
    The subject's row is locked first (FOR NO KEY UPDATE, which does not block the foreign-key
    checks of its other writes), so concurrent failures are counted one after the other and
    exactly one of them sees the count reach the threshold. Deletes the subject's failures that
    have left the window."""
    if api_key_id is not None:
        institution_id = lock_api_key_for_counting(api_key_id).institution_id
    else:
        lock_staff_user_for_counting(staff_user_id)
        institution_id = None
    now = timezone.now()  # after the lock: failures are written in the order they count
    start = now - _window()
    failures = _failures_of(api_key_id=api_key_id, staff_user_id=staff_user_id)
    failures.filter(created_at__lte=start).delete()
    PanResolutionFailure.objects.create(
        api_key_id=api_key_id,
        staff_user_id=staff_user_id,
        institution_id=institution_id,
        created_at=now,
    )
    return failures.filter(created_at__gt=start).count()


def pan_failure_record(*, api_key_id: str) -> None:
    """Count one failed PAN resolution of the key (`pan_failure_count`, in a transaction of its
    own); emit `security.pan_guessing_suspected` when this failure brings the key's count in
    the window to the threshold. (A staff user's failures are the back office's:
    `backoffice.services.pan_guessing`.)"""
    with transaction.atomic():
        count = pan_failure_count(api_key_id=api_key_id)
        if count == settings.PAN_GUESSING_MAX_FAILURES:
            api_key = ApiKey.objects.select_related("institution").get(pk=api_key_id)
            emit_for(
                api_key,
                EVENT_TYPE,
                data={
                    "api_key_id": api_key.pk,
                    "failures": count,
                    "window_seconds": settings.PAN_GUESSING_WINDOW_SECONDS,
                },
            )


def card_by_pan(*, institution: Institution, pan: str, actor: Actor) -> Card:
    """The card holding `pan`: the live one, else the newest that held it (a renewed, reissued
    or closed card keeps its PAN fingerprint). Every operation that takes a PAN resolves it here.

    For an API key (`actor.api_key`), card-number guessing is stopped: a key with too many
    failed resolutions in the window is refused first (429 `rate_limited`, nothing resolved),
    and a failure is counted (`pan_failure_record`, kept when the 404 rolls the operation back:
    a write, which is why this is a service and not a selector). 404 `not_found` when none of
    the institution's cards has the PAN: another institution's PAN answers and counts exactly as
    an unknown one."""
    api_key = actor.api_key
    if api_key is not None:
        pan_guard_check(api_key=api_key)
    cards = Card.objects.select_related("institution", "product", "account", "successor").filter(
        institution=institution, pan_fingerprint=pan_fingerprint(pan)
    )
    card = cards.filter(status__in=Card.LIVE).first() or cards.order_by("-id").first()
    if card is None:
        if api_key is not None:
            # The 404 rolls the operation back; the failure must outlive it.
            keep_if_refused(partial(pan_failure_record, api_key_id=api_key.pk))
        raise NotFound("No card with this PAN.")
    return card
