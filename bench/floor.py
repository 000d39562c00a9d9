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

Two more routes measure a round trip to PostgreSQL. `GET /TX/floor/round-trip/accounts/
{accountId}` is the floor and one empty statement (`SELECT 1` through the request's connection):
the least any statement costs the process, in Django, psycopg and the kernel. `GET
/TX/floor/statement/accounts/{accountId}` is the floor and the one statement a read cannot do
without: the account read as the read reads it (`account_get`, its one statement and its
instances). A read answers the account's balances as they are, so no read is cheaper than that;
what the read costs beyond it is its key's check, its rate limit and its serializer.
"""

import json
from functools import cache
from pathlib import Path

from django.db import connection
from django.urls import path
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import Account
from accounts.selectors import account_get
from config.urls import handler400, handler403, handler404, handler500, urlpatterns

FLOOR_BODY = Path(__file__).resolve().parent.parent / ".data" / "bench" / "floor-body.json"


@cache
def _body() -> dict:
    return json.loads(FLOOR_BODY.read_text())


class FloorView(APIView):
    """The floor: no key, no permission, no database."""

    authentication_classes = ()
    permission_classes = ()

    def get(self, request, accountId):  # noqa: N803 (the read's path parameter)
        return Response(_body())


class FloorRoundTripView(FloorView):
    """The floor and one empty statement."""

    def get(self, request, accountId):  # noqa: N803 (the read's path parameter)
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
        return Response(_body())


_INSTITUTION = {}


def _institution_of(account_id: str):
    """The bench's accounts are one institution's: read with the first account a worker
    serves, once."""
    if "institution" not in _INSTITUTION:
        account = Account.objects.select_related("institution").get(pk=account_id)
        _INSTITUTION["institution"] = account.institution
    return _INSTITUTION["institution"]


class FloorStatementView(FloorView):
    """The floor and the read's own statement."""

    def get(self, request, accountId):  # noqa: N803 (the read's path parameter)
        account_get(institution=_institution_of(accountId), account_id=accountId)
        return Response(_body())


urlpatterns = [
    *urlpatterns,
    path("TX/floor/accounts/<str:accountId>", FloorView.as_view(), name="bench-floor"),
    path(
        "TX/floor/round-trip/accounts/<str:accountId>",
        FloorRoundTripView.as_view(),
        name="bench-floor-round-trip",
    ),
    path(
        "TX/floor/statement/accounts/<str:accountId>",
        FloorStatementView.as_view(),
        name="bench-floor-statement",
    ),
]

__all__ = ["handler400", "handler403", "handler404", "handler500", "urlpatterns"]
