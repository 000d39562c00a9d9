from django.urls import path

from .apis import AccountTransactionsView, TransactionDetailView

urlpatterns = [
    path(
        "accounts/<str:accountId>/transactions",
        AccountTransactionsView.as_view(),
        name="account-transactions",
    ),
    path("transactions/<str:transactionId>", TransactionDetailView.as_view(), name="transaction"),
]
