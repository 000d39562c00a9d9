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

Cost: one counting step per request, atomic per counter. `ApiKeyAuthentication` calls
`count_refusal` when it refuses (the address's counter: one upsert) or `count_request` when it
accepts (the key's and the institution's counters incremented and the address's refusals read,
together: one statement). Nothing is read first and written later, so concurrent requests
never lose a count.

Backends, chosen by settings.RATE_LIMIT_BACKEND (from CACHE_URL's scheme):
- `postgresql` (default): table `api_rate_counter`, an ordinary Django model (`RateCounter`,
  so that migrations and `makemigrations --check` know it and the purge is an ORM delete),
  made UNLOGGED by its migration (0005_rate_counters): counters are disposable, so their writes
  skip the WAL; a crash empties the table, which at worst grants one fresh window. Each step
  is one `INSERT ... ON CONFLICT DO UPDATE ... RETURNING` over all its counters, in bucket
  order (so two statements never wait on each other's rows in opposite orders), joined to the
  read of the address's counter. It runs in autocommit, before the request's own transaction,
  so a counter row is locked only for the statement. `rate_counters_purge` (hourly job) deletes
  ended windows.
- `redis`: one pipeline per step (INCR + EXPIREAT per counter, GET per read): one round trip;
  keys expire by themselves.
"""

import ipaddress
import math
import time
from collections.abc import Sequence
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
        self, *, window_start: int, window: int, hits: Sequence[str], reads: Sequence[str]
    ) -> dict[str, int]:
        """Add one to each bucket of `hits` and read each bucket of `reads`, in the window that
        starts at `window_start`, in one statement or round trip. Returns every bucket's count
        (after the increment for `hits`; 0 for a read bucket nobody counted yet)."""


# The one statement of a counting step. Static SQL: the buckets are bound as arrays.
_COUNT_SQL = """
WITH hits AS (
    INSERT INTO api_rate_counter AS counter (bucket, window_start, count)
    SELECT bucket, %(window_start)s, 1 FROM unnest(%(hits)s::varchar[]) AS bucket
    ORDER BY bucket
    ON CONFLICT (bucket, window_start) DO UPDATE SET count = counter.count + 1
    RETURNING counter.bucket, counter.count
)
SELECT bucket, count FROM hits
UNION ALL
SELECT bucket, count FROM api_rate_counter
WHERE window_start = %(window_start)s AND bucket = ANY(%(reads)s::varchar[])
"""


class PostgresBackend:
    def count(self, *, window_start, window, hits, reads):
        with connection.cursor() as cursor:
            cursor.execute(
                _COUNT_SQL,
                {
                    "window_start": window_start,
                    "hits": pg_array.literal(sorted(hits)),
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
        for bucket in hits:
            pipeline.incr(_redis_key(bucket, window_start))
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


# --- What is counted


def _address_bucket(kind: str, address) -> str:
    if address is None:  # no parsable peer address: all such requests share one counter
        return f"{kind}:unknown"
    if address.version == 6:
        return f"{kind}:{ipaddress.ip_network(f'{address}/64', strict=False)}"
    return f"{kind}:{address}"


def _window() -> tuple[int, int, int]:
    """(window start, window length, seconds until the next window) for now."""
    window = settings.RATE_LIMIT_WINDOW_SECONDS
    now = time.time()
    window_start = int(now // window) * window
    return window_start, window, max(1, math.ceil(window_start + window - now))


def count_request(*, api_key, address) -> None:
    """Count an authenticated request against its key and its institution, and refuse it when
    its address has used up its refused authentications (one statement).

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
    window_start, window, retry_after = _window()
    counts = backend().count(window_start=window_start, window=window, hits=hits, reads=reads)
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
    window_start, window, retry_after = _window()
    counts = backend().count(window_start=window_start, window=window, hits=[bucket], reads=[])
    if counts[bucket] > limit:
        raise RateLimited(ADDRESS_LIMITED, retry_after=retry_after)


class SchemaRateThrottle(BaseThrottle):
    """The schema documents (no key): RATE_LIMIT_SCHEMA_REQUESTS per window per client address."""

    def allow_request(self, request, view):
        limit = settings.RATE_LIMIT_SCHEMA_REQUESTS
        if limit <= 0:
            return True
        bucket = _address_bucket("schema", client_address(request._request))
        window_start, window, retry_after = _window()
        counts = backend().count(window_start=window_start, window=window, hits=[bucket], reads=[])
        if counts[bucket] > limit:
            raise RateLimited(SCHEMA_LIMITED, retry_after=retry_after)
        return True


def rate_counters_purge(*, now: float | None = None) -> int:
    """Delete the PostgreSQL counters of windows that have ended; returns how many. Safe to run
    concurrently with requests (they only touch the current window) and with itself."""
    now = time.time() if now is None else now
    ended_before = now - settings.RATE_LIMIT_WINDOW_SECONDS
    deleted, _ = RateCounter.objects.filter(window_start__lte=ended_before).delete()
    return deleted
