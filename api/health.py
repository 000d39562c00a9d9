"""Health probes for load balancers and orchestrators, outside `/TX/`: no key, no rate limit,
nothing sensitive (docs/operations.md).

- `GET /health/live`: the process answers (200). Touches nothing else: a database outage must
  not get every app process restarted.
- `GET /health/ready`: the database answers and every migration of this code is applied (200),
  else 503 with which check failed. Once a process has seen its migrations applied it only
  asks the database (the migration graph is read once, not on every probe: the code a process
  runs does not change while it runs).
"""

from django.db import DatabaseError, connection
from django.db.migrations.loader import MigrationLoader
from django.http import JsonResponse
from django.views.decorators.http import require_GET

_migrations_applied = False


def _no_store(response: JsonResponse) -> JsonResponse:
    response["Cache-Control"] = "no-store"
    return response


@require_GET
def live(request):
    return _no_store(JsonResponse({"status": "ok"}))


@require_GET
def ready(request):
    checks = {"database": "ok", "migrations": "ok"}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["migrations"] = "ok" if _all_migrations_applied() else "pending"
    except DatabaseError:
        checks = {"database": "unreachable", "migrations": "unknown"}
    ready_ = all(value == "ok" for value in checks.values())
    return _no_store(
        JsonResponse(
            {"status": "ok" if ready_ else "unavailable", "checks": checks},
            status=200 if ready_ else 503,
        )
    )


def _all_migrations_applied() -> bool:
    """Every migration of the graph recorded as applied. Not the plan to the newest ones: a
    newest migration recorded makes that plan empty even when one before it is missing (a
    history edited by hand), which `migrate` itself would refuse."""
    global _migrations_applied
    if not _migrations_applied:
        loader = MigrationLoader(connection)
        _migrations_applied = set(loader.graph.nodes) <= set(loader.applied_migrations)
    return _migrations_applied
