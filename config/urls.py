"""The root URLconf: the admin and the two API versions, each the routes of every app (the
assembly lives here, above the layers: `api` and the apps below know nothing of the apps above
them, docs/architecture.md)."""

from django.contrib import admin
from django.urls import include, path

import api.errors
import customers.urls
import events.urls
import monitoring.urls
import transactions.urls
import webhooks.urls
from accounts.urls import account_urls
from api import health, metrics
from api.urls import DocsView, SchemaView
from authorizations.urls import authorization_urls
from backoffice.errors import page as errors_page
from cards.urls import card_urls
from decisioning.urls import decisioning_urls
from disputes.urls import dispute_urls
from interest.urls import interest_urls
from payments.urls import payment_urls
from reconciliation.urls import reconciliation_urls
from transfers.urls import transfer_urls

# The back office's pages (docs/back-office.md).
ADMIN_PREFIX = "/admin/"


def version_urls(version: str):
    """The routes of one API version, every app's: mounted twice below (namespaces v1 and v2).
    One flat list, not an `include` per app: each include would be entered for every request
    (they have no prefix of their own) and, when none of its routes matched, raise and list
    them, 15-35 us of a request."""
    return [
        *customers.urls.urlpatterns,
        *account_urls(version),
        *card_urls(version),
        *transfer_urls(version),
        *transactions.urls.urlpatterns,
        *authorization_urls(version),
        *events.urls.urlpatterns,
        *monitoring.urls.urlpatterns,
        *webhooks.urls.urlpatterns,
        *decisioning_urls(version),
        *dispute_urls(version),
        *interest_urls(version),
        *payment_urls(version),
        *reconciliation_urls(version),
        path("schema", SchemaView.as_view(api_version=version), name="schema"),
        path("docs", DocsView.as_view(url_name=f"{version}:schema"), name="docs"),
    ]


urlpatterns = [
    path("TX/v1/", include((version_urls("v1"), "v1"), namespace="v1")),
    path("TX/v2/", include((version_urls("v2"), "v2"), namespace="v2")),
    path(ADMIN_PREFIX.lstrip("/"), admin.site.urls),
    # Probes (docs/operations.md): no key, outside the API's versions.
    path("health/live", health.live, name="health-live"),
    path("health/ready", health.ready, name="health-ready"),
    # Prometheus (docs/operations.md): its own token or allowlist, not an API key.
    path("metrics", metrics.scrape, name="metrics"),
]


# Errors outside DRF views (unknown URLs, a refused admin page, Django's own 500): the admin's
# paths get the back office's pages, every other path the API's JSON, as an API client expects.
def handler400(request, exception=None):
    if request.path.startswith(ADMIN_PREFIX):
        return errors_page(request, 400)
    return api.errors.handler400(request, exception)


def handler403(request, exception=None):
    if request.path.startswith(ADMIN_PREFIX):
        return errors_page(request, 403)
    return api.errors.handler403(request, exception)


def handler404(request, exception=None):
    if request.path.startswith(ADMIN_PREFIX):
        return errors_page(request, 404)
    return api.errors.handler404(request, exception)


def handler500(request):
    if request.path.startswith(ADMIN_PREFIX):
        return errors_page(request, 500)
    return api.errors.handler500(request)
