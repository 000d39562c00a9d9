from django.contrib import admin
from django.urls import include, path

from api.urls import version_urls

urlpatterns = [
    path("TX/v1/", include((version_urls("v1"), "v1"), namespace="v1")),
    path("TX/v2/", include((version_urls("v2"), "v2"), namespace="v2")),
    path("admin/", admin.site.urls),
]

# JSON for every error outside DRF views too (unknown URLs, Django's own 500).
handler400 = "api.errors.handler400"
handler403 = "api.errors.handler403"
handler404 = "api.errors.handler404"
handler500 = "api.errors.handler500"
