"""Back office for transfers: reviewed here, reversed through `transfer_reverse`.

Transfers are made through the API; nothing is added, edited or deleted here. The one staff
action reverses what remains of each selected transfer (a new journal the other way, statement
lines and `transfer.reversed`, as through the API) and leaves a `LogEntry` on the transfer
naming the action and the reversal. Reversals show read-only on their transfer's page.
"""

from django.contrib import admin, messages
from django.db import transaction

from core.actors import Actor
from core.admin import (
    ActionsOnlyModelAdmin,
    ExactIdSearchMixin,
    ReadOnlyInline,
    actor_display,
    admin_link,
    changelist_link,
    failure,
)
from core.exceptions import TXError
from core.money import money
from transactions.models import Transaction

from .models import Transfer, TransferReversal
from .services import transfer_reverse


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

    @admin.display(description="amount")
    def amount_display(self, obj):
        return money(obj.amount, obj.currency)

    @admin.display(description="journal")
    def journal_link(self, obj):
        return admin_link(obj.journal)

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
    search_fields = ["id", "source_account_id", "destination_account_id"]
    search_help_text = "An exact transfer id or account id (source or destination)."
    actions = ["reverse_transfers"]
    inlines = [TransferReversalInline]
    fields = [
        "id",
        "institution",
        "source_link",
        "destination_link",
        "amount_display",
        "reversed_display",
        "currency",
        "status",
        "description",
        "journal_link",
        "statement_lines_link",
        "created_by",
        "created_at",
        "updated_at",
    ]
    readonly_fields = fields

    @admin.display(description="source", ordering="source_account_id")
    def source_link(self, obj):
        return admin_link(obj.source_account)

    @admin.display(description="destination", ordering="destination_account_id")
    def destination_link(self, obj):
        return admin_link(obj.destination_account)

    @admin.display(description="amount", ordering="amount")
    def amount_display(self, obj):
        return money(obj.amount, obj.currency)

    @admin.display(description="reversed", ordering="reversed_amount")
    def reversed_display(self, obj):
        return money(obj.reversed_amount, obj.currency)

    @admin.display(description="journal")
    def journal_link(self, obj):
        return admin_link(obj.journal)

    @admin.display(description="statement lines")
    def statement_lines_link(self, obj):
        return changelist_link(Transaction, "Statement lines", transfer=obj.pk)

    @admin.display(description="created by")
    def created_by(self, obj):
        return actor_display(obj, "created_by")

    @admin.action(
        description="Reverse selected transfers (full remaining amount)", permissions=["change"]
    )
    def reverse_transfers(self, request, queryset):
        actor = Actor(user=request.user)
        reversed_count = 0
        for transfer in queryset.order_by("pk"):
            try:
                with transaction.atomic():
                    reversal = transfer_reverse(transfer=transfer, actor=actor)
                    self.log_change(
                        request,
                        reversal.transfer,
                        f"Reversed {money(reversal.amount, reversal.currency)} "
                        f"(reversal {reversal.pk}; admin action “Reverse”).",
                    )
            except TXError as exc:
                failure(self, request, transfer.pk, exc)
                continue
            reversed_count += 1
        if reversed_count:
            self.message_user(request, f"Reversed {reversed_count} transfer(s).", messages.SUCCESS)
