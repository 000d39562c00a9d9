"""Production settings, imported in a fresh interpreter with a minimal valid environment: the
HTTPS settings (HSTS, redirect, secure cookies, the proxy's protocol header), the database pools,
the rate limiter's batches."""

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NAMES = (
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "SECURE_SSL_REDIRECT",
    "SECURE_PROXY_SSL_HEADER",
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "SECURE_CONTENT_TYPE_NOSNIFF",
)


# Prints the HTTPS settings as JSON.
HTTPS_SETTINGS = (
    "import json; from config.settings import production as p; "
    f"print(json.dumps({{n: getattr(p, n, None) for n in {NAMES!r}}}))"
)


def production(code: str = HTTPS_SETTINGS, **environment) -> subprocess.CompletedProcess:
    """Import config.settings.production with the secrets it needs plus `environment`, in a
    subprocess (settings are read once per process), and run `code` there."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("SECURE_", "SESSION_COOKIE", "CSRF_COOKIE"))
    }
    env.update(
        {
            "DATABASE_URL": "postgres://u:p@db.example.com/tx",
            "SECRET_KEY": "s" * 50,
            "FIELD_ENCRYPTION_KEYS": "k1:" + base64.b64encode(b"k" * 32).decode(),
            "PIN_KEY": "p" * 32,
            "PAN_FINGERPRINT_KEY": "f" * 32,
            "STAFF_RECOVERY_CODE_KEY": "r" * 32,
            **environment,
        }
    )
    return subprocess.run(  # noqa: S603 (this interpreter, fixed arguments)
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True
    )


def settings_of(**environment) -> dict:
    result = production(**environment)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_https_defaults():
    assert settings_of() == {
        "SECURE_HSTS_SECONDS": 31_536_000,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
        "SECURE_HSTS_PRELOAD": False,
        "SECURE_SSL_REDIRECT": True,
        "SECURE_PROXY_SSL_HEADER": None,
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SECURE_CONTENT_TYPE_NOSNIFF": True,
    }


def test_https_settings_come_from_the_environment():
    assert settings_of(
        SECURE_HSTS_SECONDS="600",
        SECURE_HSTS_INCLUDE_SUBDOMAINS="0",
        SECURE_HSTS_PRELOAD="1",
        SECURE_SSL_REDIRECT="0",
        SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO,https",
    ) == {
        "SECURE_HSTS_SECONDS": 600,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": False,
        "SECURE_HSTS_PRELOAD": True,
        "SECURE_SSL_REDIRECT": False,
        "SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"],  # a tuple, as JSON
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SECURE_CONTENT_TYPE_NOSNIFF": True,
    }


@pytest.mark.parametrize(
    "value", ["X_FORWARDED_PROTO,https", "HTTP_X_FORWARDED_PROTO", "HTTP_A,https,http"]
)
def test_a_malformed_proxy_header_refuses_to_start(value):
    result = production(SECURE_PROXY_SSL_HEADER=value)
    assert result.returncode != 0
    assert 'SECURE_PROXY_SSL_HEADER must be "HTTP_<HEADER>,<value>"' in result.stderr


def test_behind_a_tls_proxy_the_redirect_is_harmless(settings, client, db):
    """What the production values do: plain http is sent to https, unless the trusted proxy's
    header says the client already used https; then the answer carries HSTS."""
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_HSTS_SECONDS = 31_536_000
    settings.SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

    plain = client.get("/admin/login/")
    assert plain.status_code == 301
    assert plain["Location"] == "https://testserver/admin/login/"

    proxied = client.get("/admin/login/", HTTP_X_FORWARDED_PROTO="https")
    assert proxied.status_code == 200
    assert proxied["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains"


# Each alias's pool options and health check, the connection class by its name.
DATABASES_CODE = (
    "import json; from config.settings import production as p; print(json.dumps({"
    "a: dict(d['OPTIONS']['pool'], connection_class=d['OPTIONS']['pool']['connection_class']"
    ".__qualname__, CONN_HEALTH_CHECKS=d['CONN_HEALTH_CHECKS'], CONN_MAX_AGE="
    "d.get('CONN_MAX_AGE'), connect_timeout=d['OPTIONS'].get('connect_timeout'))"
    " for a, d in p.DATABASES.items()}))"
)


def test_every_pool_checks_its_connections_and_tries_the_last_primary_first():
    """docs/deployment.md, "When the primary goes away": the pool's `check` (Django passes
    it when CONN_HEALTH_CHECKS is on), the host that accepted last first."""
    result = production(
        DATABASES_CODE,
        DATABASE_URL="postgres://u:p@db1.example.com,db2.example.com/tx"
        "?target_session_attrs=read-write",
        DATABASE_REPLICA_URLS="postgres://u:p@replica.example.com/tx",
        DATABASE_POOL_TIMEOUT="7",
    )
    assert result.returncode == 0, result.stderr
    pool = {
        "min_size": 2,
        "max_size": 20,
        "connection_class": "PrimaryFirstConnection",
        "CONN_HEALTH_CHECKS": True,
        "CONN_MAX_AGE": None,
    }
    assert json.loads(result.stdout) == {
        "default": {**pool, "timeout": 7, "connect_timeout": 2},
        # both 2 s: DATABASE_REPLICA_CONNECT_TIMEOUT
        "replica_1": {**pool, "timeout": 2, "connect_timeout": 2},
    }


def test_a_connect_timeout_in_the_url_wins():
    result = production(
        DATABASES_CODE,
        DATABASE_URL="postgres://u:p@db1.example.com,db2.example.com/tx?connect_timeout=5",
        DATABASE_CONNECT_TIMEOUT="3",
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["default"]["connect_timeout"] == 5
    result = production(DATABASES_CODE, DATABASE_CONNECT_TIMEOUT="3")
    assert json.loads(result.stdout)["default"]["connect_timeout"] == 3


# The rate limiter's batches (api/ratelimit.py: the bound they cost).
RATE_LIMIT_CODE = (
    "import json; from config.settings import production as p; "
    "print(json.dumps([p.RATE_LIMIT_FLUSH_EVERY, p.RATE_LIMIT_FLUSH_SECONDS]))"
)


def test_rate_limit_batches_default_to_10_requests_or_1_second():
    result = production(RATE_LIMIT_CODE)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [10, 1.0]
    result = production(
        RATE_LIMIT_CODE, RATE_LIMIT_FLUSH_EVERY="1", RATE_LIMIT_FLUSH_SECONDS="0.25"
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [1, 0.25]


@pytest.mark.parametrize(
    "environment",
    [
        {"RATE_LIMIT_FLUSH_EVERY": "0"},
        {"RATE_LIMIT_FLUSH_EVERY": "-3"},
        {"RATE_LIMIT_FLUSH_SECONDS": "0"},
        {"RATE_LIMIT_FLUSH_SECONDS": "-1.5"},
    ],
)
def test_rate_limit_batches_out_of_range_refuse_to_start(environment):
    result = production(RATE_LIMIT_CODE, **environment)
    assert result.returncode == 1
    assert (
        "ImproperlyConfigured: RATE_LIMIT_FLUSH_EVERY must be at least 1 and "
        "RATE_LIMIT_FLUSH_SECONDS more than 0." in result.stderr
    )


@pytest.mark.parametrize("value", ["", "dev-only-staff-recovery-code-key"])
def test_the_recovery_codes_key_is_required_and_never_the_development_one(value):
    result = production(STAFF_RECOVERY_CODE_KEY=value)
    assert result.returncode != 0
    assert "STAFF_RECOVERY_CODE_KEY is a development value or too short." in result.stderr


def test_the_sandbox_clock_refuses_to_start():
    result = production(SANDBOX_CLOCK="1")
    assert result.returncode != 0
    assert "SANDBOX_CLOCK is for the sandbox only, never in production." in result.stderr
