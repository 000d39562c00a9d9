from django.urls import path

from .apis import AccountTransactionsView, CardTransactionsView, TransactionDetailView

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
]
