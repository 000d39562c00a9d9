"""The routes of one API version. `config/urls.py` mounts this twice: namespaces v1 and v2."""

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.negotiation import DefaultContentNegotiation


class SchemaView(SpectacularAPIView):
    content_negotiation_class = DefaultContentNegotiation
    authentication_classes = []
    permission_classes = []
    throttle_classes = []


class DocsView(SpectacularSwaggerView):
    content_negotiation_class = DefaultContentNegotiation
    authentication_classes = []
    permission_classes = []
    throttle_classes = []


def version_urls(version: str):
    from cards.urls import card_urls

    return [
        path("", include("customers.urls")),
        path("", include("accounts.urls")),
        path("", include(card_urls(version))),
        path("", include("transfers.urls")),
        path("", include("transactions.urls")),
        path("", include("authorizations.urls")),
        path("", include("events.urls")),
        path("", include("monitoring.urls")),
        path("", include("webhooks.urls")),
        path("schema", SchemaView.as_view(api_version=version), name="schema"),
        path("docs", DocsView.as_view(url_name=f"{version}:schema"), name="docs"),
    ]
