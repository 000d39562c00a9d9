"""The outbox: one row per state change, written in the same transaction as the change.

Events are thin (as Stripe's "thin events"): the type, the object's kind and id, and a small
`data` dict (what changed, never a sensitive value). A receiver fetches the object through the
API for its current state, in the version it speaks. Delivery to webhooks reads this table.
"""

from django.db import models
from django.utils import timezone

from api.ids import new_id
from api.models import Institution


def _event_id():
    return new_id("evt")


class Event(models.Model):
    id = models.CharField(primary_key=True, max_length=40, default=_event_id, editable=False)
    institution = models.ForeignKey(Institution, on_delete=models.PROTECT, related_name="events")
    type = models.CharField(max_length=64)
    object_type = models.CharField(max_length=32)
    object_id = models.CharField(max_length=40)
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["institution", "-id"], name="event_institution_idx"),
            models.Index(fields=["institution", "type", "-id"], name="event_type_idx"),
            models.Index(fields=["object_id"], name="event_object_idx"),
        ]

    def __str__(self):
        return f"{self.type} {self.object_id}"
