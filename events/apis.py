"""`GET /events`, `GET /events/{eventId}`: the institution's events, newest first."""

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from api.schema import document
from api.serializers import Serializer, StrictCharField
from api.views import TXView

from .payloads import EventSerializer, event_payload
from .selectors import event_get, event_list
from .types import EVENT_TYPES


class EventQuerySerializer(Serializer):
    type = serializers.ChoiceField(choices=EVENT_TYPES, required=False)
    objectId = StrictCharField(required=False, max_length=40)  # noqa: N815
    actorId = StrictCharField(required=False, max_length=40)  # noqa: N815


class EventListView(TXView):
    @document(
        name="Event",
        resources={"v1": EventSerializer, "v2": EventSerializer},
        many=True,
        parameters=[
            OpenApiParameter("type", str, enum=list(EVENT_TYPES), description="Only this type."),
            OpenApiParameter("objectId", str, description="Only events about this object."),
            OpenApiParameter(
                "actorId",
                str,
                description="Only events of this actor: an API key's id, or a staff user's id.",
            ),
        ],
        summary="List events, newest first",
        operation_id="events_list",
        tags=["Events"],
    )
    def get(self, request):
        query = self.parse_query(EventQuerySerializer)
        events = event_list(
            institution=self.institution,
            type=query.get("type"),
            object_id=query.get("objectId"),
            actor_id=query.get("actorId"),
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
        event = event_get(institution=self.institution, event_id=eventId)
        return self.respond(event_payload(event))
