"""`GET /events`, `GET /events/{eventId}`: the institution's events, newest first."""

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from api.schema import document
from api.serializers import StrictCharField, TimestampField
from api.views import TXView

from .selectors import event_get, event_list
from .services import EVENT_TYPES


class EventSerializer(serializers.Serializer):
    id = serializers.CharField()
    type = serializers.ChoiceField(choices=EVENT_TYPES)
    objectType = serializers.CharField(source="object_type")  # noqa: N815
    objectId = serializers.CharField(source="object_id")  # noqa: N815
    data = serializers.JSONField(help_text="What changed; fetch the object for its state.")
    createdAt = TimestampField(source="created_at")  # noqa: N815


class EventQuerySerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=EVENT_TYPES, required=False)
    objectId = StrictCharField(required=False, max_length=40)  # noqa: N815


def represent(event):
    return EventSerializer(event).data


class EventListView(TXView):
    @document(
        name="Event",
        resources={"v1": EventSerializer, "v2": EventSerializer},
        many=True,
        parameters=[
            OpenApiParameter("type", str, enum=list(EVENT_TYPES), description="Only this type."),
            OpenApiParameter("objectId", str, description="Only events about this object."),
        ],
        summary="List events, newest first",
        operation_id="events_list",
        tags=["Events"],
    )
    def get(self, request):
        query = self.parse_query(EventQuerySerializer)
        events = event_list(
            institution=self.institution, type=query.get("type"), object_id=query.get("objectId")
        )
        return self.respond_list(events, EventSerializer)


class EventDetailView(TXView):
    @document(
        name="Event",
        resources={"v1": EventSerializer, "v2": EventSerializer},
        summary="Retrieve an event",
        operation_id="events_retrieve",
        tags=["Events"],
    )
    def get(self, request, eventId):  # noqa: N803 (path parameters are camelCase)
        return self.respond(represent(event_get(institution=self.institution, event_id=eventId)))
