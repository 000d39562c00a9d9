"""Back office for statement lines ("transactions"): read-only.

Lines are written only by the services that move money, in their transaction; staff filter them
by type, settlement status and institution and find an account's lines by its exact id. Amounts
are signed as the account holder sees them (credits +, debits -) while they move the balance;
a line whose authorization was reversed, expired or declined shows its state and its amount
struck through, unsigned (`line_amount_display`, docs/back-office.md).
"""

from django.contrib import admin
from django.utils.html import format_html

from accounts.models import StatementLine
from api.names import api_data
from backoffice.kit import (
    ExactIdSearchMixin,
    ReadOnlyModelAdmin,
    fields_display,
    link_column,
    money_cells,
)
from backoffice.names import TRANSACTION_TYPES, type_display, words_filter
from core.money import money

# --- Statement lines as staff read them (docs/back-office.md, "Money and line states") -------
# A line's state: `StatementLine.status` (the API's), and "declined" for a line whose
# authorization its program declined after TX held it. Only posted and pending lines move the
# balance; the others are shown struck through, with no sign, never as a live debit.
LINE_STATES = {
    "posted": "posted",
    "pending": "pending (authorized, not yet presented)",
    "reversed": "reversed (not charged)",
    "expired": "expired (not charged)",
    "declined": "declined (not charged)",
}
LIVE_STATES = frozenset({"posted", "pending"})
# What a list of lines loads with them, so a line's state costs no query of its own.
LINE_STATE_RELATED = ["hold", "authorization"]


def line_state(line: StatementLine) -> str:
    """posted, pending, reversed, expired or declined (LINE_STATES)."""
    state = line.status
    if state == "reversed" and line.authorization_id is not None:
        if line.authorization.decision == "declined":
            return "declined"
    return state


def line_signed_amount(line: StatementLine) -> int:
    """As the account holder sees it: credits +, debits -."""
    return line.amount if line.is_credit else -line.amount


def line_amount_display(line: StatementLine):
    """The line's signed amount when it moves the balance (posted, or pending and marked so);
    struck through with its state, unsigned, when it does not (reversed, expired, declined)."""
    state = line_state(line)
    if state == "posted":
        return money(line_signed_amount(line), line.currency)
    if state == "pending":
        return format_html(
            '<span class="line-pending">{} <em>pending</em></span>',
            money(line_signed_amount(line), line.currency),
        )
    return format_html(
        '<span class="line-not-charged"><s>{}</s> {}</span>',
        money(line.amount, line.currency),
        state,
    )


@admin.display(description="state")
def line_state_display(obj) -> str:
    return LINE_STATES[line_state(obj)]


@admin.display(description="amount")
def line_amount_column(obj):
    return line_amount_display(obj)


@admin.register(StatementLine)
class StatementLineAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    list_display = [
        "id",
        "account_link",
        type_display,
        "settlement_status",
        "state",
        "amount_display",
        "description",
        "created_at",
    ]
    list_filter = [
        words_filter("type", TRANSACTION_TYPES, "type"),
        "settlement_status",
        "category",
        "institution",
    ]
    list_select_related = ["account__institution", *LINE_STATE_RELATED]
    search_fields = ["account_id", "id"]
    search_help_text = "An exact account id (or statement line id)."
    show_full_result_count = False
    fields = [
        "id",
        "institution",
        "account_link",
        type_display,
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

    # Exported as the list shows it: signed while it moves the balance, else unsigned (its
    # state beside it says it was not charged).
    @money_cells(
        lambda line: (
            line_signed_amount(line) if line_state(line) in LIVE_STATES else line.amount,
            line.currency,
        )
    )
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
