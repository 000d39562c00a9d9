from django.urls import path

from api.versions import V2

from .apis import (
    DecisioningEndpointDetailView,
    DecisioningEndpointListView,
    SecretRotationView,
    SelfTestView,
)


def decisioning_urls(version: str):
    """v2 only: v1, the legacy line, has no decisioning endpoints (docs/decisioning.md)."""
    if version != V2:
        return []
    return [
        path(
            "decisioning-endpoints",
            DecisioningEndpointListView.as_view(),
            name="decisioning-endpoints",
        ),
        path(
            "decisioning-endpoints/<id:endpointId>",
            DecisioningEndpointDetailView.as_view(),
            name="decisioning-endpoint",
        ),
        path(
            "decisioning-endpoints/<id:endpointId>/secret-rotations",
            SecretRotationView.as_view(),
            name="decisioning-endpoint-secret-rotations",
        ),
        path(
            "decisioning-endpoints/<id:endpointId>/tests",
            SelfTestView.as_view(),
            name="decisioning-endpoint-tests",
        ),
    ]
