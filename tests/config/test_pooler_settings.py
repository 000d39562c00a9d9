"""DATABASE_POOLER (config/settings/base.py): behind a transaction-mode pooler, preparing is
off, and a prepare threshold set with it is refused at start (docs/deployment.md, PgBouncer).
Settings are imported in a fresh interpreter: they are read once per process."""

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def production(**environment) -> subprocess.CompletedProcess:
    """Import config.settings.production with its secrets plus `environment`; prints the
    primary's and the replica's prepare_threshold as JSON."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in ("DATABASE_POOLER", "DATABASE_PREPARE_THRESHOLD")
    }
    env.update(
        {
            "DATABASE_URL": "postgres://u:p@db.example.com/tx",
            "DATABASE_REPLICA_URLS": "postgres://u:p@replica.example.com/tx",
            "SECRET_KEY": "s" * 50,
            "FIELD_ENCRYPTION_KEYS": "k1:" + base64.b64encode(b"k" * 32).decode(),
            "PIN_KEY": "p" * 32,
            "PAN_FINGERPRINT_KEY": "f" * 32,
            "STAFF_RECOVERY_CODE_KEY": "r" * 32,
            **environment,
        }
    )
    code = (
        "import json; from config.settings import production as p; "
        "print(json.dumps([p.DATABASES[a]['OPTIONS']['prepare_threshold']"
        " for a in ('default', 'replica_1')]))"
    )
    return subprocess.run(  # noqa: S603 (this interpreter, fixed arguments)
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True
    )


def thresholds(**environment) -> list:
    result = production(**environment)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_without_a_pooler_statements_are_prepared_after_five_runs():
    assert thresholds() == [5, 5]
    assert thresholds(DATABASE_PREPARE_THRESHOLD="off") == [None, None]


def test_a_transaction_pooler_turns_preparing_off():
    assert thresholds(DATABASE_POOLER="transaction") == [None, None]
    assert thresholds(DATABASE_POOLER="transaction", DATABASE_PREPARE_THRESHOLD="off") == [
        None,
        None,
    ]


@pytest.mark.parametrize(
    ("environment", "message"),
    [
        (
            {"DATABASE_POOLER": "transaction", "DATABASE_PREPARE_THRESHOLD": "5"},
            "DATABASE_POOLER=transaction: DATABASE_PREPARE_THRESHOLD must be off (or unset)",
        ),
        ({"DATABASE_POOLER": "session"}, 'DATABASE_POOLER must be "transaction" or unset.'),
    ],
)
def test_a_pooler_with_preparing_on_refuses_to_start(environment, message):
    result = production(**environment)
    assert result.returncode == 1
    assert f"ImproperlyConfigured: {message}" in result.stderr
