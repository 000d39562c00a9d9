"""The circuit breaker of a decisioning endpoint (issue 31 item 3; docs/decisioning.md,
"The breaker").

A program that fails FAILURES_TO_DEGRADE calls in a row (late, non-2xx, malformed, refused,
unreachable) is **degraded**: TX stops calling it and its `on_failure` decides each
authorization at once, instead of every card payment waiting out the timeout of a program that
is down. While degraded, one authorization every PROBE_SECONDS calls it anyway (the probe,
claimed by one UPDATE so that concurrent requests do not all probe); the first call that
succeeds **recovers** it. Each change of state is an event: `decisioning_endpoint.degraded`,
`decisioning_endpoint.recovered`.

The state is three columns of the endpoint's row, written only when it changes (a failure, the
first success after failures, a probe): the approved path of a healthy program writes nothing
here. Each write is one UPDATE, in the caller's transaction, after every other lock it takes
(the endpoint's row is the last lock of an authorization: docs/money.md, "Locking").
"""

from dataclasses import dataclass
from datetime import timedelta

from django.db.models import F
from django.utils import timezone

from core.timestamps import iso_millis
from events.services import emit_for

from .models import DecisioningEndpoint

FAILURES_TO_DEGRADE = 5
PROBE_SECONDS = 30


@dataclass(frozen=True)
class Gate:
    """Whether an authorization calls the endpoint: `call` false while it is degraded (and
    this one is not the probe)."""

    call: bool
    probe: bool = False


def gate(endpoint: DecisioningEndpoint) -> Gate:
    """Call a healthy endpoint; a degraded one only as the probe, which one request claims
    when its time has come (`next_probe_at`, moved on by PROBE_SECONDS in the same UPDATE)."""
    if endpoint.degraded_at is None:
        return Gate(call=True)
    now = timezone.now()
    claimed = DecisioningEndpoint.objects.filter(
        pk=endpoint.pk, degraded_at__isnull=False, next_probe_at__lte=now
    ).update(next_probe_at=now + timedelta(seconds=PROBE_SECONDS))
    return Gate(call=bool(claimed), probe=bool(claimed))


def record(endpoint: DecisioningEndpoint, *, ok: bool) -> None:
    """Count one call's outcome; degrade or recover the endpoint when that changes its state
    (with its event). Runs in the caller's transaction. `endpoint` as the caller read it
    before the call: a success on an endpoint that was healthy then writes nothing (a failure
    counted since by another request is forgotten by the next success that sees it)."""
    rows = DecisioningEndpoint.objects.filter(pk=endpoint.pk)
    if ok:
        if endpoint.degraded_at is None and endpoint.consecutive_failures == 0:
            return
        recovered = rows.filter(degraded_at__isnull=False).update(
            consecutive_failures=0, degraded_at=None, next_probe_at=None
        )
        if recovered:
            _emit(endpoint, "decisioning_endpoint.recovered")
        else:
            rows.filter(consecutive_failures__gt=0).update(consecutive_failures=0)
        return
    now = timezone.now()
    rows.update(consecutive_failures=F("consecutive_failures") + 1)
    degraded = rows.filter(
        degraded_at__isnull=True, consecutive_failures__gte=FAILURES_TO_DEGRADE
    ).update(degraded_at=now, next_probe_at=now + timedelta(seconds=PROBE_SECONDS))
    if degraded:
        _emit(endpoint, "decisioning_endpoint.degraded")


def _emit(endpoint: DecisioningEndpoint, event_type: str) -> None:
    state = (
        DecisioningEndpoint.objects.select_related("institution")
        .only("institution", "consecutive_failures", "degraded_at", "next_probe_at")
        .get(pk=endpoint.pk)
    )
    emit_for(
        state,
        event_type,
        data={
            "endpoint_id": endpoint.pk,
            "consecutive_failures": state.consecutive_failures,
            "next_probe_at": state.next_probe_at and iso_millis(state.next_probe_at),
        },
    )
