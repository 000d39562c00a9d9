"""The Prometheus metrics every app counts (docs/operations.md, "Metrics"), defined once here so
that any app can import them (imports point down: core is below every app).

- One registry of TX's own (`REGISTRY`), not prometheus_client's default one: `/metrics`
  (`api.metrics`) answers the same series whether the process runs alone or under gunicorn.
- Under gunicorn every worker is a process of its own: with `PROMETHEUS_MULTIPROC_DIR` set
  before prometheus_client is imported, each value lives in a memory-mapped file of that
  directory and `/metrics` sums the files of every process (prometheus_client's multiprocess
  mode; gunicorn.conf.py removes a dead worker's live gauges). Without it (runserver, tests,
  commands) the values stay in the process.
- Labels are few and bounded: a route pattern, never a path; a decline code, never an id,
  key or card number. A label value comes from a fixed list in the code, never from a client.
- What a transaction decides is counted when it commits (`count_on_commit`): a refused or
  rolled-back operation counts nothing, and neither does a savepoint rolled back (an item of
  an independent batch that fails).
"""

from functools import partial

from django.db import transaction
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
)

# The `_created` series (when each child was first used) is shown in one process and not in
# multiprocess mode: off, so that every mode shows the same series.
disable_created_metrics()
REGISTRY = CollectorRegistry(auto_describe=True)

# --- HTTP (api.metrics.MetricsMiddleware)
HTTP_REQUESTS = Counter(
    "tx_http_requests",
    "HTTP requests answered, by route pattern, method, status and API version.",
    ["route", "method", "status", "version"],
    registry=REGISTRY,
)
HTTP_REQUEST_DURATION = Histogram(
    "tx_http_request_duration_seconds",
    "Time from the request reaching Django to its response, by route pattern, method and API "
    "version.",
    ["route", "method", "version"],
    # Few buckets (each is a write per request): from the API's fast reads to its slowest
    # batches.
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
    registry=REGISTRY,
)

# --- Money and cards
TRANSFERS_POSTED = Counter(
    "tx_transfers_posted",
    "Transfers posted: single (POST /transfers), batch (an item of a batch), two_phase (a "
    "pending transfer posted).",
    ["kind"],
    registry=REGISTRY,
)
TRANSFER_SINGLE = TRANSFERS_POSTED.labels(kind="single")
TRANSFER_BATCH = TRANSFERS_POSTED.labels(kind="batch")
TRANSFER_TWO_PHASE = TRANSFERS_POSTED.labels(kind="two_phase")

AUTHORIZATIONS = Counter(
    "tx_authorizations",
    "Card authorizations decided: approved (code empty) or declined by decline code.",
    ["decision", "code"],
    registry=REGISTRY,
)
AUTHORIZATION_APPROVED = AUTHORIZATIONS.labels(decision="approved", code="")

# --- Programs' decisioning endpoints (authorizations.services.program, docs/decisioning.md)
DECISIONING_CALLS = Counter(
    "tx_decisioning_calls",
    "Authorizations a program's endpoint was asked about, by mode (live, shadow) and outcome: "
    "approved, partial, declined (its answer), failed (late, non-2xx, malformed, unreachable), "
    "skipped (degraded: not called), busy (not called: the institution's calls in flight at "
    "their limit), stranded (no answer recorded: the recovery job decided).",
    ["mode", "outcome"],
    registry=REGISTRY,
)
DECISIONING_LATENCY = Histogram(
    "tx_decisioning_latency_seconds",
    "How long a program's endpoint took to answer, or to fail, per call.",
    ["mode"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0),
    registry=REGISTRY,
)

# --- The API's idempotency (api.idempotency)
IDEMPOTENT_REPLAYS = Counter(
    "tx_idempotent_replays",
    "Writes answered from a stored response (same Idempotency-Key, same request): nothing ran.",
    registry=REGISTRY,
)

# --- Webhooks (webhooks.services.deliveries), counted by the job workers that attempt them
WEBHOOK_ATTEMPTS = Counter(
    "tx_webhook_attempts",
    "Webhook delivery attempts, by outcome (succeeded: a 2xx; failed: anything else).",
    ["outcome"],
    registry=REGISTRY,
)
WEBHOOK_DELIVERIES = Counter(
    "tx_webhook_deliveries",
    "Webhook deliveries ended, by outcome (succeeded; failed: the retry window ran out or the "
    "endpoint was disabled).",
    ["outcome"],
    registry=REGISTRY,
)

# --- The database pools of the app processes (api.metrics.pool_stats_publish). Live gauges:
# summed over the processes alive now (a dead worker's are removed by gunicorn.conf.py).
_pool_gauge = partial(
    Gauge, labelnames=["database"], registry=REGISTRY, multiprocess_mode="livesum"
)
DB_POOL_SIZE = _pool_gauge("tx_db_pool_size", "Connections the pools hold (in use and idle).")
DB_POOL_AVAILABLE = _pool_gauge("tx_db_pool_available", "Idle connections in the pools.")
DB_POOL_MAX = _pool_gauge("tx_db_pool_max", "The most connections the pools may hold.")
DB_POOL_WAITING = _pool_gauge(
    "tx_db_pool_waiting", "Requests waiting for a connection of a pool now."
)
DB_POOL_WAITS = Counter(
    "tx_db_pool_waits",
    "Requests for a connection that had to wait (no idle connection in the pool).",
    ["database"],
    registry=REGISTRY,
)
DB_POOL_WAIT_SECONDS = Counter(
    "tx_db_pool_wait_seconds",
    "Time spent waiting for a connection of a pool.",
    ["database"],
    registry=REGISTRY,
)
DB_POOL_TIMEOUTS = Counter(
    "tx_db_pool_timeouts",
    "Requests for a connection that failed (DATABASE_POOL_TIMEOUT ran out): the pool was "
    "exhausted.",
    ["database"],
    registry=REGISTRY,
)


def count_on_commit(counter, amount: float = 1) -> None:
    """Add `amount` to `counter` (a metric with its labels) once the current transaction
    commits; at once outside a transaction. A rollback, of the transaction or of the savepoint
    this is called in, forgets it."""
    if amount:
        transaction.on_commit(partial(counter.inc, amount))


def authorization_declined(code: str):
    return AUTHORIZATIONS.labels(decision="declined", code=code)
