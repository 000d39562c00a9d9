"""Back office for statement lines ("transactions"): read-only.

Lines are written only by the services that move money, in their transaction; staff filter them
by type, settlement status and institution and find an account's lines by its exact id. Amounts
are signed as the account holder sees them (credits +, debits -).
"""

from django.contrib import admin

from core.admin import ExactIdSearchMixin, ReadOnlyModelAdmin, admin_link, pretty_json
from core.money import money

from .models import Transaction


@admin.register(Transaction)
class TransactionAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    list_display = [
        "id",
        "account_link",
        "type",
        "settlement_status",
        "amount_display",
        "currency",
        "description",
        "created_at",
    ]
    list_filter = ["type", "settlement_status", "institution"]
    list_select_related = ["account__institution"]
    search_fields = ["account_id", "id"]
    search_help_text = "An exact account id (or statement line id)."
    show_full_result_count = False
    fields = [
        "id",
        "institution",
        "account_link",
        "type",
        "settlement_status",
        "amount_display",
        "currency",
        "description",
        "merchant_display",
        "journal_link",
        "hold_link",
        "transfer_link",
        "adjustment_link",
        "created_at",
    ]
    readonly_fields = fields

    @admin.display(description="account", ordering="account_id")
    def account_link(self, obj):
        return admin_link(obj.account)

    @admin.display(description="amount", ordering="amount")
    def amount_display(self, obj):
        return money(obj.amount if obj.is_credit else -obj.amount, obj.currency)

    @admin.display(description="merchant")
    def merchant_display(self, obj):
        return pretty_json(obj.merchant) if obj.merchant else "—"

    @admin.display(description="journal")
    def journal_link(self, obj):
        return admin_link(obj.journal)

    @admin.display(description="hold")
    def hold_link(self, obj):
        return admin_link(obj.hold)

    @admin.display(description="transfer")
    def transfer_link(self, obj):
        return admin_link(obj.transfer)

    @admin.display(description="adjustment")
    def adjustment_link(self, obj):
        return admin_link(obj.adjustment)
