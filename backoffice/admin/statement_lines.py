"""Back office for statement lines ("transactions"): read-only.

Lines are written only by the services that move money, in their transaction; staff filter them
by type, settlement status and institution and find an account's lines by its exact id. Amounts
are signed as the account holder sees them (credits +, debits -) while they move the balance;
a line whose authorization was reversed, expired or declined shows its state and its amount
struck through, unsigned (`accounts.admin.line_amount_display`, docs/back-office.md).
"""

from django.contrib import admin

from accounts.admin import (
    LINE_STATE_RELATED,
    line_amount_column,
    line_state_display,
)
from accounts.models import StatementLine
from api.names import api_data
from core.admin import (
    ExactIdSearchMixin,
    ReadOnlyModelAdmin,
    fields_display,
    link_column,
)


@admin.register(StatementLine)
class StatementLineAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    list_display = [
        "id",
        "account_link",
        "type",
        "settlement_status",
        "state",
        "amount_display",
        "description",
        "created_at",
    ]
    list_filter = ["type", "settlement_status", "category", "institution"]
    list_select_related = ["account__institution", *LINE_STATE_RELATED]
    search_fields = ["account_id", "id"]
    search_help_text = "An exact account id (or statement line id)."
    show_full_result_count = False
    fields = [
        "id",
        "institution",
        "account_link",
        "type",
        "settlement_status",
        "state",
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

    @admin.display(description="state")
    def state(self, obj):
        return line_state_display(obj)

    @admin.display(description="amount", ordering="amount")
    def amount_display(self, obj):
        return line_amount_column(obj)

    @admin.display(description="merchant")
    def merchant_display(self, obj):
        return fields_display(api_data(obj.merchant)) if obj.merchant else "—"

    journal_link = link_column("journal", description="journal")
    hold_link = link_column("hold", description="hold")
    transfer_link = link_column("transfer", description="transfer")
    adjustment_link = link_column("adjustment", description="adjustment")
    fee_link = link_column("fee", description="fee")
