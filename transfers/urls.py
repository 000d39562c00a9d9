from django.urls import path

from .apis import TransferDetailView, TransferListView, TransferReversalsView

urlpatterns = [
    path("transfers", TransferListView.as_view(), name="transfers"),
    path("transfers/<id:transferId>", TransferDetailView.as_view(), name="transfer"),
    path(
        "transfers/<id:transferId>/reversals",
        TransferReversalsView.as_view(),
        name="transfer-reversals",
    ),
]
