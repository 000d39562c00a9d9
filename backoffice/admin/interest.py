"""Back office for interest (docs/interest.md, "The back office"): account products' interest
terms and the accounts' daily accruals, read-only. Terms are written by the API only (`POST
/products/accounts/{rid}/interest-rates`, never changed), accruals by the accrual job only. No
page shows an account number or an IBAN: an account is its id and currency.
"""

from django.contrib import admin

from backoffice.kit import ExactIdSearchMixin, ReadOnlyModelAdmin, link_column, money_column
from interest.models import InterestAccrual, InterestTerms


def _rates(parts: list[dict], amount: str, rate: str) -> str:
    return "; ".join(f"{part[amount]:,} at {part[rate]} %" for part in parts) or "—"


@admin.register(InterestTerms)
class InterestTermsAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    list_display = [
        "id",
        "product_link",
        "effective_date",
        "tiers_display",
        "overdraft_rate",
        "day_count",
    ]
    list_filter = ["day_count", "posting_frequency", "institution"]
    list_select_related = ["product", "institution"]
    search_fields = ["id", "product_id"]
    search_help_text = "An exact terms id or account product rid."
    ordering = ["product_id", "-effective_date"]
    fields = [
        "id",
        "institution",
        "product_link",
        "effective_date",
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
    minimum_balance_display = money_column(
        "minimum_balance", currency="product.currency", description="minimum balance"
    )

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
