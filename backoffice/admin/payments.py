"""Back office for payments to and from other banks (docs/payments.md, "The back office"):
payment orders with their journals, external accounts, the files exchanged with the sponsor bank
with their entries, the bank's returns and notifications of change, inbound entries and their
suspense queue, customers' stop payments, and each institution's ACH profile.

Every row is written by the payments services; staff change them only through the actions of
`backoffice.actions.payments`. No page shows an account number: external accounts and entries
by their last four, a file by its entries with the numbers masked (a file's bytes carry them:
they are the API's `bank` scope's, `GET /rail-files/{id}/content`, never a staff page's).
"""

from django.contrib import admin
from django.db.models import Q
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from backoffice.actions.payments import (
    apply_from_suspense,
    approve_orders,
    cancel_orders,
    return_from_suspense,
    verify_external_accounts,
)
from backoffice.kit import (
    ActionsOnlyModelAdmin,
    ExactIdSearchMixin,
    ReadOnlyInline,
    ReadOnlyModelAdmin,
    actor_display,
    admin_link,
    link_column,
    metadata_display,
    money_column,
)
from core.money import money
from payments.models import (
    AchProfile,
    ExternalAccount,
    InboundEntry,
    PaymentOrder,
    RailFile,
    RailJournal,
    RailNotice,
    StopPayment,
)
from payments.nacha.codes import TRANSACTION_CODES
from payments.nacha.fields import NachaError
from payments.nacha.file import parse

MASK = "•••• "
RAIL_CURRENCY = "USD"  # ACH moves USD only


class JournalInline(ReadOnlyInline):
    """The journals an order or an inbound entry posted, in order."""

    model = RailJournal
    show_change_link = False
    fields = ["journal_link", "kind", "description", "created_at"]
    readonly_fields = fields
    ordering = ["journal_id"]

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("journal")

    journal_link = link_column("journal", description="journal")

    @admin.display(description="kind")
    def kind(self, obj):
        return obj.journal.kind

    @admin.display(description="description")
    def description(self, obj):
        return obj.journal.description

    @admin.display(description="posted at")
    def created_at(self, obj):
        return obj.journal.created_at


class OrderJournalInline(JournalInline):
    fk_name = "order"


class EntryJournalInline(JournalInline):
    fk_name = "inbound_entry"


class NoticeInline(ReadOnlyInline):
    model = RailNotice
    fk_name = "order"
    show_change_link = False
    fields = ["kind", "code", "reason", "late", "changed_fields", "file", "created_at"]
    readonly_fields = fields


@admin.register(PaymentOrder)
class PaymentOrderAdmin(ExactIdSearchMixin, ActionsOnlyModelAdmin):
    list_display = [
        "id",
        "direction",
        "amount_display",
        "rail",
        "status",
        "account_link",
        "external_display",
        "effective_date",
    ]
    list_filter = ["status", "direction", "rail", "institution"]
    list_select_related = ["external_account", "account"]
    search_fields = ["id", "account_id", "external_account_id", "trace_number", "file_id"]
    search_help_text = (
        "An exact order id, account id, external account id, trace number or file id."
    )
    actions = [approve_orders, cancel_orders]
    inlines = [OrderJournalInline, NoticeInline]
    fields = [
        "id",
        "institution",
        "direction",
        "amount_display",
        "currency",
        "rail",
        "sec_code",
        "description",
        "remittance_info",
        "end_to_end_id",
        "creditor_reference",
        "prenote",
        "status",
        "account_link",
        "external_link",
        "requested_execution_date",
        "effective_date",
        "hold_link",
        "returns_hold_link",
        "file_link",
        "trace_number",
        "return_display",
        "ended_reason",
        metadata_display,
        "created_by",
        "sent_at",
        "settled_at",
        "created_at",
        "updated_at",
    ]
    readonly_fields = fields

    amount_display = money_column("amount", description="amount", ordering="amount")
    account_link = link_column("account", description="account", ordering="account_id")
    external_link = link_column("external_account", description="external account")
    hold_link = link_column("hold", description="hold (a credit's money until its file)")
    returns_hold_link = link_column("returns_hold", description="returns hold (a debit's)")
    file_link = link_column("file", description="file")

    @admin.display(description="external account")
    def external_display(self, obj):
        return str(obj.external_account)

    @admin.display(description="return")
    def return_display(self, obj):
        if not obj.return_code:
            return "-"
        late = ", late" if obj.return_late else ""
        return f"{obj.return_code} {obj.return_reason}{late}"

    @admin.display(description="created by")
    def created_by(self, obj):
        return actor_display(obj, "created_by")


@admin.register(ExternalAccount)
class ExternalAccountAdmin(ExactIdSearchMixin, ActionsOnlyModelAdmin):
    list_display = ["id", "holder_name", "number_display", "customer_link", "status", "created_at"]
    list_filter = ["kind", "status", "institution"]
    list_select_related = ["customer"]
    search_fields = ["id", "customer_id"]
    search_help_text = "An exact external account id or customer id."
    actions = [verify_external_accounts]
    fields = [
        "id",
        "institution",
        "customer_link",
        "kind",
        "holder_name",
        "country_code",
        "currency",
        "ach_routing_number",
        "number_display",
        "ach_account_type",
        "sepa_bic",
        "status",
        "verified_at",
        "verified_by",
        metadata_display,
        "created_by",
        "created_at",
        "updated_at",
    ]
    readonly_fields = fields

    customer_link = link_column("customer", description="customer")

    @admin.display(description="account number or IBAN")
    def number_display(self, obj):
        return f"{MASK}{obj.number_last4}"

    @admin.display(description="created by")
    def created_by(self, obj):
        return actor_display(obj, "created_by")


@admin.register(RailFile)
class RailFileAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    list_display = [
        "id",
        "direction",
        "rail",
        "status",
        "name",
        "window_date",
        "window",
        "entry_count",
        "debit_display",
        "credit_display",
    ]
    list_filter = ["direction", "status", "rail", "institution"]
    search_fields = ["id", "sha256"]
    search_help_text = "An exact file id or SHA-256."
    fields = [
        "id",
        "institution",
        "direction",
        "rail",
        "status",
        "name",
        "sha256",
        "window_date",
        "window",
        "file_id_modifier",
        "entry_count",
        "debit_display",
        "credit_display",
        "error",
        "delivered_at",
        "created_at",
        "entries_display",
    ]
    readonly_fields = fields

    def get_queryset(self, request):
        # The bytes are read by a file's own page only (`entries_display`).
        return super().get_queryset(request).defer("content")

    @admin.display(description="debits")
    def debit_display(self, obj):
        return money(obj.debit_total, RAIL_CURRENCY)

    @admin.display(description="credits")
    def credit_display(self, obj):
        return money(obj.credit_total, RAIL_CURRENCY)

    @admin.display(description="entries")
    def entries_display(self, obj):
        """The file's entries as a table, account numbers masked; a refused file's none."""
        if obj.status == RailFile.Status.REFUSED:
            return "Refused whole: nothing of it was read."
        try:
            entries = list(parse(bytes(obj.content)).entries())
        except NachaError as error:  # stored files were valid; say so if one is not
            return f"Not readable: {error}"
        rows = (
            (
                entry.detail.trace_number,
                header.standard_entry_class_code,
                header.company_name,
                TRANSACTION_CODES[entry.detail.transaction_code].kind,
                TRANSACTION_CODES[entry.detail.transaction_code].direction,
                f"{MASK}{entry.detail.dfi_account_number.strip()[-4:]}",
                money(entry.detail.amount, RAIL_CURRENCY),
                ", ".join(type(each).__name__ for each in entry.addenda) or "-",
            )
            for header, entry in entries
        )
        head = format_html(
            "<tr>{}</tr>",
            format_html_join(
                "",
                "<th>{}</th>",
                (
                    (name,)
                    for name in (
                        "trace",
                        "SEC",
                        "company",
                        "kind",
                        "direction",
                        "account",
                        "amount",
                        "addenda",
                    )
                ),
            ),
        )
        body = format_html_join(
            "",
            "<tr>{}</tr>",
            ((format_html_join("", "<td>{}</td>", ((cell,) for cell in row)),) for row in rows),
        )
        return format_html("<table>{}{}</table>", head, body)


@admin.register(RailNotice)
class RailNoticeAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    """What the bank said of entries: returns, dishonored and contested returns, changes. Those
    of no known order (`order` empty) are for reconciliation."""

    list_display = ["id", "kind", "code", "reason", "late", "order_link", "file_link", "created_at"]
    list_filter = ["kind", "late", ("order", admin.EmptyFieldListFilter), "institution"]
    search_fields = ["original_trace_number", "order__id"]
    search_help_text = "An exact original trace number or order id."
    fields = [
        "id",
        "institution",
        "kind",
        "code",
        "reason",
        "late",
        "original_trace_number",
        "order_link",
        "file_link",
        "changed_fields",
        "created_at",
    ]
    readonly_fields = fields

    order_link = link_column("order", description="order")
    file_link = link_column("file", description="file")


@admin.register(InboundEntry)
class InboundEntryAdmin(ExactIdSearchMixin, ActionsOnlyModelAdmin):
    """Other banks' credits and debits to the institution's accounts. The suspense queue is the
    list filtered to `suspense`: credits for no account, each applied or returned with four
    eyes."""

    list_display = [
        "id",
        "direction",
        "amount_display",
        "status",
        "receiver_name",
        "number_display",
        "account_link",
        "settlement_date",
    ]
    list_filter = ["status", "direction", "institution"]
    list_select_related = ["account"]
    search_fields = ["id", "account_id", "trace_number", "file_id"]
    search_help_text = "An exact entry id, account id, trace number or file id."
    actions = [apply_from_suspense, return_from_suspense]
    inlines = [EntryJournalInline]
    fields = [
        "id",
        "institution",
        "rail",
        "direction",
        "amount_display",
        "currency",
        "prenote",
        "status",
        "sec_code",
        "company_name",
        "company_id",
        "company_entry_description",
        "receiver_name",
        "number_display",
        "account_link",
        "settlement_date",
        "trace_number",
        "sepa_reference",
        "end_to_end_id",
        "remittance_info",
        "file_link",
        "return_display",
        "return_file_link",
        "return_trace_number",
        "stop_payment_link",
        "applied_at",
        "created_at",
        "updated_at",
    ]
    readonly_fields = fields

    amount_display = money_column("amount", description="amount", ordering="amount")
    account_link = link_column("account", description="account", ordering="account_id")
    file_link = link_column("file", description="file")
    return_file_link = link_column("return_file", description="return's file")
    stop_payment_link = link_column("stop_payment", description="stop payment (R08)")

    @admin.display(description="account number")
    def number_display(self, obj):
        return f"{MASK}{obj.account_number_last4}"

    @admin.display(description="return")
    def return_display(self, obj):
        return f"{obj.return_code} {obj.return_reason}" if obj.return_code else "-"


class StopPaymentStatusFilter(admin.SimpleListFilter):
    """As the API shows it: `expired` is an active stop past its time."""

    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return StopPayment.Status.choices

    def queryset(self, request, queryset):
        if self.value() not in StopPayment.Status.values:
            return queryset
        now = timezone.now()
        active = queryset.filter(status=StopPayment.Status.ACTIVE)
        if self.value() == StopPayment.Status.ACTIVE:
            return active.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
        if self.value() == StopPayment.Status.EXPIRED:
            return active.filter(expires_at__lte=now)
        return queryset.filter(status=StopPayment.Status.CANCELLED)


@admin.register(StopPayment)
class StopPaymentAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    """Customers' stops of an originator's ACH debits (made and cancelled through the API), with
    the inbound debits each returned R08."""

    list_display = [
        "id",
        "company_id",
        "amount_display",
        "status_display",
        "account_link",
        "expires_at",
        "created_at",
    ]
    list_filter = [StopPaymentStatusFilter, "institution"]
    list_select_related = ["account"]
    search_fields = ["id", "account_id", "company_id"]
    search_help_text = "An exact stop payment id, account id or company id."
    fields = [
        "id",
        "institution",
        "account_link",
        "company_id",
        "amount_display",
        "status_display",
        "expires_at",
        "reason",
        "created_by_display",
        "created_at",
        "cancelled_at",
        "cancelled_reason",
        "stopped_display",
    ]
    readonly_fields = fields

    account_link = link_column("account", description="account", ordering="account_id")

    @admin.display(description="amount", ordering="amount")
    def amount_display(self, obj):
        return "any" if obj.amount is None else money(obj.amount, obj.currency)

    @admin.display(description="status", ordering="status")
    def status_display(self, obj):
        return obj.shown_status()

    @admin.display(description="made by")
    def created_by_display(self, obj):
        return actor_display(obj, "created_by")

    @admin.display(description="debits it returned (R08)")
    def stopped_display(self, obj):
        entries = list(obj.stopped_entries.order_by("pk"))
        if not entries:
            return "-"
        return format_html_join(", ", "{}", ((admin_link(entry, entry.pk),) for entry in entries))


@admin.register(AchProfile)
class AchProfileAdmin(ReadOnlyModelAdmin):
    """Set by the operators (`manage.py ach_profile`): shown here."""

    list_display = ["institution", "odfi_name", "odfi_routing_number", "next_day_cutoff"]
    fields = [
        "institution",
        "odfi_routing_number",
        "odfi_name",
        "destination_routing_number",
        "destination_name",
        "company_id",
        "company_name",
        "receiving_routing_number",
        "next_day_cutoff",
        "same_day_cutoffs",
        "same_day_limit_display",
        "require_verified",
        "debit_hold_days",
        "approval_above_display",
    ]
    readonly_fields = fields

    @admin.display(description="same-day limit (one entry)")
    def same_day_limit_display(self, obj):
        return money(obj.same_day_limit, RAIL_CURRENCY)

    @admin.display(description="orders above this wait for a staff user")
    def approval_above_display(self, obj):
        return "-" if obj.approval_above is None else money(obj.approval_above, RAIL_CURRENCY)
