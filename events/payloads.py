"""An event as JSON: the body of `GET /events/{eventId}` (both versions, without `meta`) and of
its webhook deliveries. One representation, so a receiver can compare the two."""

from rest_framework import serializers

from api.names import api_data
from api.serializers import Serializer, TimestampField

from .models import ActorType, Event
from .types import EVENT_TYPES


class EventActorSerializer(Serializer):
    type = serializers.ChoiceField(
        choices=ActorType.choices,
        help_text="`apiKey` (a request made with an API key), `staff` (the back office) or "
        "`system` (periodic jobs, operator commands).",
    )
    id = serializers.CharField(
        allow_null=True,
        help_text="The API key's id, or the staff user's id; null for the system.",
    )


class EventSerializer(Serializer):
    id = serializers.CharField()
    type = serializers.ChoiceField(choices=EVENT_TYPES)
    objectType = serializers.CharField(source="object_type")  # noqa: N815
    objectId = serializers.CharField(source="object_id")  # noqa: N815
    data = serializers.JSONField(help_text="What changed; fetch the object for its state.")
    actor = EventActorSerializer(
        allow_null=True,
        help_text="Who made the change. Null only for events written before actors were recorded.",
    )
    createdAt = TimestampField(source="created_at")  # noqa: N815

    def to_representation(self, instance):
        # Stored in the domain's names (or, before they were, in the API's): `api.names` says.
        representation = super().to_representation(instance)
        representation["data"] = api_data(instance.data, object_type=instance.object_type)
        return representation


def event_payload(event: Event) -> dict:
    """The event as `GET /events/{eventId}` shows it."""
    return EventSerializer(event).data
