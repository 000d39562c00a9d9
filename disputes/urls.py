from django.urls import path

from api.versions import V2

from .apis import DisputeDetailView, DisputeListView, NetworkMessagesView, TransitionsView


def dispute_urls(version: str):
    """v2 only: v1, the legacy line, has no disputes (docs/disputes.md)."""
    if version != V2:
        return []
    return [
        path("disputes", DisputeListView.as_view(), name="disputes"),
        path("disputes/<id:disputeId>", DisputeDetailView.as_view(), name="dispute"),
        path(
            "disputes/<id:disputeId>/transitions",
            TransitionsView.as_view(),
            name="dispute-transitions",
        ),
        path(
            "disputes/<id:disputeId>/network-messages",
            NetworkMessagesView.as_view(),
            name="dispute-network-messages",
        ),
    ]
