"""Request and response bodies of `/webhook-endpoints`: the same in both versions.

The serializers check formats; the URL rules (scheme, credentials, public addresses) and the
event type rules are the services' (`webhooks.services.endpoints`), so the API and the admin
answer alike.
"""

from rest_framework import serializers

from api.serializers import (
    Serializer,
    StrictBooleanField,
    StrictCharField,
    StrictSerializer,
    TimestampField,
)
from events.types import EVENT_TYPES

from ..models import ALL_EVENTS, MAX_URL_LENGTH

# What an endpoint may subscribe to: an event type, or "*" (every type, also future ones).
SUBSCRIBABLE_EVENT_TYPES = (ALL_EVENTS, *EVENT_TYPES)

URL_HELP = (
    "Where events are POSTed. `https` (also `http` outside production), no credentials in the "
    "URL; the host must resolve to public addresses only (loopback and private networks are "
    "refused outside development)."
)
EVENT_TYPES_HELP = (
    'The event types to receive, or `["*"]` for every type (also types added later; "*" '
    "stands alone)."
)


def _event_types(**kwargs):
    return serializers.ListField(
        child=serializers.ChoiceField(choices=SUBSCRIBABLE_EVENT_TYPES),
        min_length=1,
        max_length=len(SUBSCRIBABLE_EVENT_TYPES),
        help_text=EVENT_TYPES_HELP,
        **kwargs,
    )


# --- input
class WebhookEndpointCreate(StrictSerializer):
    url = StrictCharField(max_length=MAX_URL_LENGTH, trim_whitespace=False, help_text=URL_HELP)
    eventTypes = _event_types()  # noqa: N815
    enabled = StrictBooleanField(required=False, help_text="Default true.")


class WebhookEndpointUpdate(StrictSerializer):
    url = StrictCharField(
        max_length=MAX_URL_LENGTH, trim_whitespace=False, required=False, help_text=URL_HELP
    )
    eventTypes = _event_types(required=False)  # noqa: N815
    enabled = StrictBooleanField(
        required=False, help_text="false: no new deliveries; pending ones fail at their turn."
    )

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("Give at least one field.")
        return attrs


# --- output
class WebhookEndpointOut(Serializer):
    endpointId = serializers.CharField(source="id")  # noqa: N815
    url = serializers.CharField()
    eventTypes = serializers.ListField(  # noqa: N815
        source="event_types",
        child=serializers.ChoiceField(choices=SUBSCRIBABLE_EVENT_TYPES),
        help_text="Sorted, without duplicates.",
    )
    enabled = serializers.BooleanField()
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815


class WebhookEndpointWithSecret(WebhookEndpointOut):
    secret = serializers.CharField(
        help_text="The signing secret (`whsec_` + base64), shown only in this response: store "
        "it now. Verify each delivery's `webhook-signature` with it (Standard Webhooks)."
    )
