"""Back office for events: read-only, as the outbox is (written only by `emit()`, inside the
transaction of the change it records)."""

from django.contrib import admin

from api.names import api_data
from core.admin import ReadOnlyModelAdmin, pretty_json

from .models import Event


@admin.register(Event)
class EventAdmin(ReadOnlyModelAdmin):
    list_display = ["id", "type", "institution", "object_type", "object_id", "created_at"]
    list_filter = ["type", "institution"]
    list_select_related = ["institution"]
    search_fields = ["=id", "=object_id"]
    date_hierarchy = "created_at"
    fields = ["id", "institution", "type", "object_type", "object_id", "data_display", "created_at"]
    readonly_fields = fields

    @admin.display(description="data")
    def data_display(self, obj):
        # As the API and the webhooks show it (stored in the domain's names: `api.names`).
        return pretty_json(api_data(obj.data, object_type=obj.object_type))
