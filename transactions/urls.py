from django.urls import path

from .apis import AccountTransactionsView, CardTransactionsView, TransactionDetailView
from .statement_views import AccountMonthlyStatementView, AccountStatementView

urlpatterns = [
    path(
        "accounts/<id:accountId>/transactions",
        AccountTransactionsView.as_view(),
        name="account-transactions",
    ),
    path(
        "cards/<id:cardId>/transactions",
        CardTransactionsView.as_view(),
        name="card-transactions",
    ),
    path("transactions/<id:transactionId>", TransactionDetailView.as_view(), name="transaction"),
    path(
        "accounts/<id:accountId>/statements",
        AccountStatementView.as_view(),
        name="account-statements",
    ),
    path(
        "accounts/<id:accountId>/statements/<str:month>",
        AccountMonthlyStatementView.as_view(),
        name="account-statement-month",
    ),
]
