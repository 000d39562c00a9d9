"""API keys from a per-process cache with bounded staleness (`institutions.key_cache`).

Whatever changes a key in the database takes effect within API_KEY_CACHE_SECONDS in every
process; a change made through the services of this process at once (when it commits); the
secret and the expiry are checked on every request, cached or not.
"""

import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from institutions import key_cache
from institutions.models import ApiKey
from institutions.services import allowlist_remove, api_key_revoke, api_key_set_scopes
from tests.conftest import Api
from tests.factories import issue_key

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def cache_on(settings):
    settings.API_KEY_CACHE_SECONDS = 1
    key_cache.forget()
    yield
    key_cache.forget()


def key_queries(api: Api) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert api.get("/customers").status_code == 200
    return sum('FROM "api_apikey"' in query["sql"] for query in queries.captured_queries)


def test_a_key_is_read_once_per_ttl(institution):
    _, secret = issue_key(institution)
    api = Api("v2", secret)
    assert key_queries(api) == 1
    assert key_queries(api) == 0  # from the cache
    time.sleep(1.05)
    assert key_queries(api) == 1  # read again after the TTL


def test_a_change_in_another_process_takes_effect_within_the_ttl(institution):
    api_key, secret = issue_key(institution)
    api = Api("v2", secret)
    assert api.get("/customers").status_code == 200
    # Another process revokes it: this one may use its copy for at most the TTL.
    ApiKey.objects.filter(pk=api_key.pk).update(revoked_at=timezone.now())
    assert api.get("/customers").status_code == 200
    time.sleep(1.05)
    assert api.get("/customers").status_code == 401


@pytest.mark.parametrize("change", ["revoke", "scopes", "allowlist"])
def test_a_change_through_this_process_takes_effect_at_once(
    institution, change, django_capture_on_commit_callbacks
):
    api_key, secret = issue_key(institution)
    api = Api("v2", secret)
    assert api.get("/customers").status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        if change == "revoke":
            api_key_revoke(api_key=api_key)
        elif change == "scopes":
            api_key_set_scopes(api_key=api_key, scopes=["customers:write"])
        else:
            allowlist_remove(api_key=api_key, cidr="127.0.0.1/32")
    expected = {"revoke": 401, "scopes": 403, "allowlist": 403}[change]
    assert api.get("/customers").status_code == expected


def test_a_wrong_secret_is_refused_from_the_cache_too(institution):
    _, secret = issue_key(institution)
    assert Api("v2", secret).get("/customers").status_code == 200
    forged = secret[:-4] + ("aaaa" if not secret.endswith("aaaa") else "bbbb")
    assert Api("v2", forged).get("/customers").status_code == 401


def test_the_expiry_is_checked_on_every_request(institution):
    api_key, secret = issue_key(institution)
    ApiKey.objects.filter(pk=api_key.pk).update(expires_at=timezone.now() + timedelta(seconds=0.5))
    api = Api("v2", secret)
    assert api.get("/customers").status_code == 200  # cached, with its expiry
    time.sleep(0.6)
    assert api.get("/customers").status_code == 401  # within the TTL, but expired


def test_unknown_prefixes_are_not_cached(institution):
    issue_key(institution)
    for n in range(5):
        Api("v2", f"tx_{'z' * 9}{n}_{'a' * 43}").get("/customers")
    assert not any(prefix.startswith("zzzz") for prefix in key_cache._keys)


def test_off_with_zero(institution, settings):
    settings.API_KEY_CACHE_SECONDS = 0
    _, secret = issue_key(institution)
    api = Api("v2", secret)
    assert key_queries(api) == 1
    assert key_queries(api) == 1
