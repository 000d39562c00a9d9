"""Back office for reconciliation (docs/reconciliation.md, "The back office"): the bank's
statements, each with its lines.

Read-only: a statement is written by `reconciliation.services.statements` only (the API's
`POST /bank-statements`). No page shows an account number: the statement's bank account and a
line's counterparty by their last four. The file's bytes carry full numbers and are never
shown here.
"""

from django.contrib import admin

from backoffice.kit import (
    ExactIdSearchMixin,
    ReadOnlyModelAdmin,
    changelist_link,
    link_column,
    money_column,
)
from reconciliation.models import BankStatement, BankStatementLine

MASK = "•••• "


def _masked(last4: str) -> str:
    return f"{MASK}{last4}" if last4 else "—"


@admin.register(BankStatement)
class BankStatementAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    list_display = [
        "id",
        "format",
        "bank_statement_id",
        "bank_account_display",
        "period_display",
        "opening_display",
        "closing_display",
        "line_count",
    ]
    list_filter = ["format", "currency", "institution"]
    search_fields = ["id", "sha256", "bank_statement_id"]
    search_help_text = "An exact statement id, SHA-256 or the bank's statement id."
    fields = [
        "id",
        "institution",
        "account_link",
        "format",
        "name",
        "sha256",
        "bank_statement_id",
        "sequence",
        "bank_account_display",
        "currency",
        "period_start",
        "period_end",
        "opening_display",
        "closing_display",
        "line_count",
        "lines_link",
        "created_at",
    ]
    readonly_fields = fields

    def get_queryset(self, request):
        # The bytes carry full account numbers: never read by a staff page.
        return super().get_queryset(request).defer("content")

    account_link = link_column("account", description="mirrored internal account")
    opening_display = money_column("opening_balance", description="opening balance")
    closing_display = money_column("closing_balance", description="closing balance")

    @admin.display(description="period", ordering="period_end")
    def period_display(self, obj):
        if obj.period_start == obj.period_end:
            return obj.period_end or "—"
        return f"{obj.period_start or '…'} – {obj.period_end or '…'}"

    @admin.display(description="bank account")
    def bank_account_display(self, obj):
        return _masked(obj.account_last4)

    @admin.display(description="lines")
    def lines_link(self, obj):
        return changelist_link(BankStatementLine, f"All {obj.line_count} lines", statement=obj.pk)


@admin.register(BankStatementLine)
class BankStatementLineAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    """A statement's bookings, in the file's order (filter by statement from its page)."""

    institution_path = "statement__institution"
    list_display = [
        "id",
        "statement_link",
        "position",
        "value_date",
        "direction",
        "amount_display",
        "bank_reference",
        "end_to_end_id",
    ]
    list_filter = ["direction", "currency", "statement__institution"]
    list_select_related = ["statement"]
    search_fields = ["id", "statement_id", "bank_reference", "end_to_end_id", "trace_number"]
    search_help_text = (
        "An exact line id, statement id, bank reference, end-to-end id or trace number."
    )
    fields = [
        "id",
        "statement_link",
        "position",
        "booking_date",
        "value_date",
        "direction",
        "amount_display",
        "currency",
        "bank_reference",
        "end_to_end_id",
        "trace_number",
        "remittance",
        "counterparty_name",
        "counterparty_display",
        "batch_count",
    ]
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).defer("statement__content")

    statement_link = link_column("statement", description="statement", ordering="statement_id")
    amount_display = money_column("amount", description="amount", ordering="amount")

    @admin.display(description="counterparty account")
    def counterparty_display(self, obj):
        return _masked(obj.counterparty_account_last4)
