"""`emit()`: record that something happened, and who did it, inside the caller's transaction;
then tell the consumers registered at startup (`events.consumers`: the webhooks schedule their
deliveries there), still in that transaction. Events know nothing of their consumers.

A change of balances writes its events in the posting function's round trip instead
(`accounts.posting.post`): it makes them with `event_for()` and announces them with
`announce()` once written."""

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction

from core.actors import Actor, current_actor
from core.rows import new_row
from institutions.models import Institution

from . import consumers
from .models import Event
from .types import EVENT_TYPES, OBJECT_TYPES

__all__ = [
    "EVENT_TYPES",
    "announce",
    "emit",
    "emit_for",
    "emit_many",
    "event_for",
    "event_new",
    "lookups",
]


def event_new(
    *,
    institution: Institution,
    type: str,
    object_type: str,
    object_id: str,
    data: dict | None = None,
    actor: Actor | None = None,
    created_at: datetime | None = None,
) -> Event:
    """An event not yet written: `emit()` writes it, or the posting function writes it with the
    change it records (`accounts.posting.post`), which then calls `announce()`.

    Its actor is `actor` when the service has one, else the current actor its entry point
    set (`core.actors.current_actor`: the API key of the request, the staff user in the admin,
    the system for jobs and commands)."""
    if type not in EVENT_TYPES:
        raise ValueError(f"Unknown event type {type!r}; add it to events/types.py.")
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("emit() must be called inside the transaction of the change.")
    return new_row(
        Event,
        institution=institution,
        type=type,
        object_type=object_type,
        object_id=object_id,
        data=data or {},
        **Event.actor_fields(actor if actor is not None else current_actor()),
        **({} if created_at is None else {"created_at": created_at}),
    )


def event_for(
    obj,
    type: str,
    *,
    data: dict | None = None,
    institution: Institution | None = None,
    actor: Actor | None = None,
    created_at: datetime | None = None,
) -> Event:
    """`event_new()` of `type` about `obj`: its object type is the type's
    (`events.types.OBJECT_TYPES`), its object id `obj.pk`, its institution `obj.institution`,
    or `institution` when the caller holds it already loaded and `obj` does not (no query
    for it).

    An object that carries client metadata (`core.metadata`: customers, accounts, holds, cards,
    transfers, card authorizations) has it in every event about it, as it stands after the
    change: `data.metadata`, present when the object has metadata and in every event that
    changes it (`changed_fields` names `metadata`; `{}` when its last key was removed), absent
    when it has none (docs/metadata.md)."""
    metadata = getattr(obj, "metadata", None)
    if isinstance(metadata, dict) and (
        metadata or "metadata" in (data or {}).get("changed_fields", ())
    ):
        data = {**(data or {}), "metadata": dict(metadata)}
    return event_new(
        institution=obj.institution if institution is None else institution,
        type=type,
        object_type=OBJECT_TYPES.get(type),  # an unknown type: event_new() says so
        object_id=obj.pk,
        data=data,
        actor=actor,
        created_at=created_at,
    )


def announce(events: list[Event], found: dict | None = None) -> None:
    """Tell the consumers of events just written, in their transaction (e.g. their webhook
    deliveries and their jobs): all at once, so a batch costs its consumers one query, or none
    when `found` holds what their lookups read with the writing statement (`lookups`)."""
    if events:
        consumers.notify(events, found)


@dataclass(frozen=True)
class Carried:
    """The consumers' reads of some events (`consumers.Lookup`), for the statement that writes
    them to carry: `sql`, more columns to append to its SELECT list; `params`, theirs, after the
    statement's own; `found(values)`, the values of those columns by consumer, for `announce`."""

    sql: str = ""
    params: tuple = ()
    consumers: tuple = ()

    def found(self, values) -> dict:
        return dict(zip(self.consumers, values, strict=True))


def lookups(events: list[Event]) -> Carried:
    """What the statement writing `events` carries for their consumers (nothing without
    events)."""
    if not events:
        return Carried()
    registered = consumers.lookups()
    return Carried(
        sql="".join(f", ({lookup.sql})" for _, lookup in registered),
        params=tuple(param for _, lookup in registered for param in lookup.params(events)),
        consumers=tuple(consumer for consumer, _ in registered),
    )


def emit(**fields) -> Event:
    """Write an event (`event_new()`'s arguments) inside the transaction of the change it
    records, so the two commit together or not at all, and announce it."""
    return _write(event_new(**fields))


def emit_for(obj, type: str, **fields) -> Event:
    """Write and announce `event_for(obj, type, ...)`."""
    return _write(event_for(obj, type, **fields))


def emit_many(events: list[Event], *, batch_size: int = 1000) -> list[Event]:
    """Write events made by `event_new()` or `event_for()` (a batch job's, one a row it
    changed) in one statement a `batch_size`, inside the transaction of the changes, and
    announce them at once: their consumers' one query for all of them."""
    Event.objects.bulk_create(events, batch_size=batch_size)
    announce(events)
    return events


def _write(event: Event) -> Event:
    event.save(force_insert=True)
    announce([event])
    return event
