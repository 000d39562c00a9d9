"""The test databases, cloned from one migrated template (issue 48 item 8; docs/dependencies.md
has the test command, this module the why).

Migrating a database from zero takes about 30 s here (200 migrations), and pytest-django with
xdist did it once per worker, every run: a one-file run spent most of its time before its first
test. Instead, as Zulip does (`zulip_test_template`) and Django's own runner does for its
parallel workers (`CREATE DATABASE ... TEMPLATE`):

- the template is named by a **digest of everything that shapes the schema**: every first-party
  migration and SQL file (`*/migrations/*.py`, `*/sql/*.sql`) and `requirements.lock` (the
  third-party apps' migrations come with their versions). A change to any of them names another
  template, which is built once; templates of other digests are dropped. Nobody has to remember
  a flag, and a stale schema is never reused;
- the first worker to need it builds it (`migrate` and `createcachetable` into a database of a
  building name, then renamed: a template exists only whole), the others wait on a PostgreSQL
  advisory lock and find it built;
- each worker's own database (`test_tx_gw0`, ...) is dropped and cloned from it (a fraction of a
  second), then handed to pytest-django with `keepdb`, whose `migrate` finds nothing to apply.

`--create-db` builds the template anew.
"""

import hashlib
from contextlib import contextmanager
from pathlib import Path

import psycopg
from django.core.management import call_command
from django.db import connections

ROOT = Path(__file__).resolve().parent.parent
PREFIX = "test_tx_template_"
# Outside the project's own: the template's building, serialized between processes.
_LOCK = 7_305_482_001


def schema_digest() -> str:
    """A digest of what the migrated schema is made of (see the module docstring)."""
    files = sorted(
        path
        for pattern in ("*/migrations/*.py", "*/sql/*.sql", "requirements.lock")
        for path in ROOT.glob(pattern)
        if ".venv" not in path.parts
    )
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def clone_for_this_process(alias: str = "default", rebuild: bool = False) -> str:
    """Make the alias's test database (its TEST NAME, with the worker's suffix) a fresh clone of
    the template of today's schema, building the template first when it does not exist (or
    `rebuild`). Returns the template's name."""
    connection = connections[alias]
    target = connection.creation._get_test_db_name()
    template = PREFIX + schema_digest()
    with server_of(connection) as server:
        server.execute("SELECT pg_advisory_lock(%s)", [_LOCK])
        try:
            if rebuild:
                _drop(server, template)
            if not _exists(server, template):
                _build(server, connection, template)
                _drop_others(server, keep=template)
            _drop(server, target)
            server.execute(f'CREATE DATABASE "{target}" TEMPLATE "{template}"')
        finally:
            server.execute("SELECT pg_advisory_unlock(%s)", [_LOCK])
    return template


@contextmanager
def server_of(connection):
    """A connection of its own to the server's maintenance database, in autocommit (CREATE
    DATABASE runs outside a transaction)."""
    params = connection.get_connection_params()
    conninfo = {key: params[key] for key in ("host", "port", "user") if params.get(key)}
    with psycopg.connect(
        **conninfo, password=params.get("password") or None, dbname="postgres", autocommit=True
    ) as server:
        yield server


@contextmanager
def pointed_at(connection, name: str):
    """The connection on the database `name` for the block, then back on its own."""
    settings = connection.settings_dict
    own = settings["NAME"]
    connection.close()
    settings["NAME"] = name
    try:
        yield
    finally:
        connection.close()
        settings["NAME"] = own


def _exists(server, name: str) -> bool:
    return server.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()


def _drop(server, name: str) -> None:
    server.execute(f'DROP DATABASE IF EXISTS "{name}"')


def _build(server, connection, template: str) -> None:
    """Migrate a new database into the template's schema under a building name, then rename it:
    a process that died halfway leaves only a building database, dropped by the next build."""
    building = template + "_building"
    _drop(server, building)
    server.execute(f'CREATE DATABASE "{building}"')
    with pointed_at(connection, building):
        call_command("migrate", verbosity=0, interactive=False, database=connection.alias)
        call_command("createcachetable", verbosity=0, database=connection.alias)
    server.execute(f'ALTER DATABASE "{building}" RENAME TO "{template}"')


def _drop_others(server, *, keep: str) -> None:
    """Templates of other digests (an older schema): dropped, unless something uses them."""
    names = server.execute(
        "SELECT datname FROM pg_database WHERE datname LIKE %s AND datname <> %s",
        [PREFIX.replace("_", r"\_") + "%", keep],
    ).fetchall()
    for (name,) in names:
        try:
            _drop(server, name)
        except psycopg.errors.ObjectInUse:
            pass  # another run is cloning it right now: the next build drops it
