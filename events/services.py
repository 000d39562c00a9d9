"""`emit()`: record that something happened, inside the caller's transaction, and schedule its
webhook deliveries there too (`webhooks.services.deliveries_schedule`)."""

from django.db import transaction

from api.models import Institution

from .models import Event

EVENT_TYPES = (
    "customer.created",
    "customer.updated",
    "account.opened",
    "account.status_changed",
    "adjustment.posted",
    "hold.created",
    "hold.captured",
    "hold.released",
    "hold.expired",
    "transfer.posted",
    "transfer.reversed",
    "card.issued",
    "card.updated",
    "card.status_changed",
    "card.renewed",
    "card.reissued",
    "card.replaced",
    "card.pin_changed",
    "card.pin_blocked",
    "card.limits_changed",
    "card.security_settings_changed",
    "authorization.approved",
    "authorization.declined",
    "authorization.reversed",
    "authorization.expired",
    "transaction.settled",
    "monitoring.rule_created",
    "monitoring.rule_updated",
    "monitoring.alert_raised",
    "monitoring.alert_resolved",
    "security.pan_guessing_suspected",
)


def emit(
    *,
    institution: Institution,
    type: str,
    object_type: str,
    object_id: str,
    data: dict | None = None,
) -> Event:
    """Write an event. Must run inside the transaction of the change it records, so the two
    commit together or not at all; called outside one it raises (a bug, not a runtime case)."""
    if type not in EVENT_TYPES:
        raise ValueError(f"Unknown event type {type!r}; add it to EVENT_TYPES.")
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("emit() must be called inside the transaction of the change.")
    event = Event.objects.create(
        institution=institution,
        type=type,
        object_type=object_type,
        object_id=object_id,
        data=data or {},
    )
    # Its webhook deliveries and their jobs, in the same transaction (one query when the
    # institution has no endpoint for this type). Imported here: webhooks imports events.
    from webhooks.services import deliveries_schedule

    deliveries_schedule(event=event)
    return event
