"""The root URLconf: the admin and the two API versions, each the routes of every app (the
assembly lives here, above the layers: `api` and the apps below know nothing of the apps above
them, docs/architecture.md)."""

from django.contrib import admin
from django.urls import include, path

from accounts.urls import account_urls
from api import health, metrics
from api.urls import DocsView, SchemaView
from cards.urls import card_urls
from transfers.urls import transfer_urls


def version_urls(version: str):
    """The routes of one API version, every app's: mounted twice below (namespaces v1 and v2)."""
    return [
        path("", include("customers.urls")),
        path("", include(account_urls(version))),
        path("", include(card_urls(version))),
        path("", include(transfer_urls(version))),
        path("", include("transactions.urls")),
        path("", include("authorizations.urls")),
        path("", include("events.urls")),
        path("", include("monitoring.urls")),
        path("", include("webhooks.urls")),
        path("schema", SchemaView.as_view(api_version=version), name="schema"),
        path("docs", DocsView.as_view(url_name=f"{version}:schema"), name="docs"),
    ]


urlpatterns = [
    path("TX/v1/", include((version_urls("v1"), "v1"), namespace="v1")),
    path("TX/v2/", include((version_urls("v2"), "v2"), namespace="v2")),
    path("admin/", admin.site.urls),
    # Probes (docs/operations.md): no key, outside the API's versions.
    path("health/live", health.live, name="health-live"),
    path("health/ready", health.ready, name="health-ready"),
    # Prometheus (docs/operations.md): its own token or allowlist, not an API key.
    path("metrics", metrics.scrape, name="metrics"),
]

# JSON for every error outside DRF views too (unknown URLs, Django's own 500).
handler400 = "api.errors.handler400"
handler403 = "api.errors.handler403"
handler404 = "api.errors.handler404"
handler500 = "api.errors.handler500"
