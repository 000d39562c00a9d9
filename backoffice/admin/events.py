"""Back office for events: read-only, as the outbox is (written only by `emit()`, inside the
transaction of the change it records)."""

from django.contrib import admin

from api.names import api_data
from backoffice.kit import ReadOnlyModelAdmin, fields_display
from events.models import Event


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
        # In the API's and the webhooks' names (stored in the domain's: `api.names`), as
        # fields: amounts with `money` in the currency beside them. The JSON itself is the
        # API's (`GET /events/{eventId}`) and the webhooks'.
        return fields_display(api_data(obj.data, object_type=obj.object_type))
