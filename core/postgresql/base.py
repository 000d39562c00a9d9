"""TX's PostgreSQL backend: Django's, with what migrations create changed (`schema`) and what
happens when the server goes away (docs/deployment.md, "When the primary goes away"):

- a request whose connection died inside `transaction.atomic()` gets its error at once, not
  after DATABASE_POOL_TIMEOUT (`DatabaseWrapper.set_autocommit`);
- the pool tries to reconnect every 0.1 s, not after 1, 2, 4, ... s (`_reconnect_quickly`);
- a multi-host DATABASE_URL opens its connections on the host that accepted last (`hosts`);
- the pool checks a connection before handing it out by looking at its socket, not with a
  statement (`check_connection`), and so does a persistent connection without the pool
  (`CONN_MAX_AGE` with CONN_HEALTH_CHECKS: `DatabaseWrapper.is_usable`, Django's `SELECT 1`).
"""

import select

import psycopg
from django.db.backends.postgresql import base
from psycopg_pool import ConnectionPool
from psycopg_pool.base import AttemptWithBackoff

from core.postgresql.hosts import primary_first, remember
from core.postgresql.schema import DatabaseSchemaEditor


def _reconnect_quickly() -> None:
    """psycopg_pool waits 1 s (+-10%) after a failed attempt to connect, then twice as long
    after each further failure, with no ceiling below `reconnect_timeout` (5 minutes): after a
    failover of a few seconds the pool came back up to 3 s after the new primary did. Its
    `getconn` waits the same way between two connections that fail the pool's `check` (the
    dead server's idle connections). The delays are class attributes of `AttemptWithBackoff`,
    its only knob: the pools (ours, and the procrastinate worker's) name that class directly,
    so a subclass could not be handed to them. A constant 0.1 s: a failed attempt on a server
    that is down costs a refused connection (a standby refusing read-write, a session), and a
    process holds a few connections (gunicorn's threads), so some tens of attempts a second
    per process while the primary is away."""
    AttemptWithBackoff.INITIAL_DELAY = RECONNECT_DELAY_SECONDS
    AttemptWithBackoff.DELAY_BACKOFF = 1.0


RECONNECT_DELAY_SECONDS = 0.1
_reconnect_quickly()


def check_connection(conn: psycopg.Connection) -> None:
    """The pool's check of an idle connection before a request gets it (its `check`: return
    to hand it out, raise to have it replaced). psycopg_pool's own (`check_connection`) sends an
    empty query, a round trip on every request. Idle, a connection receives nothing unless
    the server ended it: a killed or restarted server's backend sends its FATAL and closes the
    socket, or the socket just closes. So: closed already, replaced; nothing to read on its
    socket (a poll that does not wait), handed out; something to read, the full check, which
    raises if the server is gone (and the pool replaces the connection: psycopg marks it
    broken) and otherwise consumes what came (a notice). What neither check sees in time is a
    host that vanished without closing its sockets: the empty query would wait as long as the
    request's first statement does."""
    if conn.closed:
        raise psycopg.OperationalError("the connection is closed")
    poller = select.poll()  # not select.select: no limit on the descriptor's number
    poller.register(conn.fileno(), select.POLLIN)
    if poller.poll(0):  # readable, hung up or in error: the server said something
        ConnectionPool.check_connection(conn)


class DatabaseWrapper(base.DatabaseWrapper):
    SchemaEditorClass = DatabaseSchemaEditor

    @property
    def pool(self):
        pool = super().pool
        # With CONN_HEALTH_CHECKS, Django makes the pool with `ConnectionPool.check_connection`
        # and has no setting to name another; ours replaces it before the pool is opened (its
        # first connection comes through this property). psycopg_pool 3.3 keeps it in `_check`
        # (tests/core/test_database_recovery.py fails if that changes).
        if pool is not None and pool._check is ConnectionPool.check_connection:
            pool._check = check_connection
        return pool

    def is_usable(self):
        """Django's health check of a persistent connection (CONN_HEALTH_CHECKS without the
        pool, at a request's first query), a `SELECT 1` in Django's own: the pool's check
        instead, a poll of the socket, a round trip only when the server sent something."""
        if self.connection is None:
            return False
        try:
            check_connection(self.connection)
        except psycopg.Error:
            return False
        return True

    def get_new_connection(self, conn_params):
        if self.pool:  # the pool's connection class orders the hosts (settings: OPTIONS["pool"])
            return super().get_new_connection(conn_params)
        connection = super().get_new_connection(primary_first(conn_params))
        remember(conn_params, connection)
        return connection

    def set_autocommit(self, autocommit, force_begin_transaction_with_broken_autocommit=False):
        # When the server goes away inside the outermost `atomic()` block, its ROLLBACK fails
        # and Django drops the connection (Atomic.__exit__), then sets autocommit back on,
        # which takes a new connection for it: from a pool, with the server still down, that
        # waited DATABASE_POOL_TIMEOUT before the request could answer 503. Without a
        # connection there is nothing to set: the next one starts in autocommit anyway
        # (`connect()` sets AUTOCOMMIT).
        if (
            autocommit
            and self.connection is None
            and self.settings_dict["AUTOCOMMIT"]
            and not self.in_atomic_block
            and not self.run_commit_hooks_on_set_autocommit_on
        ):
            self.autocommit = True
            return
        super().set_autocommit(autocommit, force_begin_transaction_with_broken_autocommit)
