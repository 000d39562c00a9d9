"""Back office for account products: read-only (seeded by `account_products_seed` when an
institution is created; no service edits them)."""

from django.contrib import admin

from api.admin import ReadOnlyModelAdmin

from .models import AccountProduct


@admin.register(AccountProduct)
class AccountProductAdmin(ReadOnlyModelAdmin):
    list_display = [
        "code",
        "name",
        "institution",
        "kind",
        "currency",
        "allows_overdraft",
        "created_at",
    ]
    list_filter = ["code", "kind", "currency", "institution"]
    list_select_related = ["institution"]
    search_fields = ["=id", "name", "institution__name"]
    fields = [
        "id",
        "institution",
        "code",
        "name",
        "kind",
        "currency",
        "allows_overdraft",
        "created_at",
    ]
    readonly_fields = fields
