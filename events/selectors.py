from core.selectors import get_of_institution
from institutions.models import Institution

from .models import Event


def event_list(
    *,
    institution: Institution,
    type: str | None = None,
    object_id: str | None = None,
    actor_id: str | None = None,
):
    """The institution's events, newest first; each filter given narrows them (indexes:
    (institution, type, id), (object_id), (institution, actor_id, id))."""
    events = Event.objects.filter(institution=institution)
    if type:
        events = events.filter(type=type)
    if object_id:
        events = events.filter(object_id=object_id)
    if actor_id:
        events = events.filter(actor_id=actor_id)
    return events


def event_get(*, institution: Institution, event_id: str) -> Event:
    return get_of_institution(
        Event, institution=institution, id=event_id, missing="No event with this id."
    )
