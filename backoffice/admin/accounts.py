"""Back office for the money core's accounts side: accounts, holds, the ledger, adjustments.

Staff look at everything and change state only through the actions declared in
`backoffice.actions.accounts`, which call the same services as the API (docs/design.md section 10),
so every rule, lock, journal and event holds: freeze, unfreeze and close accounts, release
holds, and, above the institution's threshold with a second staff user (four eyes), adjust a
balance, change an overdraft limit, waive fees. Nothing is added or deleted here, and no change
form ever saves a row: balances are written only by the services, under their locks (a form
saving a whole row could overwrite them). Journals and entries are strictly read-only, as the
database makes them (append-only).

Each action first shows a confirmation page that lists the selected rows (money with `money`)
and asks for a reason; each changed object then gets one `LogEntry` (who, when, which action,
the reason: docs/back-office.md, "Actions on a page"). The account number is a sensitive identifier:
never in a list, never searchable, only its last four digits on the account's page. Amounts
are integers in minor units, shown with their currency (`money`). Account products are seeded
per institution; staff add and change them through the products' services (their forms' writes
are declared: docs/products.md).
"""

from django import forms
from django.contrib import admin
from django.core.exceptions import ObjectDoesNotExist
from django.utils.html import format_html

from accounts.models import (
    Account,
    AccountProduct,
    Adjustment,
    Entry,
    Fee,
    Hold,
    Journal,
    StatementLine,
)
from accounts.selectors import holds_expiring_today
from accounts.services.products import account_product_errors
from backoffice.actions.accounts import (
    activate_accounts,
    add_account_product,
    change_account_product,
    change_overdraft_limit,
    close_accounts,
    freeze_accounts,
    release_holds,
    request_adjustment,
    waive_fees,
)
from backoffice.actions.forms import DeclaredForms
from backoffice.admin.statement_lines import (
    LINE_STATE_RELATED,
    line_amount_display,
    line_state_display,
)
from backoffice.kit import (
    ActionsOnlyModelAdmin,
    ExactIdSearchMixin,
    ReadOnlyInline,
    ReadOnlyModelAdmin,
    RecentInlinesMixin,
    ServiceFormModelAdmin,
    actor_display,
    admin_link,
    changelist_link,
    customer_column,
    link_column,
    masked_account_number,
    metadata_display,
    money_column,
)
from backoffice.names import type_display

# How many holds and statement lines the account's page shows inline (newest first).
RECENT_ROWS = 20


# --- Account products -----------------------------------------------------------------------
class AccountProductForm(forms.ModelForm):
    """The rules are the services' (`account_product_errors`), shown field by field."""

    class Meta:
        model = AccountProduct
        fields = [
            "institution",
            "code",
            "name",
            "currency",
            "allows_overdraft",
            "max_overdraft_limit",
            "monthly_fee",
            "debit_hold_days",
            "status",
        ]
        help_texts = {
            "currency": 'ISO 4217 alpha-3, e.g. "EUR". Fixed once made.',
            "code": "Financial contract type; fixed once made. Several products may share it.",
            "max_overdraft_limit": "Minor units of the currency; 0 unless overdraft is allowed.",
        }

    monthly_fee = forms.IntegerField(
        required=False,
        help_text="Charged to each active account every month, minor units of the currency; "
        "blank or 0 charges nothing (docs/fees.md).",
    )

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("monthly_fee") is None and not self.instance._state.adding:
            cleaned["monthly_fee"] = self.instance.monthly_fee  # blank: left as it is
        if self.instance._state.adding:
            values = {
                field: cleaned[field]
                for field in ACCOUNT_PRODUCT_CREATE_FIELDS
                if cleaned.get(field) is not None
            }
            errors = account_product_errors(values)
        else:
            values = {field: cleaned[field] for field in self.changed_data if field in cleaned}
            errors = account_product_errors(
                values, product=AccountProduct.objects.get(pk=self.instance.pk)
            )
        for field, message in errors.items():
            if field in self.fields and field not in self.errors:
                self.add_error(field, message)
        return cleaned


ACCOUNT_PRODUCT_CREATE_FIELDS = [
    "code",
    "name",
    "currency",
    "allows_overdraft",
    "max_overdraft_limit",
    "monthly_fee",
    "debit_hold_days",
]
# What staff change on an existing product.
ACCOUNT_PRODUCT_CHANGE_FIELDS = [
    "name",
    "allows_overdraft",
    "max_overdraft_limit",
    "monthly_fee",
    "debit_hold_days",
    "status",
]


@admin.register(AccountProduct)
class AccountProductAdmin(DeclaredForms, ServiceFormModelAdmin):
    """Staff add and change products through `account_product_create` and
    `account_product_update`, as the API's v2 does (`product.created`, `product.updated` name
    the staff user; the admin's `LogEntry` says who and when). Retire by setting the status.
    The code and the currency are fixed once made; products are never deleted (accounts and
    cards refer to them)."""

    form = AccountProductForm
    list_display = [
        "name",
        "institution",
        "kind",
        "currency",
        "allows_overdraft",
        "max_overdraft_limit_display",
        "monthly_fee_display",
        "status",
        "created_at",
    ]
    list_filter = ["status", "code", "kind", "currency", "institution"]
    list_select_related = ["institution"]
    search_fields = ["=id", "name", "institution__name"]
    create_fields = ACCOUNT_PRODUCT_CREATE_FIELDS
    change_fields = ACCOUNT_PRODUCT_CHANGE_FIELDS
    add_write = add_account_product
    change_write = change_account_product
    detail_fields = ["id", "institution", "code", "kind", "currency", "created_at", "updated_at"]

    max_overdraft_limit_display = money_column(
        "max_overdraft_limit", description="max overdraft limit", ordering="max_overdraft_limit"
    )
    monthly_fee_display = money_column(
        "monthly_fee", description="monthly fee", ordering="monthly_fee"
    )


# --- Accounts -------------------------------------------------------------------------------
class HoldInline(ReadOnlyInline):
    model = Hold
    fk_name = "account"
    recent = RECENT_ROWS
    verbose_name_plural = f"holds (newest {RECENT_ROWS}; “All holds” above lists every one)"
    fields = ["amount_display", "captured_display", "status", "reason", "expires_at", "created_at"]
    readonly_fields = fields

    amount_display = money_column("amount", description="amount")
    captured_display = money_column("captured_amount", description="captured")


class StatementLineInline(ReadOnlyInline):
    model = StatementLine
    fk_name = "account"
    recent = RECENT_ROWS
    verbose_name = "statement line"
    verbose_name_plural = (
        f"statement lines (newest {RECENT_ROWS}; “All statement lines” above lists every one)"
    )
    fields = [type_display, "state", "amount_display", "description", "created_at"]
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).select_related(*LINE_STATE_RELATED)

    @admin.display(description="state")
    def state(self, obj):
        return line_state_display(obj)

    @admin.display(description="amount")
    def amount_display(self, obj):
        return line_amount_display(obj)


@admin.register(Account)
class AccountAdmin(RecentInlinesMixin, ExactIdSearchMixin, ActionsOnlyModelAdmin):
    """Accounts are opened through the API (`account_create`); here they are reviewed and
    frozen, unfrozen or closed through `account_set_status`."""

    list_display = [
        "id",
        "institution",
        "customer_link",
        "product_name",
        "currency",
        "status",
        "posted_display",
        "pending_display",
        "available_display",
        "kind",
    ]
    list_filter = ["institution", "status", "kind", "currency"]
    list_select_related = ["institution", "customer", "product"]
    search_fields = ["id", "customer_id"]
    search_help_text = "An exact account id or customer id."
    actions = [
        freeze_accounts,
        activate_accounts,
        close_accounts,
        request_adjustment,
        change_overdraft_limit,
    ]
    inlines = [HoldInline, StatementLineInline]
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "id",
                    "institution",
                    "kind",
                    "internal_code",
                    "customer_link",
                    "product",
                    "currency",
                    "account_number_masked",
                    "status",
                    "created_at",
                    "updated_at",
                ]
            },
        ),
        (
            "Balances (minor units shown with their currency; written only by the ledger)",
            {
                "fields": [
                    "posted_display",
                    "pending_display",
                    "overdraft_display",
                    "network_overdraft_display",
                    "available_display",
                ]
            },
        ),
        ("Client metadata (set through the API)", {"fields": [metadata_display]}),
        (
            "Related lists",
            {
                "fields": [
                    "holds_link",
                    "statement_lines_link",
                    "entries_link",
                    "adjustments_link",
                    "transfers_link",
                ]
            },
        ),
    ]
    readonly_fields = [field for _, options in fieldsets for field in options["fields"]]

    # -- columns and fields
    customer_link = customer_column(ordering="customer_id")

    @admin.display(description="product", ordering="product__name")
    def product_name(self, obj):
        return obj.product.name if obj.product else "—"

    posted_display = money_column("posted", description="posted", ordering="posted")
    pending_display = money_column("pending", description="pending", ordering="pending")
    available_display = money_column("available", description="available", ordering="available")
    overdraft_display = money_column("overdraft_limit", description="overdraft limit")
    # What card-network advices and force posts took the account below zero: owed by the
    # cardholder, repaid first by money coming in (docs/card-transactions.md).
    network_overdraft_display = money_column(
        "network_overdraft", description="overdrawn by the card network"
    )

    @admin.display(description="account number")
    def account_number_masked(self, obj):
        return masked_account_number(obj)

    @admin.display(description="holds")
    def holds_link(self, obj):
        return changelist_link(Hold, "All holds", account=obj.pk)

    @admin.display(description="statement lines")
    def statement_lines_link(self, obj):
        return changelist_link(StatementLine, "All statement lines", account=obj.pk)

    @admin.display(description="ledger entries")
    def entries_link(self, obj):
        return changelist_link(Entry, "All ledger entries", account=obj.pk)

    @admin.display(description="adjustments")
    def adjustments_link(self, obj):
        return changelist_link(Adjustment, "All loads and unloads", account=obj.pk)

    @admin.display(description="transfers")
    def transfers_link(self, obj):
        return format_html(
            "{} · {}",
            changelist_link("transfers.Transfer", "Out of this account", source_account=obj.pk),
            changelist_link("transfers.Transfer", "Into this account", destination_account=obj.pk),
        )


# --- Holds ----------------------------------------------------------------------------------
class ExpiresFilter(admin.SimpleListFilter):
    """ "Today": active holds expiring on today's date in their institution's time zone (the
    back office's work queue, `holds_expiring_today`)."""

    title = "expires"
    parameter_name = "expires"

    def lookups(self, request, model_admin):
        return [("today", "today (the institution's time zone)")]

    def queryset(self, request, queryset):
        if self.value() == "today":
            return holds_expiring_today(queryset)
        return queryset


@admin.register(Hold)
class HoldAdmin(ExactIdSearchMixin, ActionsOnlyModelAdmin):
    """Holds are placed through the API or card authorizations; staff release them here
    (`hold_release`). Captures happen through the API."""

    list_display = [
        "id",
        "account_link",
        "amount_display",
        "captured_display",
        "currency",
        "status",
        "expires_at",
        "placed_by",
    ]
    list_filter = ["status", ExpiresFilter, "institution", "currency"]
    list_select_related = ["account__institution", "placed_by_user", "placed_by_api_key"]
    search_fields = ["id", "account_id"]
    search_help_text = "An exact hold id or account id."
    actions = [release_holds]
    fields = [
        "id",
        "institution",
        "account_link",
        "amount_display",
        "captured_display",
        "currency",
        "status",
        "reason",
        metadata_display,
        "expires_at",
        "placed_by",
        "capture_journal_link",
        "statement_lines_link",
        "created_at",
        "updated_at",
        "closed_at",
    ]
    readonly_fields = fields

    account_link = link_column("account", description="account", ordering="account_id")
    amount_display = money_column("amount", description="amount", ordering="amount")
    captured_display = money_column(
        "captured_amount", description="captured", ordering="captured_amount"
    )

    @admin.display(description="placed by")
    def placed_by(self, obj):
        return actor_display(obj, "placed_by")

    capture_journal_link = link_column("capture_journal", description="capture journal")

    @admin.display(description="statement lines")
    def statement_lines_link(self, obj):
        return changelist_link(StatementLine, "Statement lines", hold=obj.pk)


# --- The ledger: journals and entries (append-only) -----------------------------------------
class EntryInline(ReadOnlyInline):
    model = Entry
    show_change_link = False
    fields = ["account_link", "direction", "amount_display", "created_at"]
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("account__institution")

    account_link = link_column("account", description="account")
    amount_display = money_column("amount", description="amount")


# The one-to-one rows a journal records (the journal's reverse accessors), in display order.
JOURNAL_SOURCES = ["transfer", "transfer_reversal", "adjustment", "captured_hold"]


@admin.register(Journal)
class JournalAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    list_display = ["id", "kind", "institution", "description", "created_at"]
    list_filter = ["kind", "institution"]
    list_select_related = ["institution"]
    search_fields = ["id"]
    show_full_result_count = False
    inlines = [EntryInline]
    fields = ["id", "institution", "kind", "description", "records", "created_at"]
    readonly_fields = fields

    @admin.display(description="records")
    def records(self, obj):
        for name in JOURNAL_SOURCES:
            try:
                source = getattr(obj, name)
            except ObjectDoesNotExist:
                continue
            if name == "transfer_reversal":  # reversals are shown on their transfer's page
                return format_html("{} of {}", source.pk, admin_link(source.transfer))
            return admin_link(source)
        return "—"


@admin.register(Entry)
class EntryAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    institution_path = "account__institution"
    list_display = [
        "id",
        "journal_link",
        "account_link",
        "direction",
        "amount_display",
        "currency",
        "created_at",
    ]
    list_filter = ["direction", "currency"]
    list_select_related = ["journal", "account__institution"]
    search_fields = ["journal_id", "account_id"]
    search_help_text = "An exact journal id or account id."
    show_full_result_count = False
    ordering = ["-id"]
    fields = ["id", "journal_link", "account_link", "direction", "amount_display", "created_at"]
    readonly_fields = fields

    journal_link = link_column("journal", description="journal", ordering="journal_id")
    account_link = link_column("account", description="account", ordering="account_id")
    amount_display = money_column("amount", description="amount", ordering="amount")


# --- Adjustments (loads and unloads) --------------------------------------------------------
@admin.register(Adjustment)
class AdjustmentAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    """Made through the API (`adjustment_create`); read-only here."""

    list_display = [
        "id",
        "account_link",
        "direction",
        "amount_display",
        "currency",
        "created_by",
        "created_at",
    ]
    list_filter = ["direction", "institution", "currency"]
    list_select_related = ["account__institution", "created_by_user", "created_by_api_key"]
    search_fields = ["id", "account_id"]
    search_help_text = "An exact adjustment id or account id."
    fields = [
        "id",
        "institution",
        "account_link",
        "direction",
        "amount_display",
        "currency",
        "description",
        "journal_link",
        "created_by",
        "created_at",
    ]
    readonly_fields = fields

    account_link = link_column("account", description="account", ordering="account_id")
    amount_display = money_column("amount", description="amount", ordering="amount")
    journal_link = link_column("journal", description="journal")

    @admin.display(description="created by")
    def created_by(self, obj):
        return actor_display(obj, "created_by")


# --- Fees (docs/fees.md) --------------------------------------------------------------------
@admin.register(Fee)
class FeeAdmin(ExactIdSearchMixin, ActionsOnlyModelAdmin):
    """Charged by the services (presentments, replacements, the monthly job); read here, and
    waived with "Waive" (`backoffice.actions.accounts.waive_fees`): at once within the
    institution's threshold, else another staff user approves it and `fee_waive` runs then
    (docs/back-office.md, "Four eyes")."""

    list_display = [
        "id",
        "account_link",
        "kind",
        "amount_display",
        "status",
        "period",
        "card_id",
        "authorization_id",
        "created_at",
    ]
    list_filter = ["status", "kind", "institution", "currency"]
    list_select_related = ["account__institution"]
    search_fields = ["id", "account_id", "card_id", "authorization_id"]
    search_help_text = "An exact fee, account, card or authorization id."
    actions = [waive_fees]
    fields = [
        "id",
        "institution",
        "account_link",
        "kind",
        "amount_display",
        "status",
        "period",
        "card_id",
        "authorization_id",
        "decline_reason",
        "journal_link",
        "waiver_journal_link",
        "waived_by",
        "waived_at",
        "waiver_reason",
        "statement_lines_link",
        "created_at",
        "updated_at",
    ]
    readonly_fields = fields

    account_link = link_column("account", description="account", ordering="account_id")
    amount_display = money_column("amount", description="amount", ordering="amount")
    journal_link = link_column("journal", description="journal")
    waiver_journal_link = link_column("waiver_journal", description="waiver journal")

    @admin.display(description="statement lines")
    def statement_lines_link(self, obj):
        return changelist_link(StatementLine, "Statement lines", fee=obj.pk)
