"""A per-process cache of API keys, so that an authenticated request costs no query for its key.

Every request of a busy client would otherwise read the same row (the key, its institution and
its allowlist) again. A key read from the database is kept here for `API_KEY_CACHE_SECONDS`
(5 by default; 0 turns the cache off); after that it is read again. The staleness is bounded:
whatever changes a key (revoked, rotated, expired early, scopes or allowlist edited, in any
process) takes effect in every process within that many seconds; a change made by this process
(`forget`) takes effect at once here. An expiry time is checked on every request against the
clock, so a key stops at `expires_at` exactly. The secret is checked against the stored hash on
every request, cached or not; an unknown prefix is never cached (a caller sending random keys
cannot fill the cache), and the cache holds at most `MAX_KEYS` keys.
"""

import threading
import time

from django.conf import settings

MAX_KEYS = 10_000

_lock = threading.Lock()
_keys: dict[str, tuple[float, object]] = {}  # prefix -> (read at, monotonic; the ApiKey)


def get(prefix: str):
    """The cached key of `prefix`, or None when not cached or older than the TTL."""
    ttl = settings.API_KEY_CACHE_SECONDS
    if ttl <= 0:
        return None
    entry = _keys.get(prefix)
    if entry is None or time.monotonic() - entry[0] >= ttl:
        return None
    return entry[1]


def put(prefix: str, api_key) -> None:
    if settings.API_KEY_CACHE_SECONDS <= 0:
        return
    with _lock:
        if len(_keys) >= MAX_KEYS:
            _keys.clear()  # rare: start over rather than track an eviction order
        _keys[prefix] = (time.monotonic(), api_key)


def forget(prefix: str | None = None) -> None:
    """Drop `prefix` (every key when None) from this process's cache."""
    with _lock:
        if prefix is None:
            _keys.clear()
        else:
            _keys.pop(prefix, None)
