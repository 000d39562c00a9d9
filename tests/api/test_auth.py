"""`x-api-key` authentication, the per-key IP allowlist and TRUSTED_PROXIES (docs/design.md
section 3).

Every failure to authenticate is the same 401 `authentication_failed`, so a caller learns nothing
about which keys exist; a good key from outside its allowlist is 403 `ip_not_allowed`.
"""

import re
from datetime import timedelta
from unittest.mock import ANY

import pytest
from django.utils import timezone

from institutions.models import ApiKey
from institutions.services import api_key_revoke, api_key_rotate
from tests.conftest import Api
from tests.factories import issue_key

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
AUTH_FAILED = {
    "code": "authentication_failed",
    "message": "A valid API key is required in the x-api-key header.",
}
IP_NOT_ALLOWED = {
    "code": "ip_not_allowed",
    "message": "Requests from this address are not allowed for this API key.",
}


def assert_error(response, version, status, error):
    """The exact error body of `version` (v1 wraps it and adds `meta`)."""
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    payload = response.json()
    if version == "v1":
        assert payload == {
            "error": error,
            "meta": {"tranId": response["X-Request-Id"], "timestamp": ANY},
        }
        assert TIMESTAMP.match(payload["meta"]["timestamp"])
    else:
        assert payload == error


def probe(version, secret, remote_addr="127.0.0.1", headers=None):
    """GET /customers: the cheapest authenticated request."""
    return Api(version, secret, remote_addr=remote_addr).get("/customers", headers=headers)


# --- 401 ---------------------------------------------------------------------------------------


def test_missing_key_is_401(version, key):
    assert_error(probe(version, None), version, 401, AUTH_FAILED)


def test_401_carries_www_authenticate(version, key):
    # RFC 9110 section 15.5.2: a 401 response must say how to authenticate.
    response = probe(version, None)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'ApiKey header="x-api-key"'


@pytest.mark.parametrize(
    "presented",
    [
        "",
        "   ",
        "garbage",
        "tx_onlyprefix",
        "tx__secretwithoutprefix",
        "tx_prefixwithoutsecret_",
        "xx_abcdefghij_secretsecretsecret",
    ],
)
def test_malformed_key_is_401(version, key, presented):
    assert_error(probe(version, presented), version, 401, AUTH_FAILED)


def test_bearer_prefixed_key_is_401(version, key):
    assert_error(probe(version, f"Bearer {key[1]}"), version, 401, AUTH_FAILED)


def test_unknown_key_is_401(version, key):
    assert_error(probe(version, "tx_zzzzzzzzzz_" + "a" * 43), version, 401, AUTH_FAILED)


def test_wrong_secret_is_401(version, key):
    api_key, secret = key
    wrong = f"tx_{api_key.prefix}_{'A' * 43}"
    assert wrong != secret
    assert_error(probe(version, wrong), version, 401, AUTH_FAILED)


def test_key_in_query_string_is_ignored(version, key):
    response = Api(version, None).get("/customers", params={"x-api-key": key[1]})
    assert_error(response, version, 401, AUTH_FAILED)


def test_revoked_key_is_401(version, key):
    api_key, secret = key
    assert probe(version, secret).status_code == 200
    api_key_revoke(api_key=api_key)
    assert_error(probe(version, secret), version, 401, AUTH_FAILED)


def test_expired_key_is_401(version, key):
    api_key, secret = key
    ApiKey.objects.filter(pk=api_key.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert_error(probe(version, secret), version, 401, AUTH_FAILED)


def test_key_expiring_later_works(version, key):
    api_key, secret = key
    ApiKey.objects.filter(pk=api_key.pk).update(expires_at=timezone.now() + timedelta(minutes=1))
    assert probe(version, secret).status_code == 200


def test_bad_key_from_disallowed_address_is_401_not_403(version, key):
    # Without a valid key the allowlist is not consulted: nothing about it leaks.
    response = probe(version, "tx_zzzzzzzzzz_" + "a" * 43, remote_addr="198.51.100.7")
    assert_error(response, version, 401, AUTH_FAILED)


def test_valid_key_from_allowed_address_is_200(version, key):
    response = probe(version, key[1])
    assert response.status_code == 200
    assert response.json()["data"] == []


# --- rotation ----------------------------------------------------------------------------------


def test_rotated_key_works_during_grace_and_fails_after(version, key):
    old_key, old_secret = key
    issued = api_key_rotate(api_key=old_key, grace_hours=24)

    old_key.refresh_from_db()
    assert old_key.replaced_by_id == issued.api_key.id
    assert (
        timedelta(hours=23, minutes=59) < old_key.expires_at - timezone.now() <= timedelta(hours=24)
    )
    assert probe(version, old_secret).status_code == 200
    assert probe(version, issued.secret).status_code == 200

    ApiKey.objects.filter(pk=old_key.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert_error(probe(version, old_secret), version, 401, AUTH_FAILED)
    assert probe(version, issued.secret).status_code == 200


# --- allowlist ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("allow", "remote_addr", "allowed"),
    [
        ("10.1.0.0/16", "10.1.0.1", True),
        ("10.1.0.0/16", "10.1.255.254", True),
        ("10.1.0.0/16", "10.2.0.1", False),
        ("10.1.0.0/16", "10.0.255.255", False),
        ("203.0.113.7/32", "203.0.113.7", True),
        ("203.0.113.7/32", "203.0.113.8", False),
        ("::1/128", "::1", True),
        ("::1/128", "::2", False),
        ("::1/128", "127.0.0.1", False),
        ("2001:db8:abcd::/48", "2001:db8:abcd::1", True),
        ("2001:db8:abcd::/48", "2001:db8:abcd:ffff:ffff:ffff:ffff:ffff", True),
        ("2001:db8:abcd::/48", "2001:db8:abce::1", False),
        ("2001:db8:abcd::/48", "10.1.0.1", False),
        # An IPv4 client reaching a dual-stack socket arrives as an IPv4-mapped IPv6 address.
        ("10.1.0.0/16", "::ffff:10.1.0.1", True),
        ("10.1.0.0/16", "::ffff:10.2.0.1", False),
        # No usable peer address: deny.
        ("10.1.0.0/16", "", False),
    ],
)
def test_allowlist(version, institution, allow, remote_addr, allowed):
    _, secret = issue_key(institution, allow=(allow,))
    response = probe(version, secret, remote_addr=remote_addr)
    if allowed:
        assert response.status_code == 200, response.content
    else:
        assert_error(response, version, 403, IP_NOT_ALLOWED)


def test_key_with_several_networks_allows_each(version, institution):
    _, secret = issue_key(institution, allow=("10.1.0.0/16", "2001:db8:abcd::/48"))
    assert probe(version, secret, remote_addr="10.1.2.3").status_code == 200
    assert probe(version, secret, remote_addr="2001:db8:abcd::9").status_code == 200
    assert_error(probe(version, secret, remote_addr="10.9.0.1"), version, 403, IP_NOT_ALLOWED)


def test_allowlist_is_per_key(version, institution, key):
    # `key` allows 127.0.0.1 only; another key of the same institution allowing 10.0.0.0/8
    # does not widen it.
    issue_key(institution, allow=("10.0.0.0/8",))
    assert_error(probe(version, key[1], remote_addr="10.0.0.1"), version, 403, IP_NOT_ALLOWED)


# --- TRUSTED_PROXIES ---------------------------------------------------------------------------

CLIENT_NET = "203.0.113.0/24"


@pytest.mark.parametrize(
    ("trusted", "peer", "forwarded_for", "allowed"),
    [
        # Untrusted peers: X-Forwarded-For is ignored whatever it says.
        ([], "198.51.100.7", "203.0.113.9", False),
        ([], "203.0.113.9", "198.51.100.7", True),
        (["10.0.0.0/8"], "198.51.100.7", "203.0.113.9", False),
        (["10.0.0.0/8"], "203.0.113.9", "198.51.100.7", True),
        ([], "10.0.0.5", "203.0.113.9", False),
        # A trusted proxy: the right-most entry (the address the proxy saw) is the client.
        (["10.0.0.0/8"], "10.0.0.5", "203.0.113.9", True),
        (["10.0.0.0/8"], "10.0.0.5", "198.51.100.7", False),
        (["10.0.0.0/8"], "10.0.0.5", "198.51.100.7, 203.0.113.9", True),
        # ... and a left-most entry the client wrote itself is never believed.
        (["10.0.0.0/8"], "10.0.0.5", "203.0.113.9, 198.51.100.7", False),
        (["10.0.0.0/8"], "10.0.0.5", "203.0.113.9,198.51.100.7", False),
        # The right-most hop must be an address: an unparsable one ("unknown") leaves no client,
        # rather than letting the client-written hop before it count.
        (["10.0.0.0/8"], "10.0.0.5", "203.0.113.9, unknown", False),
        (["10.0.0.0/8"], "10.0.0.5", "203.0.113.9, ", False),
        # A trusted proxy without the header: the proxy itself is the peer (not allowed here).
        (["10.0.0.0/8"], "10.0.0.5", None, False),
        # IPv6 proxies and clients.
        (["fd00::/8"], "fd00::1", "2001:db8:abcd::5", True),
        (["fd00::/8"], "fd00::1", "2001:db8:abcd::5, 198.51.100.7", False),
        (["fd00::/8"], "2001:db8:ffff::1", "2001:db8:abcd::5", False),
    ],
)
def test_trusted_proxies(settings, version, institution, trusted, peer, forwarded_for, allowed):
    settings.TRUSTED_PROXIES = trusted
    _, secret = issue_key(institution, allow=(CLIENT_NET, "2001:db8:abcd::/48"))
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for is not None else None
    response = probe(version, secret, remote_addr=peer, headers=headers)
    if allowed:
        assert response.status_code == 200, response.content
    else:
        assert_error(response, version, 403, IP_NOT_ALLOWED)


def test_trusted_proxy_address_itself_is_not_the_client(settings, version, institution):
    # The key allows the proxy's network only: a client behind that proxy is still outside.
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    _, secret = issue_key(institution, allow=("10.0.0.0/8",))
    response = probe(
        version, secret, remote_addr="10.0.0.5", headers={"X-Forwarded-For": "1.2.3.4"}
    )
    assert_error(response, version, 403, IP_NOT_ALLOWED)
