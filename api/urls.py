"""The API's own views (its schema and docs). The routes of one version, every app's, are
assembled in `config/urls.py` (`api` knows no domain app); their `<id:...>` path converter is
registered when the app is ready (`api.apps`)."""

import threading
from typing import ClassVar

from drf_spectacular.settings import patched_settings
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.response import Response

from api.ratelimit import SchemaRateThrottle


class SchemaView(SpectacularAPIView):
    """The OpenAPI document of one version, without a key: built once per process (the code it
    describes does not change while the process runs) and rate-limited per client address.

    Always in English: drf-spectacular's `?lang=` would build (and keep) a document per value."""

    content_negotiation_class = DefaultContentNegotiation
    authentication_classes = []
    permission_classes = []
    throttle_classes = [SchemaRateThrottle]

    # Version -> the generated document, shared by every request of the process.
    documents: ClassVar[dict[str, dict]] = {}
    _building = threading.Lock()

    @extend_schema(exclude=True)  # not an operation of the API it documents
    def get(self, request, *args, **kwargs):
        version = self.api_version or request.version
        return Response(
            data=self.document(request, version),
            headers={
                "Content-Disposition": (
                    f'inline; filename="{self._get_filename(request, version)}"'
                )
            },
        )

    def document(self, request, version: str) -> dict:
        document = self.documents.get(version)
        if document is None:
            with self._building:  # concurrent first requests build it once
                document = self.documents.get(version)
                if document is None:
                    generator = self.generator_class(
                        urlconf=self.urlconf, api_version=version, patterns=self.patterns
                    )
                    with patched_settings(self.custom_settings):
                        document = generator.get_schema(request=request, public=self.serve_public)
                    self.documents[version] = document
        return document


class DocsView(SpectacularSwaggerView):
    """Swagger UI (a page that loads the schema): rate-limited with the schema, per address."""

    content_negotiation_class = DefaultContentNegotiation
    authentication_classes = []
    permission_classes = []
    throttle_classes = [SchemaRateThrottle]
