from django.urls import path

from api.versions import V2

from .apis import (
    TransferBatchDetailView,
    TransferBatchListView,
    TransferDetailView,
    TransferListView,
    TransferReversalsView,
)


def transfer_urls(version: str):
    routes = [
        path("transfers", TransferListView.as_view(), name="transfers"),
        path("transfers/<id:transferId>", TransferDetailView.as_view(), name="transfer"),
        path(
            "transfers/<id:transferId>/reversals",
            TransferReversalsView.as_view(),
            name="transfer-reversals",
        ),
    ]
    if version == V2:  # v1, the legacy line, has no batches (docs/transfer-batches.md)
        routes += [
            path("transfer-batches", TransferBatchListView.as_view(), name="transfer-batches"),
            path(
                "transfer-batches/<id:batchId>",
                TransferBatchDetailView.as_view(),
                name="transfer-batch",
            ),
        ]
    return routes
