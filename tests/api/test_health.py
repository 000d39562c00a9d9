"""The probes (api/health.py, docs/operations.md): no key, JSON, never cached, nothing
sensitive; ready says 503 when the database does not answer or a migration is not applied."""

import pytest
from django.db import OperationalError, connection
from django.db.migrations.loader import MigrationLoader
from django.test import Client, override_settings

from api import health


@pytest.fixture
def client():
    return Client()


@pytest.fixture(autouse=True)
def fresh_process(monkeypatch):
    # Each test as a new process: the migrations not yet seen applied.
    monkeypatch.setattr(health, "_migrations_applied", False)


def test_live_answers_without_a_key(client, db):
    response = client.get("/health/live")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response["Cache-Control"] == "no-store"


def test_ready_when_the_database_answers_and_every_migration_is_applied(client, db):
    response = client.get("/health/ready")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "checks": {"database": "ok", "migrations": "ok"},
    }
    assert response["Cache-Control"] == "no-store"


def test_not_ready_while_a_migration_is_not_applied(client, db):
    # The newest migration of an app, as a deploy that has not run `migrate` yet would leave
    # it (named from the graph: a fixed name stops being the newest when one is added).
    (name,) = [n for app, n in MigrationLoader(None).graph.leaf_nodes() if app == "accounts"]
    with connection.cursor() as cursor:  # rolled back with the test
        cursor.execute("DELETE FROM django_migrations WHERE app = 'accounts' AND name = %s", [name])
        assert cursor.rowcount == 1
    response = client.get("/health/ready")
    assert response.status_code == 503
    assert response.json() == {
        "status": "unavailable",
        "checks": {"database": "ok", "migrations": "pending"},
    }


def test_not_ready_while_a_migration_before_the_newest_is_not_applied(client, db):
    """A migration that is not the newest of its app, missing while the ones after it are
    recorded (a history edited by hand, a `--fake` gone wrong): `migrate` would refuse such a
    database, and so does the probe."""
    with connection.cursor() as cursor:  # rolled back with the test
        cursor.execute(
            "DELETE FROM django_migrations WHERE app = 'accounts' AND name = %s",
            ["0002_accounts_ledger_holds"],
        )
        assert cursor.rowcount == 1
    response = client.get("/health/ready")
    assert response.status_code == 503
    assert response.json()["checks"] == {"database": "ok", "migrations": "pending"}


def test_not_ready_while_the_database_does_not_answer(client, db):
    def refuse(execute, sql, params, many, context):
        raise OperationalError("connection refused")

    with connection.execute_wrapper(refuse):
        response = client.get("/health/ready")
    assert response.status_code == 503
    assert response.json() == {
        "status": "unavailable",
        "checks": {"database": "unreachable", "migrations": "unknown"},
    }
    assert b"refused" not in response.content  # no internals


@pytest.mark.parametrize("path", ["/health/live", "/health/ready"])
def test_only_get(client, db, path):
    assert client.post(path).status_code == 405


@override_settings(SECURE_SSL_REDIRECT=True, SECURE_REDIRECT_EXEMPT=[r"^health/"])
def test_probes_over_plain_http_are_not_redirected_where_the_api_is(client, db):
    assert client.get("/health/live").status_code == 200
    assert client.get("/TX/v2/customers").status_code == 301
