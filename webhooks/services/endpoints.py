"""Webhook endpoints: created and changed through the API (and switched on and off in the
admin). Each service validates what it is given, whoever calls it, and answers 400
`validation_error` with `details` keyed by the domain's field names (`url`, `event_types`,
`enabled`; the API renders them in its own, `api.names`).

The URL rules and the address rules are `core.outbound.targets`: the address check resolves the
host, so it runs before any lock is taken. The signing secret is made here, sealed on the row
and returned once (`CreatedEndpoint.secret`); nothing reads it back but the delivery job.
"""

import base64
import secrets
from dataclasses import dataclass

from django.db import connection, transaction
from django.utils import timezone

from core.exceptions import ValidationFailed
from core.operations import Outcome, changed, unchanged
from core.outbound.targets import TargetRefused, check_url
from events.types import EVENT_TYPES
from institutions.models import Institution

from ..locks import lock_endpoint
from ..models import ALL_EVENTS, WebhookEndpoint

SECRET_PREFIX = "whsec_"  # noqa: S105 (the format's prefix, not a secret)
SECRET_BYTES = 32
# Enabled endpoints per institution: every event is written once per endpoint, in the
# transaction of the change that caused it.
MAX_ENABLED_ENDPOINTS = 16

# What an endpoint's change may name (the API's names of these: `api.names`).
UPDATABLE = frozenset({"url", "event_types", "enabled"})


@dataclass(frozen=True)
class CreatedEndpoint:
    """An endpoint just created. `secret` is the only copy shown to anyone: show it once."""

    endpoint: WebhookEndpoint
    secret: str


def new_secret() -> str:
    """`whsec_` and the base64 of 32 random bytes, as Standard Webhooks libraries read it."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def webhook_endpoint_create(
    *, institution: Institution, url: str, event_types: list[str], enabled: bool = True
) -> CreatedEndpoint:
    """Subscribe `url` to `event_types` (event types, or `["*"]` for every type, present and
    future). The URL must pass `core.outbound.targets.check_url` (scheme, no credentials, public
    addresses unless WEBHOOK_ALLOW_PRIVATE_TARGETS); at most MAX_ENABLED_ENDPOINTS enabled
    endpoints per institution. 400 `validation_error` otherwise. Returns the endpoint and its
    new signing secret."""
    errors: dict[str, str] = {}
    values = _clean({"url": url, "event_types": event_types, "enabled": enabled}, errors)
    if errors:
        raise ValidationFailed(details=errors)
    secret = new_secret()
    endpoint = WebhookEndpoint(institution=institution, **values)
    endpoint.seal(secret)
    with transaction.atomic(savepoint=False):
        if endpoint.enabled:
            _check_room(institution.pk)
        endpoint.save(force_insert=True)
    return CreatedEndpoint(endpoint=endpoint, secret=secret)


def webhook_endpoint_update(
    *, endpoint: WebhookEndpoint, changes: dict
) -> Outcome[WebhookEndpoint]:
    """Change `url`, `event_types` and `enabled` (domain names), validated as
        `webhook_endpoint_create` does. Deliveries already scheduled keep going to the endpoint as
        it is when they are attempted (its URL then); a disabled endpoint gets no new deliveries
        and its pending ones fail at their next attempt. No change writes nothing (`Outcome.changed`
    false); `Outcome.previous` has the old values of the fields that changed."""
    unknown = set(changes) - UPDATABLE
    if unknown:
        raise ValueError(f"Not endpoint fields: {sorted(unknown)}")
    errors: dict[str, str] = {}
    values = _clean(changes, errors)  # resolves the URL's host: before the lock
    if errors:
        raise ValidationFailed(details=errors)
    with transaction.atomic(savepoint=False):
        endpoint = lock_endpoint(endpoint.pk)
        previous = {
            field: getattr(endpoint, field)
            for field, value in values.items()
            if getattr(endpoint, field) != value
        }
        if not previous:
            return unchanged(endpoint)
        if "enabled" in previous and values["enabled"]:
            _check_room(endpoint.institution_id)
        for field in previous:
            setattr(endpoint, field, values[field])
        endpoint.updated_at = timezone.now()
        endpoint.save(update_fields=[*previous, "updated_at"])
    return changed(endpoint, previous)


def _check_room(institution_id: str) -> None:
    """Another enabled endpoint fits. Serialized per institution (an advisory lock for the rest
    of the transaction), so two concurrent requests cannot both take the last place."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            [f"webhooks.endpoints:{institution_id}"],
        )
    enabled = WebhookEndpoint.objects.filter(institution_id=institution_id, enabled=True).count()
    if enabled >= MAX_ENABLED_ENDPOINTS:
        raise ValidationFailed(
            f"An institution has at most {MAX_ENABLED_ENDPOINTS} enabled webhook endpoints: "
            "disable one first.",
            details={"enabled": f"At most {MAX_ENABLED_ENDPOINTS} enabled endpoints."},
        )


# --- validation
def _clean(values: dict, errors: dict) -> dict:
    cleaned = {}
    if "url" in values:
        try:
            cleaned["url"] = check_url(values["url"]).url
        except TargetRefused as exc:
            errors["url"] = str(exc)
    if "event_types" in values:
        try:
            cleaned["event_types"] = _event_types(values["event_types"])
        except ValueError as exc:
            errors["event_types"] = str(exc)
    if "enabled" in values:
        if not isinstance(values["enabled"], bool):
            errors["enabled"] = "Must be true or false."
        else:
            cleaned["enabled"] = values["enabled"]
    return cleaned


def _event_types(value) -> list[str]:
    if not isinstance(value, list | tuple) or not value:
        raise ValueError(f'Must be a non-empty list of event types, or ["{ALL_EVENTS}"].')
    unknown = [item for item in value if item != ALL_EVENTS and item not in EVENT_TYPES]
    if unknown:
        raise ValueError(f"Not event types: {', '.join(map(str, unknown))}.")
    types = sorted(set(value))
    if ALL_EVENTS in types and len(types) > 1:
        raise ValueError(f'"{ALL_EVENTS}" (every type) stands alone.')
    return types
