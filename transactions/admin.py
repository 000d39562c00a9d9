"""Back office for statement lines ("transactions"): read-only.

Lines are written only by the services that move money, in their transaction; staff filter them
by type, settlement status and institution and find an account's lines by its exact id. Amounts
are signed as the account holder sees them (credits +, debits -).
"""

from django.contrib import admin

from accounts.models import StatementLine
from api.names import api_data
from core.admin import (
    ExactIdSearchMixin,
    ReadOnlyModelAdmin,
    link_column,
    money_column,
    pretty_json,
)


@admin.register(StatementLine)
class StatementLineAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
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
    list_filter = ["type", "settlement_status", "category", "institution"]
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
        "category",
        "fee_link",
        "created_at",
    ]
    readonly_fields = fields

    account_link = link_column("account", description="account", ordering="account_id")
    amount_display = money_column(
        lambda line: line.amount if line.is_credit else -line.amount,
        description="amount",
        ordering="amount",
    )

    @admin.display(description="merchant")
    def merchant_display(self, obj):
        return pretty_json(api_data(obj.merchant)) if obj.merchant else "—"

    journal_link = link_column("journal", description="journal")
    hold_link = link_column("hold", description="hold")
    transfer_link = link_column("transfer", description="transfer")
    adjustment_link = link_column("adjustment", description="adjustment")
    fee_link = link_column("fee", description="fee")
