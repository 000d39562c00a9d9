from django.urls import path

from .apis import AccountTransactionsView, CardTransactionsView, TransactionDetailView

urlpatterns = [
    path(
        "accounts/<str:accountId>/transactions",
        AccountTransactionsView.as_view(),
        name="account-transactions",
    ),
    path(
        "cards/<str:cardId>/transactions",
        CardTransactionsView.as_view(),
        name="card-transactions",
    ),
    path("transactions/<str:transactionId>", TransactionDetailView.as_view(), name="transaction"),
]
