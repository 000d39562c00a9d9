from django.urls import path

from api.versions import V2

from .apis.matching import (
    BreakDetailView,
    BreakListView,
    ExpectedPaymentCancellationsView,
    ExpectedPaymentDetailView,
    ExpectedPaymentListView,
    ReconciliationListView,
    RuleListView,
    RunMatchListView,
)
from .apis.settlements import (
    NetworkSettlementDetailView,
    NetworkSettlementListView,
    NetworkSettlementProofView,
    NetworkSettlementRowListView,
)
from .apis.statements import (
    BankStatementDetailView,
    BankStatementLineListView,
    BankStatementListView,
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
        path(
            "network-settlements/<id:settlementId>/proof",
            NetworkSettlementProofView.as_view(),
            name="network-settlement-proof",
        ),
        path("expected-payments", ExpectedPaymentListView.as_view(), name="expected-payments"),
        path(
            "expected-payments/<id:expectedPaymentId>",
            ExpectedPaymentDetailView.as_view(),
            name="expected-payment",
        ),
        path(
            "expected-payments/<id:expectedPaymentId>/cancellations",
            ExpectedPaymentCancellationsView.as_view(),
            name="expected-payment-cancellations",
        ),
        path("reconciliation-rules", RuleListView.as_view(), name="reconciliation-rules"),
        path("reconciliations", ReconciliationListView.as_view(), name="reconciliations"),
        path(
            "reconciliations/<id:reconciliationId>/matches",
            RunMatchListView.as_view(),
            name="reconciliation-matches",
        ),
        path("reconciliation-breaks", BreakListView.as_view(), name="reconciliation-breaks"),
        path(
            "reconciliation-breaks/<id:breakId>",
            BreakDetailView.as_view(),
            name="reconciliation-break",
        ),
    ]
