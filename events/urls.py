from django.urls import path

from .apis import EventDetailView, EventListView

urlpatterns = [
    path("events", EventListView.as_view(), name="events"),
    path("events/<id:eventId>", EventDetailView.as_view(), name="event"),
]
