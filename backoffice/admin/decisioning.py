"""Back office for decisioning endpoints: a read-only list and page for staff (issue 31 item 1).

Endpoints are created, changed, rotated and tested through the API (v2); here staff see which
endpoint decides for which institution or card product, its timeout, failure rule, mode,
whether it is on and whether it takes unsigned answers (a weaker setting a bank chose), its
circuit breaker (failures in a row, degraded since, next probe: decisioning.breaker), and who
changed it last. The signing secrets are never shown, searched or
even read by these pages (the columns are deferred)."""

from django.contrib import admin

from backoffice.kit import ExactIdSearchMixin, ReadOnlyModelAdmin, actor_display
from decisioning.models import DecisioningEndpoint
from decisioning.selectors import SECRET_FIELDS


@admin.register(DecisioningEndpoint)
class DecisioningEndpointAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    list_display = [
        "id",
        "institution",
        "card_product",
        "url",
        "on_failure",
        "mode",
        "enabled",
        "accept_unsigned_answers",
        "degraded_at",
    ]
    list_filter = ["enabled", "mode", "on_failure", "accept_unsigned_answers", "institution"]
    list_select_related = ["institution", "card_product"]
    search_fields = ["id"]
    search_help_text = "An exact endpoint id."
    fields = [
        "id",
        "institution",
        "card_product",
        "url",
        "timeout_ms",
        "on_failure",
        "mode",
        "enabled",
        "accept_unsigned_answers",
        "previous_secret_expires_at",
        "consecutive_failures",
        "degraded_at",
        "next_probe_at",
        "created_at",
        "created_by",
        "updated_at",
        "updated_by",
    ]
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).defer(*SECRET_FIELDS)

    @admin.display(description="created by")
    def created_by(self, obj):
        return actor_display(obj, "created_by")

    @admin.display(description="updated by")
    def updated_by(self, obj):
        return actor_display(obj, "updated_by")
