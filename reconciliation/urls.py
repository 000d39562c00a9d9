from django.urls import path

from api.versions import V2

from .apis import BankStatementDetailView, BankStatementLineListView, BankStatementListView
from .settlement_apis import (
    NetworkSettlementDetailView,
    NetworkSettlementListView,
    NetworkSettlementRowListView,
)


def reconciliation_urls(version: str):
    """v2 only (docs/reconciliation.md)."""
    if version != V2:
        return []
    return [
        path("bank-statements", BankStatementListView.as_view(), name="bank-statements"),
        path(
            "bank-statements/<id:statementId>",
            BankStatementDetailView.as_view(),
            name="bank-statement",
        ),
        path(
            "bank-statements/<id:statementId>/lines",
            BankStatementLineListView.as_view(),
            name="bank-statement-lines",
        ),
        path(
            "network-settlements", NetworkSettlementListView.as_view(), name="network-settlements"
        ),
        path(
            "network-settlements/<id:settlementId>",
            NetworkSettlementDetailView.as_view(),
            name="network-settlement",
        ),
        path(
            "network-settlements/<id:settlementId>/rows",
            NetworkSettlementRowListView.as_view(),
            name="network-settlement-rows",
        ),
    ]
