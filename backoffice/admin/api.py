"""Back office for what the HTTP layer stores: idempotency records (read-only)."""

from django.contrib import admin

from api.models import IdempotencyRecord
from backoffice.kit import ReadOnlyModelAdmin


# --- Idempotency records --------------------------------------------------------------------
@admin.register(IdempotencyRecord)
class IdempotencyRecordAdmin(ReadOnlyModelAdmin):
    """What was replayed to whom; the stored response body is never shown (it may hold card
    data a key with `cards:sensitive` was given)."""

    list_display = ["key", "institution", "method", "path", "status_code", "created_at"]
    list_filter = ["method", "status_code", "institution"]
    list_select_related = ["institution"]
    search_fields = ["=key", "path"]
    fields = ["institution", "key", "method", "path", "status_code", "fingerprint", "created_at"]
    readonly_fields = fields
    date_hierarchy = "created_at"

    def get_queryset(self, request):
        return super().get_queryset(request).defer("response_body")
