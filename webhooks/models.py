"""Webhook endpoints, the deliveries of events to them, and each delivery's attempts.

An endpoint belongs to one institution: a URL, the event types it subscribes to (`["*"]`: every
type, present and future) and a signing secret. The secret is encrypted at rest (`core.crypto`,
AES-GCM; the associated data binds the ciphertext to its column and endpoint) and shown to the
institution once, when the endpoint is created: the service signs with it, nobody reads it back.

A delivery is one event for one endpoint (unique together), created in the transaction that
wrote the event. It is `pending` until an attempt gets a 2xx (`succeeded`) or until its retries
run out (`failed`, after `retry_until`); `next_attempt_at` says when a pending delivery is tried
next. Each try is a `WebhookAttempt`: when, how long, the status code or the transport error,
and the first characters of the response. Attempts are append-only history.
"""

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.utils import timezone

from core import crypto
from core.ids import new_id
from core.models import Timestamped
from core.outbound.targets import MAX_URL_LENGTH
from core.outbound.transport import MAX_ERROR_LENGTH
from events.models import Event
from institutions.models import Institution

ALL_EVENTS = "*"  # an endpoint subscribed to "*" gets every event type, also those added later


def _endpoint_id():
    return new_id("whe")


def _delivery_id():
    return new_id("whd")


class WebhookEndpoint(Timestamped):
    id = models.CharField(primary_key=True, max_length=40, default=_endpoint_id, editable=False)
    institution = models.ForeignKey(
        Institution, on_delete=models.PROTECT, related_name="webhook_endpoints"
    )
    url = models.CharField(max_length=MAX_URL_LENGTH)
    # Event types (events.services.EVENT_TYPES), sorted, without duplicates; or ["*"].
    event_types = ArrayField(models.CharField(max_length=64))
    enabled = models.BooleanField(default=True)
    # `whsec_<base64>`, encrypted (core.crypto); read only by `secret()` to sign deliveries.
    secret_encrypted = models.TextField()
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["institution", "-id"], name="webhook_endpoint_inst_idx"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(event_types__len__gte=1), name="webhook_endpoint_event_types"
            ),
        ]

    def __str__(self):
        return f"{self.id} ({self.url})"

    # --- the signing secret (callers: webhooks.services only)
    def secret(self) -> str:
        return crypto.decrypt(self.secret_encrypted, context=self._context())

    def seal(self, secret: str) -> None:
        """Encrypt `secret` under the newest key, bound to this endpoint."""
        self.secret_encrypted = crypto.encrypt(secret, context=self._context())

    def _context(self) -> str:
        return f"webhooks.WebhookEndpoint.secret:{self.id}"


class WebhookDelivery(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    id = models.CharField(primary_key=True, max_length=40, default=_delivery_id, editable=False)
    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.PROTECT, related_name="deliveries"
    )
    event = models.ForeignKey(Event, on_delete=models.PROTECT, related_name="webhook_deliveries")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    # Pending: when the next attempt is due. Final: NULL.
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    # A failed attempt after this moment is the last one: the delivery fails. Set to
    # WEBHOOK_RETRY_WINDOW_SECONDS after creation, and again after a staff retry.
    retry_until = models.DateTimeField()
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=MAX_ERROR_LENGTH, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        verbose_name_plural = "webhook deliveries"
        indexes = [
            models.Index(fields=["endpoint", "-id"], name="webhook_delivery_endpoint_idx"),
            models.Index(fields=["event"], name="webhook_delivery_event_idx"),
            models.Index(
                fields=["status", "-id"],
                condition=~Q(status="succeeded"),
                name="webhook_delivery_open_idx",
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["endpoint", "event"], name="webhook_delivery_endpoint_event_uniq"
            ),
            models.CheckConstraint(
                condition=Q(status__in=["pending", "succeeded", "failed"]),
                name="webhook_delivery_status_valid",
            ),
            models.CheckConstraint(
                condition=(
                    Q(status="pending", completed_at__isnull=True)
                    | Q(
                        ~Q(status="pending"),
                        completed_at__isnull=False,
                        next_attempt_at__isnull=True,
                    )
                ),
                name="webhook_delivery_completion",
            ),
        ]

    def __str__(self):
        return f"{self.id} ({self.status})"


class WebhookAttempt(models.Model):
    delivery = models.ForeignKey(
        WebhookDelivery, on_delete=models.PROTECT, related_name="attempt_set"
    )
    number = models.PositiveIntegerField()  # 1, 2, ... per delivery
    started_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField()
    # The response's status; NULL when there was none (timeout, connection error, refused
    # target address).
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    # What went wrong without a response, in a few words (never the URL: it may carry a token).
    error = models.CharField(max_length=MAX_ERROR_LENGTH, blank=True, default="")
    # The first RESPONSE_EXCERPT_CHARS characters of the response body.
    response_excerpt = models.TextField(blank=True, default="")
    succeeded = models.BooleanField()

    class Meta:
        ordering = ["delivery", "number"]
        constraints = [
            models.UniqueConstraint(
                fields=["delivery", "number"], name="webhook_attempt_number_uniq"
            ),
            models.CheckConstraint(
                condition=Q(succeeded=False) | Q(status_code__gte=200, status_code__lte=299),
                name="webhook_attempt_success_is_2xx",
            ),
        ]

    def __str__(self):
        return f"attempt {self.number} of {self.delivery_id}"
