"""Back office for transfers: reviewed here, reversed through `transfer_reverse`.

Transfers are made through the API; nothing is added, edited or deleted here. The one staff
action (`backoffice.actions.transfers.reverse_transfers`) reverses what remains of each selected
transfer (a new journal the other way, statement lines and `transfer.reversed`, as through the
API) after a confirmation page that asks for the reason, and leaves a `LogEntry` on the transfer
naming the action, the reversal and the reason. Reversals show read-only on their transfer's
page.
"""

from django.contrib import admin

from accounts.models import StatementLine
from backoffice.actions.transfers import reverse_transfers
from backoffice.kit import (
    ActionsOnlyModelAdmin,
    ExactIdSearchMixin,
    ReadOnlyInline,
    actor_display,
    changelist_link,
    link_column,
    metadata_display,
    money_column,
)
from transfers.models import Transfer, TransferBatch, TransferReversal


class TransferReversalInline(ReadOnlyInline):
    model = TransferReversal
    show_change_link = False  # a reversal has no page of its own
    fields = ["id", "amount_display", "journal_link", "created_by", "created_at"]
    readonly_fields = fields

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("journal", "created_by_user", "created_by_api_key")
        )

    amount_display = money_column("amount", description="amount")
    journal_link = link_column("journal", description="journal")

    @admin.display(description="by")
    def created_by(self, obj):
        return actor_display(obj, "created_by")


@admin.register(Transfer)
class TransferAdmin(ExactIdSearchMixin, ActionsOnlyModelAdmin):
    list_display = [
        "id",
        "source_link",
        "destination_link",
        "amount_display",
        "reversed_display",
        "currency",
        "status",
        "created_at",
    ]
    list_filter = ["status", "institution", "currency"]
    list_select_related = ["source_account__institution", "destination_account__institution"]
    search_fields = ["id", "source_account_id", "destination_account_id", "reference", "batch_id"]
    search_help_text = (
        "An exact transfer id, account id (source or destination), reference or batch id."
    )
    actions = [reverse_transfers]
    inlines = [TransferReversalInline]
    fields = [
        "id",
        "institution",
        "source_link",
        "destination_link",
        "amount_display",
        "posted_display",
        "reversed_display",
        "currency",
        "status",
        "hold_link",
        "expires_at",
        "description",
        "reference",
        metadata_display,
        "batch_link",
        "journal_link",
        "statement_lines_link",
        "created_by",
        "created_at",
        "updated_at",
    ]
    readonly_fields = fields

    source_link = link_column("source_account", description="source", ordering="source_account_id")
    destination_link = link_column(
        "destination_account", description="destination", ordering="destination_account_id"
    )
    amount_display = money_column("amount", description="amount", ordering="amount")
    reversed_display = money_column(
        "reversed_amount", description="reversed", ordering="reversed_amount"
    )
    posted_display = money_column("posted_amount", description="posted", ordering="posted_amount")
    hold_link = link_column("hold", description="hold (two-phase)")

    journal_link = link_column("journal", description="journal")
    batch_link = link_column("batch", description="batch")

    @admin.display(description="statement lines")
    def statement_lines_link(self, obj):
        return changelist_link(StatementLine, "Statement lines", transfer=obj.pk)

    @admin.display(description="created by")
    def created_by(self, obj):
        return actor_display(obj, "created_by")


@admin.register(TransferBatch)
class TransferBatchAdmin(ExactIdSearchMixin, ActionsOnlyModelAdmin):
    """Batches are made through the API (docs/transfer-batches.md); reviewed here."""

    list_display = ["id", "institution", "mode", "total", "created_at"]
    list_filter = ["mode", "institution"]
    search_fields = ["id"]
    search_help_text = "An exact batch id."
    fields = ["id", "institution", "mode", "total", "transfers_link", "results", "created_by"]
    fields += ["created_at"]
    readonly_fields = fields

    @admin.display(description="items")
    def total(self, obj):
        return len(obj.results)

    @admin.display(description="transfers")
    def transfers_link(self, obj):
        return changelist_link(Transfer, "Posted transfers", batch=obj.pk)

    @admin.display(description="created by")
    def created_by(self, obj):
        return actor_display(obj, "created_by")
