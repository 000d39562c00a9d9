"""Back office for the card networks' settlements (docs/reconciliation.md, "Card settlement
in"): each settlement with its totals and journals, and its rows.

Read-only: a settlement is written by `reconciliation.services.settlements` only (the API's
`POST /network-settlements`). Its page shows its proof now, as the API's `/proof` does. Nothing
here is a card number: a row names its transaction by the network's id.
"""

from django.contrib import admin

from backoffice.kit import (
    ExactIdSearchMixin,
    ReadOnlyModelAdmin,
    changelist_link,
    link_column,
    money_column,
)
from core.money import money
from reconciliation.models import NetworkSettlement, NetworkSettlementRow
from reconciliation.services.settlement_matching import settlement_proof


@admin.register(NetworkSettlement)
class NetworkSettlementAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    list_display = [
        "id",
        "network",
        "settlement_date",
        "currency",
        "net_display",
        "row_count",
    ]
    list_filter = ["network", "currency", "institution"]
    search_fields = ["id", "sha256"]
    search_help_text = "An exact settlement id or SHA-256."
    fields = [
        "id",
        "institution",
        "network",
        "settlement_date",
        "currency",
        "purchases_display",
        "refunds_display",
        "cash_display",
        "chargebacks_display",
        "representments_display",
        "interchange_display",
        "scheme_fees_display",
        "net_display",
        "proof_display",
        "sha256",
        "row_count",
        "rows_link",
        "clearing_journal_link",
        "interchange_journal_link",
        "scheme_fees_journal_link",
        "created_at",
    ]
    readonly_fields = fields

    purchases_display = money_column("purchases", description="purchases")
    refunds_display = money_column("refunds", description="refunds")
    cash_display = money_column("cash", description="cash")
    chargebacks_display = money_column("chargebacks", description="chargebacks")
    representments_display = money_column("representments", description="representments")
    interchange_display = money_column("interchange", description="interchange")
    scheme_fees_display = money_column("scheme_fees", description="scheme fees")
    net_display = money_column("net", description="net", ordering="net")
    clearing_journal_link = link_column("clearing_journal", description="transactions journal")
    interchange_journal_link = link_column("interchange_journal", description="interchange journal")
    scheme_fees_journal_link = link_column("scheme_fees_journal", description="scheme fees journal")

    @admin.display(description="proof")
    def proof_display(self, obj):
        """The settlement's proof now (docs/reconciliation.md, "The settlement's proof")."""
        proof = settlement_proof(obj)
        words = (
            f"card clearing moved {money(proof['card_clearing_movement'], obj.currency)}; the "
            f"transactions {money(proof['transactions'], obj.currency)} less the open breaks "
            f"{money(proof['open_breaks'], obj.currency)}"
        )
        if proof["holds"]:
            return f"Holds: {words}."
        return f"Does not hold, by {money(proof['difference'], obj.currency)}: {words}."

    @admin.display(description="rows")
    def rows_link(self, obj):
        return changelist_link(NetworkSettlementRow, f"All {obj.row_count} rows", settlement=obj.pk)


@admin.register(NetworkSettlementRow)
class NetworkSettlementRowAdmin(ExactIdSearchMixin, ReadOnlyModelAdmin):
    """A settlement's transactions, in the order sent (filter by settlement from its page)."""

    institution_path = "settlement__institution"
    list_display = [
        "id",
        "settlement_link",
        "position",
        "network_transaction_id",
        "kind",
        "amount_display",
        "interchange_display",
    ]
    list_filter = ["kind", "settlement__network", "settlement__institution"]
    list_select_related = ["settlement"]
    search_fields = ["id", "settlement_id", "network_transaction_id"]
    search_help_text = "An exact row id, settlement id or network transaction id."
    fields = [
        "id",
        "settlement_link",
        "position",
        "network_transaction_id",
        "kind",
        "amount_display",
        "interchange_display",
    ]
    readonly_fields = fields

    settlement_link = link_column("settlement", description="settlement", ordering="settlement_id")
    amount_display = money_column(
        "amount", currency="settlement.currency", description="amount", ordering="amount"
    )
    interchange_display = money_column(
        "interchange", currency="settlement.currency", description="interchange"
    )
