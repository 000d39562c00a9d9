"""Back office for webhooks: endpoints, and the deliveries of events to them with their attempts.

Endpoints are created and changed through the API; here staff review them and switch them on or
off with the actions "Enable" and "Disable" (`backoffice.actions.webhooks`), which call
`webhook_endpoint_update` as the API does. The signing secret is never shown, searched or even
read by these pages (the column is deferred).

Deliveries are read-only, each with its attempts (status code or error, duration, the start of
the response). A failed delivery is tried again with the action "Retry": a confirmation page
lists the deliveries, then `delivery_retry` makes each one pending with a new job and a new
three-day window. Every change leaves one `LogEntry` per object (who, when, what). Nothing is
added or deleted here and no change form saves a row.
"""

from django.contrib import admin

from backoffice.actions.webhooks import disable_endpoints, enable_endpoints, retry_deliveries
from backoffice.kit import ActionsOnlyModelAdmin, ExactIdSearchMixin, admin_link, changelist_link
from events.types import EVENT_TYPES
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint

SECRET_FIELDS = ["secret_encrypted"]


# --- Endpoints ------------------------------------------------------------------------------
@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(ExactIdSearchMixin, ActionsOnlyModelAdmin):
    list_display = ["id", "url", "institution", "event_types_display", "enabled", "updated_at"]
    list_filter = ["enabled", "institution"]
    list_select_related = ["institution"]
    search_fields = ["id"]
    search_help_text = "An exact endpoint id."
    actions = [enable_endpoints, disable_endpoints]
    fields = [
        "id",
        "institution",
        "url",
        "event_types_display",
        "enabled",
        "deliveries_link",
        "created_at",
        "updated_at",
    ]
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).defer(*SECRET_FIELDS)

    @admin.display(description="event types")
    def event_types_display(self, obj):
        return ", ".join(obj.event_types)

    @admin.display(description="deliveries")
    def deliveries_link(self, obj):
        count = WebhookDelivery.objects.filter(endpoint=obj).count()
        return changelist_link(WebhookDelivery, f"{count} deliveries", endpoint=obj.pk)


# --- Deliveries -----------------------------------------------------------------------------
class AttemptInline(admin.TabularInline):
    model = WebhookAttempt
    fk_name = "delivery"
    extra = 0
    can_delete = False
    fields = [
        "number",
        "started_at",
        "duration_ms",
        "status_code",
        "succeeded",
        "error",
        "response_excerpt",
    ]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class EventTypeFilter(admin.SimpleListFilter):
    title = "event type"
    parameter_name = "event_type"

    def lookups(self, request, model_admin):
        return [(event_type, event_type) for event_type in EVENT_TYPES]

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(event__type=self.value())
        return queryset


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ExactIdSearchMixin, ActionsOnlyModelAdmin):
    institution_path = "endpoint__institution"
    list_display = [
        "id",
        "status",
        "event_type",
        "endpoint_link",
        "attempts",
        "last_error",
        "next_attempt_at",
        "created_at",
    ]
    list_filter = ["status", EventTypeFilter, "endpoint__institution"]
    search_fields = ["id", "event_id", "endpoint_id"]
    search_help_text = "An exact delivery, event or endpoint id."
    actions = [retry_deliveries]
    inlines = [AttemptInline]
    fields = [
        "id",
        "status",
        "endpoint_link",
        "event_link",
        "event_type",
        "attempts",
        "last_status_code",
        "last_error",
        "next_attempt_at",
        "retry_until",
        "created_at",
        "completed_at",
    ]
    readonly_fields = fields

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("event", "endpoint")
            .defer(*(f"endpoint__{name}" for name in SECRET_FIELDS))
        )

    @admin.display(description="event type", ordering="event__type")
    def event_type(self, obj):
        return obj.event.type

    @admin.display(description="event", ordering="event_id")
    def event_link(self, obj):
        return admin_link(obj.event, f"{obj.event_id} ({obj.event.object_id})")

    @admin.display(description="endpoint", ordering="endpoint_id")
    def endpoint_link(self, obj):
        return admin_link(obj.endpoint, obj.endpoint.url)
