"""Card numbers guessed in the back office's search (docs/back-office.md, "Search"): a staff
user's card-number misses count in the API's guard (`cards.services.pan_guard`, the same limit
and window as an API key's), so a staff user who sees a card's first six and last four digits
cannot find its middle digits by searching until a number resolves.

The crossing (the miss that brings the user's count in the window to the limit) writes one
`security.pan_guessing_suspected` staff event (a WARNING on `tx.staff`: what alerting watches).
"""

import logging

from django.conf import settings
from django.db import transaction

from backoffice.models import StaffEvent
from backoffice.staff_events import staff_event_record
from cards.services.pan_guard import pan_failure_count, pan_guard_wait


def staff_pan_search_wait(*, user) -> int:
    """Seconds before `user` may search by card number again; 0 when they may now."""
    return pan_guard_wait(staff_user_id=user.pk)


def staff_pan_miss_record(*, user) -> None:
    """Count one card number `user` searched for that matched no card they may see (an unknown
    number and another institution's are the same miss), in a transaction of its own."""
    with transaction.atomic():
        count = pan_failure_count(staff_user_id=user.pk)
        if count == settings.PAN_GUESSING_MAX_FAILURES:
            staff_event_record(
                type=StaffEvent.Type.PAN_GUESSING_SUSPECTED,
                user=user,
                by=user,
                data={"failures": count, "window_seconds": settings.PAN_GUESSING_WINDOW_SECONDS},
                level=logging.WARNING,
            )
