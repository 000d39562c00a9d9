import json
import uuid

import pytest
from django.db import connections
from django.test import Client

from institutions import key_cache
from tests import fast_flush, template_database
from tests.factories import InstitutionFactory, issue_key
from tests.own_database import own_database  # noqa: F401 (a fixture, for the migration tests)
from tests.staff import sign_in

fast_flush.install()  # the flush after a transactional test keeps unchanged content types


# The suite's longest tests (a database migrated back and forward, a replica, a browser, a
# generated client, a property) are handed out first: on two workers (scripts/test), one of
# them started last would leave the other worker idle for its length at the end.
LONGEST_FIRST = (
    "tests/test_migrations_forward.py",
    "tests/test_generated_client.py",
    "tests/api/test_replicas.py",
    "tests/backoffice/test_browser.py",
    "tests/backoffice/test_upgrade.py",
    "tests/backoffice/test_second_factor_upgrade.py",
    "tests/payments/test_properties.py",
    "tests/payments/test_properties_sepa.py",
    "tests/reconciliation/test_matching.py",
    "tests/backoffice/test_money_display.py",
)


def pytest_collection_modifyitems(config, items):
    """The longest files first, in this order; every other test after them as collected (a
    stable sort: each file's tests keep their order)."""

    def rank(item) -> int:
        path = item.nodeid.split("::")[0]
        return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)


@pytest.fixture(scope="session")
def django_db_setup(
    request,
    django_test_environment,
    django_db_blocker,
    django_db_createdb,
    django_db_modify_db_settings,
):
    """pytest-django's, but each process's test database is a clone of one migrated template
    (`tests.template_database`) instead of a database migrated from zero: handed to Django's
    `setup_databases` with `keepdb`, whose `migrate` then has nothing to apply. Dropped at the
    end like pytest-django's own."""
    from django.test.utils import setup_databases, teardown_databases
    from pytest_django.fixtures import _get_databases_for_setup

    aliases, serialized_aliases = _get_databases_for_setup(request.session.items)
    with django_db_blocker.unblock():
        # Only the aliases the settings have, and no mirror: others (a replica a fixture adds
        # for its test) are skipped by setup_databases too.
        for alias in connections:
            if alias in aliases and not connections[alias].settings_dict["TEST"].get("MIRROR"):
                template_database.clone_for_this_process(alias, rebuild=django_db_createdb)
        databases = setup_databases(
            verbosity=request.config.option.verbose,
            interactive=False,
            aliases=aliases,
            serialized_aliases=serialized_aliases,
            keepdb=True,
        )
    yield
    with django_db_blocker.unblock():
        teardown_databases(databases, verbosity=request.config.option.verbose, keepdb=False)


class Api:
    """A test client speaking one API version with one key.

    Writes get a fresh UUID v4 `Idempotency-Key` unless `idempotency_key` is given (pass
    `idempotency_key=None` to send none).
    """

    _AUTO = object()

    def __init__(self, version: str, key: str | None, remote_addr: str = "127.0.0.1"):
        self.version = version
        self.key = key
        self.client = Client(REMOTE_ADDR=remote_addr)

    def url(self, path: str) -> str:
        return f"/TX/{self.version}{path}"

    def headers(self, extra=None, idempotency_key=None):
        headers = {}
        if self.key is not None:
            headers["x-api-key"] = self.key
        if idempotency_key is not None:
            headers["Idempotency-Key"] = str(idempotency_key)
        headers.update(extra or {})
        return headers

    def get(self, path, params=None, headers=None):
        return self.client.get(self.url(path), params or {}, headers=self.headers(headers))

    def _write(self, method, path, body, idempotency_key, headers, content_type):
        if idempotency_key is self._AUTO:
            idempotency_key = uuid.uuid4()
        data = body if isinstance(body, str | bytes) else json.dumps(body)
        return getattr(self.client, method)(
            self.url(path),
            data=data,
            content_type=content_type,
            headers=self.headers(headers, idempotency_key),
        )

    def post(
        self,
        path,
        body=None,
        *,
        idempotency_key=_AUTO,
        headers=None,
        content_type="application/json",
    ):
        return self._write(
            "post", path, body if body is not None else {}, idempotency_key, headers, content_type
        )

    def patch(
        self,
        path,
        body=None,
        *,
        idempotency_key=_AUTO,
        headers=None,
        content_type="application/json",
    ):
        return self._write(
            "patch", path, body if body is not None else {}, idempotency_key, headers, content_type
        )


@pytest.fixture
def cached_keys(settings):
    """API keys read through the per-process cache (`institutions.key_cache`), as in production,
    for tests that send thousands of requests with keys that nothing changes during the test:
    the key's query was a third of the cost of a refused request. Emptied before and after, so
    that no other test sees a key of this one. Off elsewhere (config/settings/test.py)."""
    key_cache.forget()
    settings.API_KEY_CACHE_SECONDS = 3600
    yield
    key_cache.forget()


@pytest.fixture
def institution(db):
    return InstitutionFactory()


@pytest.fixture
def other_institution(db):
    return InstitutionFactory()


@pytest.fixture
def key(institution):
    """(ApiKey, secret) for `institution`, allowed from 127.0.0.1 (the test client's address)."""
    return issue_key(institution)


@pytest.fixture(params=["v1", "v2"])
def version(request):
    return request.param


@pytest.fixture
def api(version, key):
    """A client for `institution` in the parametrized version."""
    return Api(version, key[1])


@pytest.fixture
def api_v2(key):
    return Api("v2", key[1])


@pytest.fixture
def api_v1(key):
    return Api("v1", key[1])


@pytest.fixture
def other_api(version, other_institution):
    """A client of another institution, same version."""
    return Api(version, issue_key(other_institution)[1])


def body_of(response, version):
    """The resource of a success body, whatever the version's envelope."""
    payload = response.json()
    return payload["data"] if version == "v1" else payload


def error_of(response, version):
    """The {code, message, details?} of an error body, whatever the version."""
    payload = response.json()
    return payload["error"] if version == "v1" else payload


@pytest.fixture
def admin_client(db, admin_user):
    """pytest-django's `admin_client`, signed in with the second factor the back office
    requires (tests/staff.py)."""
    client = Client()
    sign_in(client, admin_user)
    return client
