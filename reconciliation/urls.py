from django.urls import path

from api.versions import V2

from .apis import BankStatementDetailView, BankStatementLineListView, BankStatementListView


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
    ]
