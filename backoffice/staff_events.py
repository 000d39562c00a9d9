"""Staff events (`backoffice.models.StaffEvent`): a row in the transaction of the change it
records and, once that commits, a line on the `tx.staff` logger (what alerting watches, as for
lockouts: `backoffice.lockouts`). Nothing secret goes in either: no code, seed, token or card
number."""

import logging

from django.db import transaction as db_transaction

from backoffice.models import StaffEvent

logger = logging.getLogger("tx.staff")


def staff_event_record(
    *, type: str, user, by=None, data: dict | None = None, level: int = logging.INFO
) -> StaffEvent:
    """Write a `StaffEvent` of `type` about `user`'s account, done by `by` (a staff user, or
    None), and log it after the commit at `level`."""
    event = StaffEvent.objects.create(type=type, user=user, by=by, data=data or {})
    extra = {
        "staffEventId": event.pk,
        "staffEventType": type,
        "username": user.get_username(),
        "by": by.get_username() if by is not None else None,
    }
    db_transaction.on_commit(lambda: logger.log(level, "staff event %s", type, extra=extra))
    return event
