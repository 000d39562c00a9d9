from django.urls import path

from api.versions import V2

from .apis import (
    AuthorizationDetailView,
    AuthorizationListView,
    IncrementsView,
    PresentmentsView,
    ReturnDetailView,
    ReturnListView,
    ReversalsView,
)

urlpatterns = [
    path("card-authorizations", AuthorizationListView.as_view(), name="card-authorizations"),
    path(
        "card-authorizations/<id:authorizationId>",
        AuthorizationDetailView.as_view(),
        name="card-authorization",
    ),
    path(
        "card-authorizations/<id:authorizationId>/presentments",
        PresentmentsView.as_view(),
        name="card-authorization-presentments",
    ),
    path(
        "card-authorizations/<id:authorizationId>/reversals",
        ReversalsView.as_view(),
        name="card-authorization-reversals",
    ),
    path("card-returns", ReturnListView.as_view(), name="card-returns"),
    path("card-returns/<id:returnId>", ReturnDetailView.as_view(), name="card-return"),
]


def authorization_urls(version: str):
    """Both versions' routes, and v2's incremental authorizations (v1 is the legacy line:
    docs/card-transactions.md)."""
    if version != V2:
        return urlpatterns
    return [
        *urlpatterns,
        path(
            "card-authorizations/<id:authorizationId>/increments",
            IncrementsView.as_view(),
            name="card-authorization-increments",
        ),
    ]
