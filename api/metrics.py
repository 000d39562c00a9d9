"""Prometheus metrics over HTTP (docs/operations.md, "Metrics"): `GET /metrics`, the request
middleware and what is read at scrape time. The metrics themselves are defined in `core.metrics`.

- `/metrics` is outside `/TX/` and needs no API key: it has its own guard. METRICS_TOKEN (a
  bearer token, compared in constant time) and/or METRICS_ALLOWED_IPS (the client address as
  the API reads it, TRUSTED_PROXIES included); both must pass when both are set. With neither
  the endpoint is off (404, like any unknown URL): not even loopback is trusted by default, as
  a reverse proxy on the same machine would make every client look local.
- `MetricsMiddleware` counts and times every request by its route pattern (never its path: ids
  would make a series per customer), method, status and API version. It is on the hot path: a
  dict lookup for the labels and two writes, no query.
- At scrape time one query reads the job queues (procrastinate's table) and the connections of
  the database; the database pools of the app processes are published by each process when a
  request ends (at most once a second), as a scrape reaches one process only.
"""

import hashlib
import hmac
import time

from django.conf import settings
from django.core.signals import request_finished
from django.db import DatabaseError, connections
from django.http import HttpResponse
from django.views.decorators.http import require_GET
from procrastinate.contrib.django import app as procrastinate_app
from prometheus_client import CONTENT_TYPE_PLAIN_0_0_4, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.values import ValueClass

from api.client_ip import address_in, client_address
from api.errors import error_response
from core import exceptions as tx
from core import metrics

# --- The endpoint


@require_GET
def scrape(request):
    refusal = _refusal(request)
    if refusal is not None:
        return refusal
    # The text format every Prometheus reads (what prometheus_client's own server answers).
    response = HttpResponse(generate_latest(_Scrape()), content_type=CONTENT_TYPE_PLAIN_0_0_4)
    response["Cache-Control"] = "no-store"
    return response


def _refusal(request):
    token, allowed = settings.METRICS_TOKEN, settings.METRICS_ALLOWED_IPS
    if not token and not allowed:
        return error_response(request, tx.NotFound())
    if allowed:
        if not address_in(client_address(request), allowed):
            return error_response(
                request, tx.IpNotAllowed("Requests from this address may not read the metrics.")
            )
    if token:
        scheme, _, given = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
        # Digests of equal length: the comparison's time says nothing of the token's length.
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            hashlib.sha256(given.strip().encode()).digest(),
            hashlib.sha256(token.encode()).digest(),
        ):
            response = error_response(
                request, tx.AuthenticationFailed("The metrics token is required (Bearer).")
            )
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
            return response
    return None


class _Scrape:
    """What one scrape shows: TX's metrics (every process's under gunicorn) and what is read
    from the database now. `generate_latest` only asks for `collect()`."""

    def collect(self):
        # The mode prometheus_client took when imported (PROMETHEUS_MULTIPROC_DIR set then).
        if ValueClass._multiprocess:
            # Every process's files: the values of this one are among them.
            yield from MultiProcessCollector(None).collect()
        else:
            yield from metrics.REGISTRY.collect()
        yield from _database_metrics()


# --- Read at scrape time: one query on the primary (the queue must not lag behind a replica).

_SCRAPE_SQL = """
SELECT 'job', queue_name,
       CASE WHEN status = 'todo' AND scheduled_at > now() THEN 'scheduled' ELSE status::text END,
       count(*)
  FROM procrastinate_jobs
 WHERE status IN ('todo', 'doing')
 GROUP BY 2, 3
UNION ALL
SELECT 'connection', coalesce(state, 'unknown'), '', count(*)
  FROM pg_stat_activity
 WHERE datname = current_database()
 GROUP BY 2
UNION ALL
SELECT 'max_connections', '', '', current_setting('max_connections')::bigint
"""
# Always shown, 0 when empty: an alert on a queue must not see its series vanish.
_JOB_STATUSES = ("todo", "scheduled", "doing")


def _database_metrics():
    up = GaugeMetricFamily(
        "tx_database_up", "1 when the scrape could read the database (the queries below), else 0."
    )
    try:
        with connections["default"].cursor() as cursor:
            cursor.execute(_SCRAPE_SQL)
            rows = cursor.fetchall()
    except DatabaseError:
        up.add_metric([], 0)
        yield up
        return
    up.add_metric([], 1)
    yield up
    jobs = GaugeMetricFamily(
        "tx_job_queue_jobs",
        "Background jobs by queue and status: todo (due now), scheduled (todo, due later: "
        "retries waiting out their backoff), doing (running).",
        labels=["queue", "status"],
    )
    connections_ = GaugeMetricFamily(
        "tx_db_connections",
        "Connections to this database now (every process of every machine), by state.",
        labels=["state"],
    )
    max_connections = GaugeMetricFamily(
        "tx_db_max_connections", "PostgreSQL's max_connections (the server's, every database)."
    )
    depth: dict[tuple[str, str], int] = {}
    for kind, name, status, count in rows:
        if kind == "job":
            depth[(name, status)] = count
        elif kind == "connection":
            connections_.add_metric([name], count)
        else:
            max_connections.add_metric([], count)
    for queue in sorted({queue for queue, _ in depth} | _task_queues()):
        for status in _JOB_STATUSES:
            jobs.add_metric([queue, status], depth.get((queue, status), 0))
    yield jobs
    yield connections_
    yield max_connections


def _task_queues() -> set[str]:
    """The queues of every task this code defines: each shown even while empty."""
    return {task.queue for task in procrastinate_app.tasks.values()}


# --- Requests

_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_API_VERSIONS = ("v1", "v2")
UNMATCHED = "unmatched"  # no route: unknown URLs (scanners) share one series


class MetricsMiddleware:
    """Counts and times every request (first in MIDDLEWARE: the time includes every other
    middleware). The labels' children are kept per label set, so a request costs a dict
    lookup, a counter increment and a histogram observation."""

    def __init__(self, get_response):
        self.get_response = get_response
        self._children: dict[tuple, tuple] = {}
        if _pooled_aliases():
            request_finished.connect(pool_stats_publish, dispatch_uid="tx.metrics.pools")

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        elapsed = time.perf_counter() - started
        match = getattr(request, "resolver_match", None)
        method = request.method if request.method in _METHODS else "other"  # a client's word
        key = (match.route if match is not None else None, method, response.status_code)
        children = self._children.get(key)
        if children is None:
            children = self._children[key] = _children_for(*key)
        children[0].inc()
        children[1].observe(elapsed)
        return response


def _children_for(route: str | None, method: str, status: int):
    route, version = _route_and_version(route)
    return (
        metrics.HTTP_REQUESTS.labels(route=route, method=method, status=status, version=version),
        metrics.HTTP_REQUEST_DURATION.labels(route=route, method=method, version=version),
    )


def _route_and_version(route: str | None) -> tuple[str, str]:
    """A URL pattern's route as a label: `TX/v2/accounts/<id:account_id>` ->
    (`/TX/<version>/accounts/<id:account_id>`, `v2`), the admin's many routes as one."""
    if route is None:
        return UNMATCHED, ""
    for version in _API_VERSIONS:
        prefix = f"TX/{version}/"
        if route.startswith(prefix):
            return f"/TX/<version>/{route[len(prefix) :]}", version
    if route.startswith("admin/"):
        return "/admin/", ""
    return f"/{route}", ""


# --- The database pools of this process

_POOL_PUBLISH_SECONDS = 1.0
_last_published = 0.0
# Per pool: the cumulative counts last published, to add only what is new.
_published_counts: dict[tuple[str, int], dict[str, int]] = {}


def _pooled_aliases() -> list[str]:
    return [
        alias
        for alias, database in settings.DATABASES.items()
        if database.get("OPTIONS", {}).get("pool")
    ]


def pool_stats_publish(**kwargs) -> None:
    """Publish this process's pool statistics (psycopg_pool `get_stats`), at most once a
    second: when a request has ended, its connection back in the pool (Django's own
    `request_finished` handler, connected first, returned it)."""
    global _last_published
    now = time.monotonic()
    if now - _last_published < _POOL_PUBLISH_SECONDS:
        return
    _last_published = now
    for alias in _pooled_aliases():
        pool = connections[alias].pool
        if pool is not None:
            pool_publish(alias, pool)


def pool_publish(alias: str, pool) -> None:
    """One psycopg_pool pool's statistics as the `tx_db_pool_*` metrics of `alias`: its gauges
    set, its counters advanced by what the pool counted since the last time."""
    stats = pool.get_stats()
    metrics.DB_POOL_SIZE.labels(alias).set(stats.get("pool_size", 0))
    metrics.DB_POOL_AVAILABLE.labels(alias).set(stats.get("pool_available", 0))
    metrics.DB_POOL_MAX.labels(alias).set(stats.get("pool_max", 0))
    metrics.DB_POOL_WAITING.labels(alias).set(stats.get("requests_waiting", 0))
    last = _published_counts.setdefault((alias, id(pool)), {})
    for key, counter, scale in (
        ("requests_queued", metrics.DB_POOL_WAITS, 1),
        ("requests_wait_ms", metrics.DB_POOL_WAIT_SECONDS, 1000),
        ("requests_errors", metrics.DB_POOL_TIMEOUTS, 1),
    ):
        value = stats.get(key, 0)
        if value > last.get(key, 0):
            counter.labels(alias).inc((value - last.get(key, 0)) / scale)
        last[key] = value
