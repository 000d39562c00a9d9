"""What the benchmarks share: PostgreSQL databases of their own on the service's server, the
production environment the service runs with, and percentiles."""

import base64
import os
import secrets
from urllib.parse import urlsplit, urlunsplit

import psycopg


def server_url() -> str:
    """URL of the maintenance database `postgres` on the server the service uses."""
    if os.environ.get("DATABASE_URL"):
        return with_database(os.environ["DATABASE_URL"], "postgres")
    from core import embedded_db

    return embedded_db.server().get_uri()


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + name))


def recreate_database(admin_url: str, name: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def drop_database(admin_url: str, name: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def service_environment(url: str, *, rate_limit: int) -> dict:
    """Production settings on the database `url`, with keys made for this run only; requests
    per window per API key and per institution: `rate_limit` (0: no limit)."""
    return {
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DATABASE_URL": url,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "FIELD_ENCRYPTION_KEYS": "bench:" + base64.b64encode(os.urandom(32)).decode(),
        "PIN_KEY": secrets.token_urlsafe(32),
        "PAN_FINGERPRINT_KEY": secrets.token_urlsafe(32),
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",  # plain http on loopback, no TLS proxy
        "RATE_LIMIT_REQUESTS": str(rate_limit),
        "RATE_LIMIT_INSTITUTION_REQUESTS": str(rate_limit),
    }


def percentile(sorted_values: list[float], fraction: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    if not sorted_values:
        return float("nan")
    rank = max(1, round(fraction * len(sorted_values) + 0.5))
    return sorted_values[min(rank, len(sorted_values)) - 1]
