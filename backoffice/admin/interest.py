"""Back office for interest (docs/interest.md, "The back office"): account products' interest
terms and accounts' overrides of them, the accounts' daily accruals, the adjustments of
back-valued money to them and the interest posted, read-only. Terms and overrides are written
by the API only (never changed but an override's end), accruals and adjustments by the accrual
job, postings by the posting job and a close's settlement. No page shows an account number or
an IBAN: an account is its id and currency.

The exact figures (accrued, carried, a difference) are minor units to 12 places, shown as
stored; what was posted and withheld is money.
"""

from django.contrib import admin
from django.utils.html import format_html

from backoffice.kit import ExactIdSearchMixin, ReadOnlyModelAdmin, link_column, money_column
from core.money import money
from interest.models import InterestAccrual, InterestAdjustment, InterestPosting, InterestTerms


def _rates(parts: list[dict], amount: str, rate: str) -> str:
    return "; ".join(f"{part[amount]:,} at {part[rate]} %" for part in parts) or "—"


class AppliesToFilter(admin.SimpleListFilter):
    title = "product / account override"
    parameter_name = "applies_to"

    def lookups(self, request, model_admin):
        return [("product", "product terms"), ("override", "account overrides")]

    def queryset(self, request, queryset):
        if self.value() == "product":
            return queryset.filter(account__isnull=True)
        if self.value() == "override":
            return queryset.filter(account__isnull=False)
        return queryset


@admin.register(InterestTerms)
class InterestTermsAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    list_display = [
        "id",
        "applies_to",
        "effective_date",
        "end_date",
        "tiers_display",
        "overdraft_rate",
        "day_count",
    ]
    list_filter = [AppliesToFilter, "day_count", "posting_frequency", "institution"]
    list_select_related = ["product", "account", "institution"]
    search_fields = ["id", "product_id", "account_id"]
    search_help_text = "An exact terms id, account product rid or account id (its overrides)."
    ordering = ["product_id", "account_id", "-effective_date"]
    fields = [
        "id",
        "institution",
        "applies_to",
        "product_link",
        "account_link",
        "effective_date",
        "end_date",
        "tiers_display",
        "tiering",
        "minimum_balance_display",
        "overdraft_rate",
        "day_count",
        "balance_method",
        "posting_frequency",
        "rounding",
        "negative_rates_allowed",
        "withholding_tax_rate",
        "created_at",
    ]
    readonly_fields = fields

    product_link = link_column("product", description="product", ordering="product_id")
    account_link = link_column("account", description="account (an override)")

    @admin.display(description="minimum balance")
    def minimum_balance_display(self, obj):
        return money(obj.minimum_balance, (obj.product or obj.account).currency)

    @admin.display(description="applies to")
    def applies_to(self, obj):
        if obj.account_id:
            return format_html("override of account {}", self.account_link(obj))
        return format_html("product {}", self.product_link(obj))

    @admin.display(description="deposit tiers (from balance, minor units)")
    def tiers_display(self, obj):
        return _rates(obj.deposit_tiers, "from_balance", "rate")


@admin.register(InterestAccrual)
class InterestAccrualAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    list_display = [
        "day",
        "kind",
        "account_link",
        "balance_display",
        "bands_display",
        "fraction",
        "accrual",
    ]
    list_filter = ["kind", "day"]
    list_select_related = ["account"]
    # The unique (account, day, kind) index answers it.
    search_fields = ["account_id"]
    search_help_text = "An exact account id."
    show_full_result_count = False
    ordering = ["-id"]
    fields = [
        "account_link",
        "day",
        "kind",
        "balance_display",
        "bands_display",
        "terms_link",
        "fraction",
        "accrual",
        "booking",
    ]
    readonly_fields = fields

    account_link = link_column("account", description="account", ordering="account_id")
    terms_link = link_column("terms", description="terms")
    balance_display = money_column(
        "balance", currency="account.currency", description="end-of-day balance by value date"
    )

    @admin.display(description="rates (amount, minor units)")
    def bands_display(self, obj):
        return _rates(obj.bands, "amount", "rate")


@admin.register(InterestAdjustment)
class InterestAdjustmentAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    list_display = [
        "id",
        "day",
        "kind",
        "account_link",
        "balance_display",
        "difference",
        "found_on",
    ]
    list_filter = ["kind", "day"]
    list_select_related = ["account"]
    # iadjust_day_idx starts with the account.
    search_fields = ["id", "account_id"]
    search_help_text = "An exact adjustment id or account id."
    show_full_result_count = False
    ordering = ["-id"]
    fields = [
        "id",
        "account_link",
        "day",
        "kind",
        "balance_display",
        "difference",
        "found_on",
        "booking",
        "created_at",
    ]
    readonly_fields = fields

    account_link = link_column("account", description="account", ordering="account_id")
    balance_display = money_column(
        "balance", currency="account.currency", description="end-of-day balance by value date, now"
    )


@admin.register(InterestPosting)
class InterestPostingAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    list_display = [
        "id",
        "kind",
        "account_link",
        "first_day",
        "last_day",
        "amount_display",
        "withholding_tax_display",
        "journal_link",
    ]
    list_filter = ["kind", "last_day", "trigger"]
    list_select_related = ["account"]
    # The unique (account, kind, last_day) index answers an account.
    search_fields = ["id", "account_id"]
    search_help_text = "An exact posting id or account id."
    show_full_result_count = False
    ordering = ["-last_day", "-id"]
    fields = [
        "id",
        "account_link",
        "kind",
        "first_day",
        "last_day",
        "trigger",
        "terms_link",
        "accrued",
        "carried_in",
        "amount_display",
        "carried_out",
        "withholding_tax_display",
        "journal_link",
        "created_at",
    ]
    readonly_fields = fields

    account_link = link_column("account", description="account", ordering="account_id")
    terms_link = link_column("terms", description="terms")
    journal_link = link_column("journal", description="journal")
    amount_display = money_column(
        "amount", currency="account.currency", description="posted (gross)", ordering="amount"
    )
    withholding_tax_display = money_column(
        "withholding_tax", currency="account.currency", description="tax withheld"
    )
