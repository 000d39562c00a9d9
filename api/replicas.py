"""Read replicas: the reads of the API's GET and HEAD requests may go to a streaming replica;
everything else stays on the primary. docs/read-replicas.md says what a client sees.

`DATABASE_REPLICA_URLS` (config/settings/base.py) adds one database alias per replica
(`replica_1`, ...) and installs `ReplicaRouter`; without replicas no router is installed and
what `TXView` calls here returns after finding `DATABASE_REPLICAS` empty.

What goes where:
- A read goes to a replica only while `TXView` runs the handler of a GET or HEAD that it has
  authenticated (`read`): the per-request choice lives in a context variable that nothing else
  sets, so the admin, jobs, management commands, migrations and every POST and PATCH read the
  primary. The key itself, the rate limiter and the idempotency claim are read before the
  handler or on Django's raw `connection` (always the primary): a read that decides a write
  never runs on a replica.
- Inside the handler, a read inside a transaction of the primary (an operation, an `atomic`
  block) or a `select_for_update` (Django routes it as a write) reads the primary; every write
  goes to the primary; a view with `replica_reads = False` reads the primary throughout.
- Read-your-writes: after a key's POST or PATCH its GETs read the primary for at least
  DATABASE_REPLICA_STICKY_SECONDS. The instant is kept in Django's shared cache (PostgreSQL on
  the primary, or Redis), which every app process reads, and not in the key row: that would be a
  write to a hot row (and a migration) for every write request. `X-TX-Consistency: strong` asks
  for the primary on any GET.
- A replica that fails (refused connection, dropped connection, a query cancelled by recovery)
  is left alone by this process for DATABASE_REPLICA_RETRY_SECONDS and the handler runs again
  on the primary, unless it already wrote something (then it answers as the primary would have
  failed: 503). A client never gets a 500 because of a replica.

The answer says where it read: `X-TX-Read-From: primary|replica`.
"""

import contextlib
import itertools
import logging
import math
import threading
import time
from contextvars import ContextVar

from django.conf import settings
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, DatabaseError, InterfaceError, OperationalError, connections

logger = logging.getLogger("tx.replicas")

CONSISTENCY_HEADER = "HTTP_X_TX_CONSISTENCY"
READ_FROM_HEADER = "X-TX-Read-From"
READ_METHODS = frozenset({"GET", "HEAD"})


class _Reads:
    """The replica a request's reads go to, and whether its handler has asked for a write."""

    __slots__ = ("alias", "wrote")

    def __init__(self, alias: str):
        self.alias = alias
        self.wrote = False


_current: ContextVar[_Reads | None] = ContextVar("tx_replica_reads", default=None)


class ReplicaRouter:
    """Installed only when replicas are configured (settings.DATABASE_ROUTERS)."""

    def db_for_read(self, model, **hints):
        reads = _current.get()
        if reads is None or connections[DEFAULT_DB_ALIAS].in_atomic_block:
            # Explicit: an instance read from a replica must not pull its relations there.
            return DEFAULT_DB_ALIAS
        return reads.alias

    def db_for_write(self, model, **hints):
        reads = _current.get()
        if reads is not None:
            reads.wrote = True
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1, obj2, **hints):
        # Every alias is the same database: a replica is a copy of the primary.
        return True

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        return db == DEFAULT_DB_ALIAS


# --- Replicas this process found failing: alias -> monotonic time before which it is skipped.
_down_until: dict[str, float] = {}
_turn = itertools.count()


def _available() -> list[str]:
    now = time.monotonic()
    return [alias for alias in settings.DATABASE_REPLICAS if _down_until.get(alias, 0.0) <= now]


def _mark_down(alias: str) -> None:
    _down_until[alias] = time.monotonic() + settings.DATABASE_REPLICA_RETRY_SECONDS
    with contextlib.suppress(DatabaseError):
        connections[alias].close()  # the next request after the pause connects anew


# --- Lag: asked of each replica at most once per LAG_CHECK_SECONDS per process. Zero when the
# replica has replayed everything it received; otherwise the age of the last transaction it
# replayed (an over-estimate after the primary was idle: it errs towards the primary); unknown
# (NULL, read as too far behind) when no WAL receiver runs: a replica cut off from its primary
# would otherwise look perfectly fresh while it falls further behind.
LAG_CHECK_SECONDS = 1.0
_LAG_SQL = """
SELECT CASE
    WHEN NOT EXISTS (SELECT 1 FROM pg_stat_wal_receiver) THEN NULL
    WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
    ELSE EXTRACT(EPOCH FROM clock_timestamp() - pg_last_xact_replay_timestamp())
END
"""
_lag_checked: dict[str, tuple[float, bool]] = {}  # alias -> (checked at, monotonic; fresh enough)


def _fresh_enough(alias: str) -> bool:
    """Whether `alias` lags at most DATABASE_REPLICA_MAX_LAG_SECONDS; a replica that fails to
    answer is marked down."""
    checked = _lag_checked.get(alias)
    now = time.monotonic()
    if checked is not None and now - checked[0] < LAG_CHECK_SECONDS:
        return checked[1]
    try:
        with connections[alias].cursor() as cursor:
            cursor.execute(_LAG_SQL)
            (lag,) = cursor.fetchone()
    except DatabaseError:  # down, refused, or not a server this query works on
        logger.warning("replica unreachable; reading the primary", extra={"alias": alias})
        _mark_down(alias)
        return False
    fresh = lag is not None and lag <= settings.DATABASE_REPLICA_MAX_LAG_SECONDS
    if not fresh:
        logger.warning(
            "replica too far behind; reading the primary",
            extra={"alias": alias, "lagSeconds": None if lag is None else float(lag)},
        )
    _lag_checked[alias] = (now, fresh)
    return fresh


# --- Read-your-writes marks, in the shared cache: key id -> time (epoch seconds) until which
# the key's reads go to the primary. A mark is written for at least 1.5 x the sticky window and
# rewritten only once less than one window of it remains, so a key writing many times a second
# costs one cache write per half-window per process, and its reads still stay on the primary
# for at least the window after its last write.
_MARK_PREFIX = "tx:replicas:sticky:"
_MAX_MARKS = 10_000
_marks_lock = threading.Lock()
_marked_until: dict[str, float] = {}  # what this process last wrote, per key id


def _mark_key(key_id: str) -> str:
    return _MARK_PREFIX + key_id


def wrote(request) -> None:
    """After a POST or PATCH of a key: its reads go to the primary for the sticky window."""
    if not settings.DATABASE_REPLICAS:
        return
    window = settings.DATABASE_REPLICA_STICKY_SECONDS
    api_key = getattr(request, "auth", None)
    if window <= 0 or api_key is None:
        return
    now = time.time()
    if _marked_until.get(api_key.pk, 0.0) >= now + window:
        return
    until = now + 1.5 * window
    try:
        cache.set(_mark_key(api_key.pk), until, timeout=math.ceil(1.5 * window) + 1)
    except Exception:
        # The write itself has committed: answering it is right. Its key may then read a
        # replica that has not replayed it yet, as any other key may (docs/read-replicas.md).
        logger.warning("read-your-writes mark not recorded", exc_info=True)
        return
    with _marks_lock:
        if len(_marked_until) >= _MAX_MARKS:
            _marked_until.clear()
        _marked_until[api_key.pk] = until


def _sticky(api_key) -> bool:
    if settings.DATABASE_REPLICA_STICKY_SECONDS <= 0 or api_key is None:
        return False
    until = cache.get(_mark_key(api_key.pk))
    return until is not None and until > time.time()


def _replica_for(request, view) -> str | None:
    """The replica this GET may read, or None for the primary."""
    if not getattr(view, "replica_reads", True):
        return None
    if request.META.get(CONSISTENCY_HEADER, "").strip().lower() == "strong":
        return None
    available = _available()
    if not available or _sticky(request.auth):
        return None
    alias = available[next(_turn) % len(available)]
    return alias if _fresh_enough(alias) else None


def read(view, request, handler, *args, **kwargs):
    """Run the handler of an authenticated GET or HEAD, its reads on a replica when allowed;
    exceptions are rendered by the view as they would have been without this."""
    if not settings.DATABASE_REPLICAS:
        return handler(request, *args, **kwargs)
    source = "primary"
    try:
        alias = _replica_for(request, view)
        if alias is None:
            response = handler(request, *args, **kwargs)
        else:
            source = "replica"
            reads = _Reads(alias)
            token = _current.set(reads)
            try:
                response = handler(request, *args, **kwargs)
            except (OperationalError, InterfaceError):
                if reads.wrote:
                    raise
                replica_failed = connections[alias].errors_occurred
                _current.reset(token)
                token = None
                if replica_failed:
                    logger.warning("replica failed; reading the primary", extra={"alias": alias})
                    _mark_down(alias)
                source = "primary"
                response = handler(request, *args, **kwargs)
            finally:
                if token is not None:
                    _current.reset(token)
    except Exception as exc:
        response = view.handle_exception(exc)
    response[READ_FROM_HEADER] = source
    return response
