"""Rate limits (429 `rate_limited` with `Retry-After`), counted in fixed windows shared by every
app process. docs/api-contract.md says what a client sees; docs/configuration.md the settings.

Per window of RATE_LIMIT_WINDOW_SECONDS (0 disables a limit):
- each API key: RATE_LIMIT_REQUESTS authenticated requests;
- each institution, all its keys together: RATE_LIMIT_INSTITUTION_REQUESTS;
- each client address (`api.client_ip`, so TRUSTED_PROXIES are honoured; an IPv6 address counts
  for its /64, which one subscriber usually holds whole): RATE_LIMIT_FAILED_AUTH_REQUESTS refused
  authentications, 401 `authentication_failed` and 403 `ip_not_allowed` alike. An address that
  has used them up gets 429 on every request until the window ends, whatever key it presents,
  valid or not: keys cannot be tried from anywhere without limit, and the answer to a blocked
  address says nothing about the key it sent;
- each client address: RATE_LIMIT_SCHEMA_REQUESTS requests for the schema documents.

Cost: `ApiKeyAuthentication` calls `count_refusal` when it refuses (the address's counter: one
upsert, every time) or `count_request` when it accepts. An accepted request is counted by this
process first (`LocalCounters`) and written to the shared counters in batches:

- per bucket (`key:<id>`, `institution:<id>`; and the read of `refused:<address>`) a process keeps
  the shared count it last saw and its own hits not yet written ("pending"). A request adds 1 to
  the pending of its key's and institution's buckets and is decided against seen + pending.
- It flushes, one statement (the same upsert, adding the pending amounts and returning the new
  shared counts, joined to the read of the address's refusals), when a pending reaches
  RATE_LIMIT_FLUSH_EVERY, when a bucket's last flush is RATE_LIMIT_FLUSH_SECONDS old or more,
  and on a bucket's first request in a window (so that it starts from the shared count). A
  flush writes every bucket of the request at once, and so it is decided on exact counts.
  With RATE_LIMIT_FLUSH_EVERY=1 every request flushes: exactly one shared counter.
- The bound, per key (or institution) and window, with P app processes: at most
  P x (FLUSH_EVERY - 1) requests are granted beyond the limit. Why: a process holds its lock
  from decision to flush, so it acts as one sequence whatever its threads (alone, it is
  exact). Number the written requests by the shared count their flush returned: at most
  `limit` are granted with numbers up to the limit. Beyond it, a process grants only the
  non-flushing requests of its first batch whose flush returns more than the limit (at most
  FLUSH_EVERY - 1: the flushing request sees that count and is refused, as is every later one
  in the window) or, if none did, requests still pending (at most FLUSH_EVERY - 1 again). An
  upper bound: reached only if every process has a batch under way as the count crosses the
  limit. FLUSH_SECONDS adds nothing to it (a time flush is one flush more); it bounds how
  stale a process's view is: it sees the others' counts at most FLUSH_SECONDS late, so the 429
  reaches a key within FLUSH_EVERY - 1 requests or FLUSH_SECONDS in each process. A process
  that starts within the window (a restart) counts as one more P.
- The address's refusals: counted at once, one statement each (refusals are rare and the block
  must be prompt), so a key-guessing address is limited exactly. The process that counted a
  refusal knows the new count at once; another process sees an address block at its next flush
  for that address, within FLUSH_SECONDS: until then a valid key from a blocked address can
  still be served there.
- Pending hits are written when a gunicorn worker ends gracefully (`flush`, from
  gunicorn.conf.py's `worker_exit`) and lost when a process is killed (at most FLUSH_EVERY - 1
  per bucket); they are dropped when their window ends (they can no longer refuse anything):
  the counters are disposable already (UNLOGGED, below). Memory: buckets of ended windows are
  dropped; at most MAX_BUCKETS are kept (when full, those with nothing pending are dropped,
  which costs them a flush later; if all have pending hits, all are dropped, as if the process
  restarted).

The schema documents' counter (no key, any address: not for a local table that anyone could
fill) is one statement per request, as are refusals, and so is each API key's counter of
decisioning self-tests (`self-tests:key:<id>`, DECISIONING_SELF_TESTS_PER_KEY: each is a call of
a program, docs/decisioning.md): `count_exactly`. Nothing is read first and written later, so
concurrent requests never lose a count.

Backends, chosen by settings.RATE_LIMIT_BACKEND (from CACHE_URL's scheme), both below the
local counters:
- `postgresql` (default): table `api_rate_counter`, an ordinary Django model (`RateCounter`,
  so that migrations and `makemigrations --check` know it and the purge is an ORM delete),
  made UNLOGGED by its migration (0005_rate_counters): counters are disposable, so their writes
  skip the WAL; a crash empties the table, which at worst grants one fresh window. Each step
  is one `INSERT ... ON CONFLICT DO UPDATE ... RETURNING` over all its counters, in bucket
  order (so two statements never wait on each other's rows in opposite orders), joined to the
  read of the address's counter. It runs in autocommit, before the request's own transaction,
  so a counter row is locked only for the statement (which is why a process may hold its lock
  across a flush). `rate_counters_purge` (hourly job) deletes ended windows.
- `redis`: one pipeline per step (INCRBY + EXPIREAT per counter, GET per read): one round trip;
  keys expire by themselves.
"""

import ipaddress
import math
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from rest_framework.throttling import BaseThrottle

from api.client_ip import client_address
from api.models import RateCounter
from core import pg_array
from core.exceptions import RateLimited

KEY_LIMITED = "Too many requests for this API key. Retry after the time in Retry-After."
INSTITUTION_LIMITED = (
    "Too many requests for this institution's API keys. Retry after the time in Retry-After."
)
ADDRESS_LIMITED = (
    "Too many failed authentications from this address. Retry after the time in Retry-After."
)
SCHEMA_LIMITED = (
    "Too many requests for the API documents from this address. "
    "Retry after the time in Retry-After."
)


class Backend(Protocol):
    def count(
        self, *, window_start: int, window: int, hits: Mapping[str, int], reads: Sequence[str]
    ) -> dict[str, int]:
        """Add its amount to each bucket of `hits` and read each bucket of `reads`, in the
        window that starts at `window_start`, in one statement or round trip. Returns every
        bucket's count (after the addition for `hits`; 0 for a read bucket nobody counted yet)."""


# The one statement of a counting step. Static SQL: the buckets and amounts are bound as arrays.
_COUNT_SQL = """
WITH hits AS (
    INSERT INTO api_rate_counter AS counter (bucket, window_start, count)
    SELECT bucket, %(window_start)s, amount
    FROM unnest(%(hits)s::varchar[], %(amounts)s::integer[]) AS hit (bucket, amount)
    ORDER BY bucket
    ON CONFLICT (bucket, window_start) DO UPDATE SET count = counter.count + EXCLUDED.count
    RETURNING counter.bucket, counter.count
)
SELECT bucket, count FROM hits
UNION ALL
SELECT bucket, count FROM api_rate_counter
WHERE window_start = %(window_start)s AND bucket = ANY(%(reads)s::varchar[])
"""


class PostgresBackend:
    def count(self, *, window_start, window, hits, reads):
        buckets = sorted(hits)
        with connection.cursor() as cursor:
            cursor.execute(
                _COUNT_SQL,
                {
                    "window_start": window_start,
                    "hits": pg_array.literal(buckets),
                    "amounts": pg_array.literal([hits[bucket] for bucket in buckets]),
                    "reads": pg_array.literal(reads),
                },
            )
            counts = dict(cursor.fetchall())
        return {bucket: counts.get(bucket, 0) for bucket in [*hits, *reads]}


class RedisBackend:
    """Counters in the Redis that CACHE_URL names (redis-py, installed with the Redis cache)."""

    def __init__(self, client):
        self.client = client

    def count(self, *, window_start, window, hits, reads):
        # Kept one window longer than needed: app servers' clocks and Redis's may differ a bit.
        expire_at = window_start + 2 * window
        pipeline = self.client.pipeline(transaction=False)
        for bucket, amount in hits.items():
            pipeline.incr(_redis_key(bucket, window_start), amount)
            pipeline.expireat(_redis_key(bucket, window_start), expire_at)
        for bucket in reads:
            pipeline.get(_redis_key(bucket, window_start))
        replies = pipeline.execute()
        counts = {bucket: int(replies[2 * index]) for index, bucket in enumerate(hits)}
        for index, bucket in enumerate(reads):
            counts[bucket] = int(replies[2 * len(hits) + index] or 0)
        return counts


def _redis_key(bucket: str, window_start: int) -> str:
    return f"tx:ratelimit:{bucket}:{window_start}"


@lru_cache(maxsize=2)
def redis_client(url: str):
    try:
        import redis
    except ImportError as error:
        raise ImproperlyConfigured(
            "CACHE_URL names Redis but the `redis` package is not installed."
        ) from error
    return redis.Redis.from_url(url)


def backend() -> Backend:
    if settings.RATE_LIMIT_BACKEND == "redis":
        return RedisBackend(redis_client(settings.CACHE_URL))
    if settings.RATE_LIMIT_BACKEND == "postgresql":
        return PostgresBackend()
    raise ImproperlyConfigured(f"Unknown RATE_LIMIT_BACKEND {settings.RATE_LIMIT_BACKEND!r}.")


# --- This process's counts (the module docstring: batches and their bound)

MAX_BUCKETS = 10_000


@dataclass
class _Bucket:
    seen: int = 0  # the shared count, as the last flush (or refusal) returned it
    pending: int = 0  # hits counted here, not yet written
    flushed_at: float = -math.inf  # time.time() of that flush: never, for a new bucket


class LocalCounters:
    """One process's counts of the shared counters' buckets, written to them in batches.

    One lock, held from a request's decision through its flush: the process's threads count as
    one sequence, which the bound needs (the flush's statement runs in autocommit, so it holds
    no row lock longer than itself)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._buckets: dict[tuple[str, int], _Bucket] = {}
        self._window_start = 0  # the newest window counted

    def count(
        self,
        backend: Backend,
        *,
        now: float,
        window_start: int,
        window: int,
        hits: Sequence[str],
        reads: Sequence[str],
    ) -> dict[str, int]:
        """Count one request in each bucket of `hits`; return every bucket's count as this
        process knows it (shared count seen + pending), flushing first when one is due."""
        flush_every = settings.RATE_LIMIT_FLUSH_EVERY
        flush_seconds = settings.RATE_LIMIT_FLUSH_SECONDS
        with self._lock:
            if window_start > self._window_start:
                # Ended windows' counts can no longer refuse anything: their pending is dropped.
                self._buckets = {
                    key: state for key, state in self._buckets.items() if key[1] >= window_start
                }
                self._window_start = window_start
            missing = [b for b in [*hits, *reads] if (b, window_start) not in self._buckets]
            if missing and len(self._buckets) + len(missing) > MAX_BUCKETS:
                self._make_room(len(hits) + len(reads))
            states = {}
            for bucket in [*hits, *reads]:
                state = self._buckets.get((bucket, window_start))
                if state is None:
                    state = self._buckets[(bucket, window_start)] = _Bucket()
                states[bucket] = state
            for bucket in hits:
                states[bucket].pending += 1
            due = any(states[bucket].pending >= flush_every for bucket in hits) or any(
                now - state.flushed_at >= flush_seconds for state in states.values()
            )
            if due:
                counts = backend.count(
                    window_start=window_start,
                    window=window,
                    hits={bucket: states[bucket].pending for bucket in hits},
                    reads=reads,
                )
                for bucket, state in states.items():
                    state.seen, state.pending, state.flushed_at = counts[bucket], 0, now
            return {bucket: state.seen + state.pending for bucket, state in states.items()}

    def _make_room(self, needed: int) -> None:
        """Rare (10,000 keys, institutions and addresses in one window): a bucket with nothing
        pending costs only a flush to learn again; if too many have pending hits, start over,
        as a restarted process would (the module docstring)."""
        self._buckets = {key: state for key, state in self._buckets.items() if state.pending}
        if len(self._buckets) + needed > MAX_BUCKETS:
            self._buckets = {}

    def seen(self, bucket: str, window_start: int, count: int, now: float) -> None:
        """A count of `bucket` read elsewhere (a refusal counted): known at once here, if this
        process keeps the bucket (a bucket it does not keep is read at its first request)."""
        with self._lock:
            state = self._buckets.get((bucket, window_start))
            if state is not None and count > state.seen:
                state.seen, state.flushed_at = count, now

    def flush(self, backend: Backend) -> None:
        """Write every pending hit now (one statement per window). Requests never need it; a
        gunicorn worker's exit does (gunicorn.conf.py), and tests, to compare the shared counts
        with the requests made."""
        now = time.time()
        with self._lock:
            by_window: dict[int, dict[str, int]] = {}
            for (bucket, window_start), state in self._buckets.items():
                if state.pending:
                    by_window.setdefault(window_start, {})[bucket] = state.pending
            for window_start, hits in by_window.items():
                counts = backend.count(
                    window_start=window_start,
                    window=settings.RATE_LIMIT_WINDOW_SECONDS,
                    hits=hits,
                    reads=[],
                )
                for bucket, count in counts.items():
                    state = self._buckets[(bucket, window_start)]
                    state.seen, state.pending, state.flushed_at = count, 0, now

    def clear(self) -> None:
        with self._lock:
            self._buckets = {}
            self._window_start = 0


local_counters = LocalCounters()


def flush() -> None:
    """Write this process's pending counts (`LocalCounters.flush`)."""
    local_counters.flush(backend())


# --- What is counted


def _address_bucket(kind: str, address) -> str:
    if address is None:  # no parsable peer address: all such requests share one counter
        return f"{kind}:unknown"
    if address.version == 6:
        return f"{kind}:{ipaddress.ip_network(f'{address}/64', strict=False)}"
    return f"{kind}:{address}"


def _window() -> tuple[float, int, int, int]:
    """(now, window start, window length, seconds until the next window)."""
    window = settings.RATE_LIMIT_WINDOW_SECONDS
    now = time.time()
    window_start = int(now // window) * window
    return now, window_start, window, max(1, math.ceil(window_start + window - now))


def count_request(*, api_key, address) -> None:
    """Count an authenticated request against its key and its institution, and refuse it when
    its address has used up its refused authentications (one statement when the process's
    batch is due, none otherwise: `LocalCounters`).

    Raises RateLimited (address first, then key, then institution) when a limit is exceeded; the
    request is counted even then."""
    limits = {
        f"key:{api_key.id}": (settings.RATE_LIMIT_REQUESTS, KEY_LIMITED),
        f"institution:{api_key.institution_id}": (
            settings.RATE_LIMIT_INSTITUTION_REQUESTS,
            INSTITUTION_LIMITED,
        ),
    }
    hits = [bucket for bucket, (limit, _) in limits.items() if limit > 0]
    refused_limit = settings.RATE_LIMIT_FAILED_AUTH_REQUESTS
    reads = [_address_bucket("refused", address)] if refused_limit > 0 else []
    if not hits and not reads:
        return
    now, window_start, window, retry_after = _window()
    counts = local_counters.count(
        backend(), now=now, window_start=window_start, window=window, hits=hits, reads=reads
    )
    if reads and counts[reads[0]] >= refused_limit:
        raise RateLimited(ADDRESS_LIMITED, retry_after=retry_after)
    for bucket in hits:
        limit, message = limits[bucket]
        if counts[bucket] > limit:
            raise RateLimited(message, retry_after=retry_after)


def count_refusal(*, address) -> None:
    """Count a refused authentication (401 or 403 `ip_not_allowed`) against the client address
    (one statement). Raises RateLimited when the address is past RATE_LIMIT_FAILED_AUTH_REQUESTS:
    the caller answers that instead of the refusal."""
    limit = settings.RATE_LIMIT_FAILED_AUTH_REQUESTS
    if limit <= 0:
        return
    bucket = _address_bucket("refused", address)
    now, window_start, window, retry_after = _window()
    counts = backend().count(window_start=window_start, window=window, hits={bucket: 1}, reads=[])
    local_counters.seen(bucket, window_start, counts[bucket], now)
    if counts[bucket] > limit:
        raise RateLimited(ADDRESS_LIMITED, retry_after=retry_after)


def count_exactly(*, bucket: str, limit: int, message: str) -> None:
    """Count one request in `bucket` at once (one statement or round trip, no batch: exact
    over every process) and raise RateLimited(message) when the window's count is past
    `limit` (0: no limit, nothing counted). The request is counted even then."""
    if limit <= 0:
        return
    _, window_start, window, retry_after = _window()
    counts = backend().count(window_start=window_start, window=window, hits={bucket: 1}, reads=[])
    if counts[bucket] > limit:
        raise RateLimited(message, retry_after=retry_after)


class SchemaRateThrottle(BaseThrottle):
    """The schema documents (no key): RATE_LIMIT_SCHEMA_REQUESTS per window per client address."""

    def allow_request(self, request, view):
        count_exactly(
            bucket=_address_bucket("schema", client_address(request._request)),
            limit=settings.RATE_LIMIT_SCHEMA_REQUESTS,
            message=SCHEMA_LIMITED,
        )
        return True


def rate_counters_purge(*, now: float | None = None) -> int:
    """Delete the PostgreSQL counters of windows that have ended; returns how many. Safe to run
    concurrently with requests (they only touch the current window) and with itself."""
    now = time.time() if now is None else now
    ended_before = now - settings.RATE_LIMIT_WINDOW_SECONDS
    deleted, _ = RateCounter.objects.filter(window_start__lte=ended_before).delete()
    return deleted
