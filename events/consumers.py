"""Who else hears of an event: functions registered at startup (an app's `ready()`), each
called with the events just written (one, or a batch's), inside the transaction of the change.

Events know nothing of their consumers: the webhooks app registers its scheduling here
(`webhooks.apps.WebhooksConfig.ready`), not the other way round. A consumer runs in the
caller's transaction: what it writes commits or rolls back with the change, and an error it
raises fails the change (no event is ever half consumed). It must be cheap when it has
nothing to do (the webhooks' costs one query then).
"""

from collections.abc import Callable

Consumer = Callable[..., object]  # called as consumer(events=[event, ...])

_consumers: list[Consumer] = []


def register(consumer: Consumer) -> None:
    """Call `consumer(event=...)` for every event from now on; registering twice is once."""
    if consumer not in _consumers:
        _consumers.append(consumer)


def registered() -> tuple[Consumer, ...]:
    return tuple(_consumers)


def notify(events: list) -> None:
    """Every registered consumer, in registration order, with the events just written
    (called by `events.services.announce` only)."""
    for consumer in _consumers:
        consumer(events=events)
