"""The outbox: one row per state change, written in the same transaction as the change.

Events are thin (as Stripe's "thin events"): the type, the object's kind and id, and a small
`data` dict (what changed, never a sensitive value). A receiver fetches the object through the
API for its current state, in the version it speaks. Delivery to webhooks reads this table.

Each event names its actor (`actor_type`, `actor_id`): the API key, the staff user or the
system on whose behalf the change was made (`core.actors`). Events written before actors were
recorded (migration 0002) have neither: unknown, never guessed.
"""

from dataclasses import dataclass

from django.db import models
from django.utils import timezone

from core.ids import new_id
from institutions.models import Institution


def _event_id():
    return new_id("evt")


class ActorType(models.TextChoices):
    API_KEY = "apiKey", "API key"
    STAFF = "staff", "Staff user"
    SYSTEM = "system", "System"


@dataclass(frozen=True)
class ActorRef:
    type: str
    id: str | None


class Event(models.Model):
    id = models.CharField(primary_key=True, max_length=40, default=_event_id, editable=False)
    # No index of its own: event_institution_idx starts with it.
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="events", db_index=False
    )
    type = models.CharField(max_length=64)
    object_type = models.CharField(max_length=32)
    object_id = models.CharField(max_length=40)
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    # Null for events written before actors were recorded (and only for them).
    actor_type = models.CharField(max_length=8, choices=ActorType.choices, null=True, blank=True)
    # The API key's id or the staff user's id; null for the system.
    actor_id = models.CharField(max_length=40, null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(
                name="event_actor_valid",
                condition=(
                    models.Q(actor_type__in=["apiKey", "staff"], actor_id__isnull=False)
                    | models.Q(actor_type="system", actor_id__isnull=True)
                    | models.Q(actor_type__isnull=True, actor_id__isnull=True)
                ),
            ),
        ]
        indexes = [
            models.Index(fields=["institution", "actor_id", "-id"], name="event_actor_idx"),
            models.Index(fields=["institution", "-id"], name="event_institution_idx"),
            models.Index(fields=["institution", "type", "-id"], name="event_type_idx"),
            models.Index(fields=["object_id"], name="event_object_idx"),
            # The back office's audit page (backoffice.models.StaffActivity): the staff's
            # events newest first, without walking every API and system event to find them.
            models.Index(
                fields=["-id"], condition=models.Q(actor_type="staff"), name="event_staff_idx"
            ),
        ]

    def __str__(self):
        return f"{self.type} {self.object_id}"

    @staticmethod
    def actor_fields(actor) -> dict:
        """The columns recording `actor` (an `core.actors.Actor`)."""
        return {"actor_type": actor.type, "actor_id": actor.id}

    @property
    def actor(self) -> ActorRef | None:
        """Who made the change; None when unknown (written before actors were recorded)."""
        if self.actor_type is None:
            return None
        return ActorRef(type=self.actor_type, id=self.actor_id)
