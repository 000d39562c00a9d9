"""Admin logins are throttled by django-axes: a (username, client address) pair is locked out
after AXES_FAILURE_LIMIT failures, by the same client address the API uses (a forged
X-Forwarded-For changes nothing), until the cool-off passes or `manage.py axes_reset`."""

import io

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import get_user_model
from django.core.management import call_command

from tests.conftest import Api

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"
LOGIN = "/admin/login/"
LOCKED = "Account locked: too many login attempts"


@pytest.fixture
def staff():
    return get_user_model().objects.create_superuser("ops", "ops@example.com", PASSWORD)


@pytest.fixture
def colleague():
    return get_user_model().objects.create_superuser("ops2", "ops2@example.com", PASSWORD)


def log_in(client, username, password, remote_addr="203.0.113.5", **headers):
    return client.post(
        LOGIN,
        {"username": username, "password": password, "next": "/admin/"},
        REMOTE_ADDR=remote_addr,
        **headers,
    )


def logged_in(response) -> bool:
    return response.status_code == 302 and response["Location"] == "/admin/"


def fail_until_locked(client, username, remote_addr="203.0.113.5", **headers):
    """Four wrong passwords get the form again; the fifth (the limit) the lockout."""
    for _ in range(4):
        response = log_in(client, username, "wrong", remote_addr, **headers)
        assert response.status_code == 200
        assert "Please enter the correct username and password" in response.content.decode()
    response = log_in(client, username, "wrong", remote_addr, **headers)
    assert response.status_code == 429
    assert LOCKED in response.content.decode()


def test_five_wrong_passwords_lock_the_user_out_from_that_address(client, staff, colleague):
    fail_until_locked(client, "ops")

    refused = log_in(client, "ops", PASSWORD)
    assert refused.status_code == 429
    assert LOCKED in refused.content.decode()
    assert client.get("/admin/").status_code == 302  # not logged in
    # The pair is locked, not the user everywhere nor the address for everyone.
    assert logged_in(log_in(client, "ops", PASSWORD, remote_addr="198.51.100.20"))
    client.logout()
    assert logged_in(log_in(client, "ops2", PASSWORD))


def test_a_forged_forwarded_for_does_not_dodge_the_lockout(client, staff):
    fail_until_locked(client, "ops", HTTP_X_FORWARDED_FOR="192.0.2.1")

    # The peer is no trusted proxy: its X-Forwarded-For is ignored, whatever it says.
    for forged in ("192.0.2.2", "198.51.100.20"):
        response = log_in(client, "ops", PASSWORD, HTTP_X_FORWARDED_FOR=forged)
        assert response.status_code == 429
    assert list(AccessAttempt.objects.values_list("ip_address", flat=True)) == ["203.0.113.5"]


def test_behind_a_trusted_proxy_each_client_address_counts(client, staff, settings):
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    proxy = "10.0.0.2"
    fail_until_locked(client, "ops", proxy, HTTP_X_FORWARDED_FOR="203.0.113.5")

    # The right-most hop is the client the proxy saw; what a client writes before it is not.
    assert (
        log_in(client, "ops", PASSWORD, proxy, HTTP_X_FORWARDED_FOR="203.0.113.5").status_code
        == 429
    )
    assert (
        log_in(
            client, "ops", PASSWORD, proxy, HTTP_X_FORWARDED_FOR="198.51.100.20, 203.0.113.5"
        ).status_code
        == 429
    )
    assert logged_in(log_in(client, "ops", PASSWORD, proxy, HTTP_X_FORWARDED_FOR="198.51.100.20"))


def test_axes_reset_lifts_the_lockout(client, staff):
    fail_until_locked(client, "ops")
    assert log_in(client, "ops", PASSWORD).status_code == 429

    call_command("axes_reset", stdout=io.StringIO())

    assert logged_in(log_in(client, "ops", PASSWORD))
    assert client.get("/admin/").status_code == 200


def test_a_successful_login_clears_the_failures(client, staff):
    for _ in range(4):
        assert log_in(client, "ops", "wrong").status_code == 200
    assert logged_in(log_in(client, "ops", PASSWORD))
    client.logout()

    # The count starts again: four more failures are not a lockout.
    for _ in range(4):
        assert log_in(client, "ops", "wrong").status_code == 200
    assert logged_in(log_in(client, "ops", PASSWORD))


def test_the_api_is_not_watched_by_axes(version, key):
    for _ in range(6):
        assert Api(version, "tx_nope_nope").get("/customers").status_code == 401
    assert Api(version, key[1]).get("/customers").status_code == 200
    assert AccessAttempt.objects.count() == 0
