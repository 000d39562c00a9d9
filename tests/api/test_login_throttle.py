"""Admin logins are throttled by django-axes (PCI DSS 8.3.4): a username is locked out, from
every address, after AXES_FAILURE_LIMIT failures (wrong passwords or wrong second-factor codes),
until the cool-off passes or `manage.py axes_reset_username`. The address recorded is the one
the API uses (a forged X-Forwarded-For changes nothing). Each lockout leaves a `SignInLockout`
row and a WARNING line on `tx.staff` (backoffice.lockouts)."""

import io
import logging
from datetime import timedelta
from unittest import mock

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone

from backoffice.models import SignInLockout
from tests.conftest import Api
from tests.staff import app_code, app_device

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"
LOGIN = "/admin/login/"
LOCKED = "Sign-in locked: too many failed attempts"


@pytest.fixture
def staff():
    user = get_user_model().objects.create_superuser("ops", "ops@example.com", PASSWORD)
    app_device(user)
    return user


@pytest.fixture
def colleague():
    user = get_user_model().objects.create_superuser("ops2", "ops2@example.com", PASSWORD)
    app_device(user)
    return user


def log_in(client, username, password, remote_addr="203.0.113.5", code=None, **headers):
    if code is None and password == PASSWORD:
        code = app_code(app_device(get_user_model().objects.get(username=username)))
    return client.post(
        LOGIN,
        {"username": username, "password": password, "otp_token": code or "", "next": "/admin/"},
        REMOTE_ADDR=remote_addr,
        **headers,
    )


def logged_in(response) -> bool:
    return response.status_code == 302 and response["Location"] == "/admin/"


def fail_until_locked(client, username, addresses=("203.0.113.5",) * 5, **headers):
    """Four wrong passwords get the form again; the fifth (the limit) the lockout. Each from
    the next of `addresses`."""
    for remote_addr in addresses[:4]:
        response = log_in(client, username, "wrong", remote_addr, **headers)
        assert response.status_code == 200
        assert "Please enter the correct username and password" in response.content.decode()
    response = log_in(client, username, "wrong", addresses[4], **headers)
    assert response.status_code == 429
    assert LOCKED in response.content.decode()


def test_five_wrong_passwords_lock_the_username_out_everywhere(client, staff, colleague):
    fail_until_locked(client, "ops")

    for address in ("203.0.113.5", "198.51.100.20"):
        refused = log_in(client, "ops", PASSWORD, remote_addr=address)
        assert refused.status_code == 429
        assert LOCKED in refused.content.decode()
    assert client.get("/admin/").status_code == 302  # not logged in
    # The username is locked, not the address for everyone.
    assert logged_in(log_in(client, "ops2", PASSWORD))
    assert client.get("/admin/").status_code == 200


def test_failures_from_many_addresses_lock_the_username(client, staff):
    addresses = [f"198.51.100.{n}" for n in range(1, 6)]
    fail_until_locked(client, "ops", addresses)

    # A sixth address, with the right password and code: still locked.
    refused = log_in(client, "ops", PASSWORD, remote_addr="192.0.2.77")
    assert refused.status_code == 429
    assert client.get("/admin/").status_code == 302


def test_wrong_codes_count_towards_the_lockout(client, staff):
    started = timezone.now()

    def minutes_on(n):
        # After a wrong code django-otp checks none for a while (1 s, 2 s, 4 s, ...): each try
        # comes a minute after the last, so each is checked, and counted.
        return mock.patch("django.utils.timezone.now", return_value=started + timedelta(minutes=n))

    wrong = f"{(int(app_code(app_device(staff))) + 500_000) % 10**6:06d}"
    for n in range(1, 5):
        with minutes_on(n):
            response = log_in(client, "ops", PASSWORD, code=wrong)
        assert response.status_code == 200
        assert "That code is wrong" in response.content.decode()
    with minutes_on(5):
        assert log_in(client, "ops", PASSWORD, code=wrong).status_code == 429
    with minutes_on(6):
        assert log_in(client, "ops", PASSWORD).status_code == 429  # the right code too, now
        assert client.get("/admin/").status_code == 302


def test_each_lockout_is_recorded_and_logged(client, staff, caplog):
    addresses = [f"198.51.100.{n}" for n in range(1, 6)]
    with caplog.at_level(logging.WARNING, logger="tx.staff"):
        fail_until_locked(client, "ops", addresses)

    lockout = SignInLockout.objects.get()
    assert (lockout.username, lockout.user, lockout.ip_address, lockout.refused_attempts) == (
        "ops",
        staff,
        "198.51.100.5",
        0,
    )
    [line] = [r for r in caplog.records if r.name == "tx.staff"]
    assert (line.levelno, line.getMessage(), line.username, line.ipAddress) == (
        logging.WARNING,
        "staff sign-in locked out",
        "ops",
        "198.51.100.5",
    )
    assert PASSWORD not in caplog.text

    # Sign-ins refused while it lasts are counted on the same lockout, not new ones.
    assert log_in(client, "ops", PASSWORD, remote_addr="192.0.2.1").status_code == 429
    assert log_in(client, "ops", "wrong", remote_addr="192.0.2.2").status_code == 429
    lockout.refresh_from_db()
    assert lockout.refused_attempts == 2
    assert SignInLockout.objects.count() == 1

    # Lifted and locked again: a second lockout.
    call_command("axes_reset_username", "ops", stdout=io.StringIO())
    fail_until_locked(client, "ops")
    assert list(SignInLockout.objects.order_by("pk").values_list("username", "ip_address")) == [
        ("ops", "198.51.100.5"),
        ("ops", "203.0.113.5"),
    ]


def test_a_username_nobody_has_is_locked_and_recorded_too(client):
    fail_until_locked(client, "nobody")
    lockout = SignInLockout.objects.get()
    assert (lockout.username, lockout.user) == ("nobody", None)


def test_a_forged_forwarded_for_is_not_the_address_recorded(client, staff):
    fail_until_locked(client, "ops", HTTP_X_FORWARDED_FOR="192.0.2.1")

    # The peer is no trusted proxy: its X-Forwarded-For is ignored, whatever it says.
    for forged in ("192.0.2.2", "198.51.100.20"):
        response = log_in(client, "ops", PASSWORD, HTTP_X_FORWARDED_FOR=forged)
        assert response.status_code == 429
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"203.0.113.5"}
    assert SignInLockout.objects.get().ip_address == "203.0.113.5"


def test_behind_a_trusted_proxy_the_client_address_is_recorded(client, staff, settings):
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    proxy = "10.0.0.2"
    fail_until_locked(client, "ops", (proxy,) * 5, HTTP_X_FORWARDED_FOR="203.0.113.5")

    # The right-most hop is the client the proxy saw; what a client writes before it is not.
    assert SignInLockout.objects.get().ip_address == "203.0.113.5"
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"203.0.113.5"}
    assert (
        log_in(
            client, "ops", PASSWORD, proxy, HTTP_X_FORWARDED_FOR="198.51.100.20, 203.0.113.5"
        ).status_code
        == 429
    )


def test_axes_reset_username_lifts_the_lockout(client, staff):
    fail_until_locked(client, "ops")
    assert log_in(client, "ops", PASSWORD).status_code == 429

    call_command("axes_reset_username", "ops", stdout=io.StringIO())

    assert logged_in(log_in(client, "ops", PASSWORD))
    assert client.get("/admin/").status_code == 200


def test_a_successful_login_clears_the_failures(client, staff):
    for _ in range(4):
        assert log_in(client, "ops", "wrong").status_code == 200
    assert logged_in(log_in(client, "ops", PASSWORD))
    client.logout()

    # The count starts again: four more failures are not a lockout.
    for _ in range(4):
        assert log_in(client, "ops", "wrong", remote_addr="198.51.100.20").status_code == 200
    assert logged_in(log_in(client, "ops", PASSWORD))


def test_the_api_is_not_watched_by_axes(version, key):
    for _ in range(6):
        assert Api(version, "tx_nope_nope").get("/customers").status_code == 401
    assert Api(version, key[1]).get("/customers").status_code == 200
    assert AccessAttempt.objects.count() == 0
    assert SignInLockout.objects.count() == 0
