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
- Read-your-writes: each POST or PATCH of a key records the primary's WAL position right after
  it committed (one upsert into `api_replica_mark`, an UNLOGGED table of one row per key). The
  key's GETs then read a replica only once that replica has replayed past it (as of this
  process's last look at the replica, at most LAG_CHECK_SECONDS old), for as long as a replica
  within the lag bound may still miss the write. Its own table, not Django's cache: the database
  cache culls entries past MAX_ENTRIES, and a culled mark is a key reading a replica that has not
  seen its own write. `X-TX-Consistency: strong` asks for the primary on any GET.
- Lag is measured against the primary's position: a replica has no lag when it has replayed
  what the primary had written just before it was asked; otherwise its lag is the age of the
  last transaction it replayed. A replica whose WAL receiver is connected but behind (receiving
  nothing, or slowly) therefore ages like any other; one without a receiver is never read.
- A GET that answers as of an instant (`?at=`) within the lag a replica may have is answered by
  the primary (`reads_as_of`).
- A replica that fails (refused connection, dropped connection, a query cancelled by recovery)
  is left alone by this process for DATABASE_REPLICA_RETRY_SECONDS and the handler runs again
  on the primary, unless it already wrote something (then it answers as the primary would have
  failed: 503). A client never gets a 500 because of a replica.

The answer says where it read: `X-TX-Read-From: primary|replica`.
"""

import contextlib
import itertools
import logging
import time
from contextvars import ContextVar
from datetime import datetime, timedelta
from typing import NamedTuple

from django.conf import settings
from django.db import (
    DEFAULT_DB_ALIAS,
    DatabaseError,
    InterfaceError,
    OperationalError,
    connections,
    transaction,
)
from django.db.models.functions import Now
from django.utils import timezone

from api.models import ReplicaMark

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


# --- Lag, measured against the primary's position. Each process asks at most once per
# LAG_CHECK_SECONDS per replica: first the primary's WAL position (P), then the replica's replayed
# position (R) and the age of the last transaction it replayed. R >= P: the replica has all the
# primary had when asked, no lag. R < P: its lag is that age (it holds every transaction
# committed up to then; an over-estimate after an idle primary, which errs towards the
# primary). No WAL receiver (cut off from its primary): unknown, read as too far behind. What
# the receiver has received says nothing: a receiver connected but behind has replayed all it
# received while the primary is far ahead.
LAG_CHECK_SECONDS = 1.0
_PRIMARY_LSN_SQL = "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn"
_REPLICA_LSN_SQL = """
SELECT EXISTS (SELECT 1 FROM pg_stat_wal_receiver),
       pg_last_wal_replay_lsn() - '0/0'::pg_lsn,
       EXTRACT(EPOCH FROM clock_timestamp() - pg_last_xact_replay_timestamp())
"""


class _Position(NamedTuple):
    """What this process last learnt of a replica."""

    checked: float  # monotonic
    fresh: bool  # lag at most DATABASE_REPLICA_MAX_LAG_SECONDS
    replayed: int  # its replayed WAL position then (bytes since 0/0); it only grows


_lag_checked: dict[str, _Position] = {}


def _position(alias: str) -> _Position | None:
    """Where `alias` stands, asked at most once per LAG_CHECK_SECONDS; None when it fails to
    answer (it is then marked down)."""
    checked = _lag_checked.get(alias)
    now = time.monotonic()
    if checked is not None and now - checked.checked < LAG_CHECK_SECONDS:
        return checked
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:  # the primary first: see above
        cursor.execute(_PRIMARY_LSN_SQL)
        (primary,) = cursor.fetchone()
    try:
        with connections[alias].cursor() as cursor:
            cursor.execute(_REPLICA_LSN_SQL)
            receiving, replayed, replay_age = cursor.fetchone()
    except DatabaseError:  # down, refused, or not a server this query works on
        logger.warning("replica unreachable; reading the primary", extra={"alias": alias})
        _mark_down(alias)
        return None
    replayed = 0 if replayed is None else int(replayed)  # None: not a standby
    if not receiving:
        lag = None
    elif replayed >= primary:
        lag = 0.0
    else:
        lag = None if replay_age is None else float(replay_age)
    fresh = lag is not None and lag <= settings.DATABASE_REPLICA_MAX_LAG_SECONDS
    if not fresh:
        logger.warning(
            "replica too far behind; reading the primary",
            extra={"alias": alias, "lagSeconds": lag, "behindBytes": int(primary) - replayed},
        )
    position = _Position(now, fresh, replayed)
    _lag_checked[alias] = position
    return position


# --- Read-your-writes marks: `api_replica_mark` (api.models.ReplicaMark), one row per key: the
# primary's insert position read right after the key's last write committed (past the end of
# its commit record), and until when it matters. A replica that has replayed past it has the
# write. The mark matters for as long as a replica counted fresh may still miss the write: the
# lag bound plus the age of a lag check; DATABASE_REPLICA_STICKY_SECONDS only makes it longer.
# GREATEST: two writes of one key marking at once keep the later position whatever the order
# their upserts take the row in. The expiry is the database's clock, read and written there.
_MARK_SQL = """
INSERT INTO api_replica_mark AS mark (key_id, lsn, expires_at)
VALUES (
    %s,
    pg_current_wal_insert_lsn() - '0/0'::pg_lsn,
    statement_timestamp() + %s * interval '1 second'
)
ON CONFLICT (key_id) DO UPDATE SET
    lsn = GREATEST(mark.lsn, EXCLUDED.lsn),
    expires_at = GREATEST(mark.expires_at, EXCLUDED.expires_at)
"""
_MARKED_SQL = """
SELECT lsn FROM api_replica_mark WHERE key_id = %s AND expires_at > statement_timestamp()
"""


def _mark_seconds() -> float:
    return max(
        settings.DATABASE_REPLICA_STICKY_SECONDS,
        settings.DATABASE_REPLICA_MAX_LAG_SECONDS + LAG_CHECK_SECONDS,
    )


def _mark(key_id: str) -> None:
    try:
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute(_MARK_SQL, [key_id, _mark_seconds()])
    except DatabaseError:
        # The write itself has committed: answering it is right. Its key may then read a
        # replica that has not replayed it yet, as any other key may (docs/read-replicas.md).
        logger.warning("read-your-writes mark not recorded", exc_info=True)


def wrote(request) -> None:
    """After a POST or PATCH of a key (committed or not): its GETs read only a replica that has
    replayed past the primary's position now. One statement."""
    if not settings.DATABASE_REPLICAS or settings.DATABASE_REPLICA_STICKY_SECONDS <= 0:
        return
    api_key = getattr(request, "auth", None)
    if api_key is None:
        return
    if connections[DEFAULT_DB_ALIAS].in_atomic_block:
        # Inside a transaction not ours (a test's): the position counts only once it commits.
        transaction.on_commit(lambda: _mark(api_key.pk))
        return
    _mark(api_key.pk)


def _marked_lsn(api_key) -> int | None:
    """The position a replica must have replayed for this key's reads; None: any fresh one."""
    if settings.DATABASE_REPLICA_STICKY_SECONDS <= 0 or api_key is None:
        return None
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute(_MARKED_SQL, [api_key.pk])
        row = cursor.fetchone()
    return None if row is None else row[0]


def replica_marks_purge() -> int:
    """Delete the expired read-your-writes marks; returns how many (hourly job). Safe to run
    with requests: a key writing again upserts its row anew."""
    deleted, _ = ReplicaMark.objects.filter(expires_at__lte=Now()).delete()
    return deleted


def _replica_for(request, view) -> str | None:
    """The replica this GET may read, or None for the primary."""
    if not getattr(view, "replica_reads", True):
        return None
    if request.META.get(CONSISTENCY_HEADER, "").strip().lower() == "strong":
        return None
    available = _available()
    if not available:
        return None
    marked = _marked_lsn(request.auth)
    alias = available[next(_turn) % len(available)]
    position = _position(alias)
    if position is None or not position.fresh:
        return None
    if marked is not None and position.replayed < marked:
        return None  # it has not replayed this key's last write (yet)
    return alias


def reads_as_of(instant: datetime) -> None:
    """Called by a GET handler that answers as of `instant` (balances at an instant), before its
    first read: an instant a replica read now may not have reached (later than now minus the
    lag bound and the age of a lag check) is answered by the primary. The rest of the request
    reads there and says so."""
    reads = _current.get()
    if reads is None:
        return
    window = settings.DATABASE_REPLICA_MAX_LAG_SECONDS + LAG_CHECK_SECONDS
    if instant > timezone.now() - timedelta(seconds=window):
        reads.alias = DEFAULT_DB_ALIAS


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
                if reads.alias == DEFAULT_DB_ALIAS:  # the handler asked for it (reads_as_of)
                    source = "primary"
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
