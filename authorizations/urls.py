from django.urls import path

from .apis import (
    AuthorizationDetailView,
    AuthorizationListView,
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
