"""Who else hears of an event: functions registered at startup (an app's `ready()`), each
called with the events just written (one, or a batch's), inside the transaction of the change.

Events know nothing of their consumers: the webhooks app registers its scheduling here
(`webhooks.apps.WebhooksConfig.ready`), not the other way round. A consumer runs in the
caller's transaction: what it writes commits or rolls back with the change, and an error it
raises fails the change (no event is ever half consumed). It must be cheap when it has
nothing to do (the webhooks' costs one query then).

A consumer may register a `Lookup` too: the one read it makes of the events, as a scalar
subquery. The posting function's statement carries it (`accounts.posting.post`), so a change of
balances costs its consumers no round trip of their own; the consumer is then called with the
subquery's value as `found`. Events written by `emit()` are announced without it, and the
consumer reads for itself.
"""

from collections.abc import Callable
from dataclasses import dataclass

Consumer = Callable[..., object]  # called as consumer(events=[event, ...]) or (..., found=...)


@dataclass(frozen=True)
class Lookup:
    """A consumer's read of some events as one scalar subquery: `sql` (with %s placeholders,
    its value JSON), its parameters for given events by `params(events)`."""

    sql: str
    params: Callable[[list], list]


_consumers: list[Consumer] = []
_lookups: dict[Consumer, Lookup] = {}


def register(consumer: Consumer, *, lookup: Lookup | None = None) -> None:
    """Call `consumer(events=...)` for every event from now on; registering twice is once.
    With `lookup`, events that a statement of their own announces come with its value
    (`consumer(events=..., found=...)`)."""
    if consumer not in _consumers:
        _consumers.append(consumer)
    if lookup is not None:
        _lookups[consumer] = lookup


def registered() -> tuple[Consumer, ...]:
    return tuple(_consumers)


def lookups() -> list[tuple[Consumer, Lookup]]:
    """The registered consumers' lookups, in registration order."""
    return [(consumer, _lookups[consumer]) for consumer in _consumers if consumer in _lookups]


def notify(events: list, found: dict[Consumer, object] | None = None) -> None:
    """Every registered consumer, in registration order, with the events just written (called
    by `events.services.announce` only) and, when its lookup was read with them, its value."""
    for consumer in _consumers:
        if found is not None and consumer in found:
            consumer(events=events, found=found[consumer])
        else:
            consumer(events=events)
