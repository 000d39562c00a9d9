"""The framework's floor for `bench/transfers.py --floor` (issue 53; bench/README.md, "The
floor"): a bare DRF view that answers the authenticated read's JSON with no authentication, no
permission and no database, served by the same gunicorn configuration as the service.

The service runs with `DJANGO_SETTINGS_MODULE=bench.floor_settings` for such a run: production
settings with this module as the URLconf, the service's every route plus one,
`GET /TX/floor/accounts/{accountId}`, under `/TX/` so it passes through the API's middleware as
the read does. Nothing of it is in the service's own URLconf: no deployment has the route.

The body is the read's own: the benchmark writes a real `GET /TX/v2/accounts/{id}` answer to
FLOOR_BODY before it drives the floor, and each worker reads it once. So the floor and the read
render the same JSON, and what the read costs beyond the floor is its key's check, the account's
query and the serializer.
"""

import json
from functools import cache
from pathlib import Path

from django.urls import path
from rest_framework.response import Response
from rest_framework.views import APIView

from config.urls import handler400, handler403, handler404, handler500, urlpatterns

FLOOR_BODY = Path(__file__).resolve().parent.parent / ".data" / "bench" / "floor-body.json"


@cache
def _body() -> dict:
    return json.loads(FLOOR_BODY.read_text())


class FloorView(APIView):
    authentication_classes = ()
    permission_classes = ()

    def get(self, request, accountId):  # noqa: N803 (the read's path parameter)
        return Response(_body())


urlpatterns = [
    *urlpatterns,
    path("TX/floor/accounts/<str:accountId>", FloorView.as_view(), name="bench-floor"),
]

__all__ = ["handler400", "handler403", "handler404", "handler500", "urlpatterns"]
