"""The back office's second factor (PCI DSS 8.4.2, backoffice.second_factor and .sites): every
admin page needs a verified session; a first sign-in enrols an authenticator app and shows
recovery codes once; a lost device is reset by command. Plus the idle timeout (8.2.8) and the
password length (8.3.6)."""

import io
import re
from base64 import b32encode
from datetime import timedelta
from unittest import mock

import pytest
from django.contrib import admin
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model, password_validation
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from tests.staff import app_code, app_device, sign_in

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"
ENROL = "/admin/second-factor/enrol/"


@pytest.fixture
def ops():
    return get_user_model().objects.create_superuser("ops", "ops@example.com", PASSWORD)


@pytest.fixture
def boss():
    return get_user_model().objects.create_superuser("boss", "boss@example.com", PASSWORD)


def log_in(client, username="ops", password=PASSWORD, code=""):
    return client.post(
        "/admin/login/",
        {"username": username, "password": password, "otp_token": code, "next": "/admin/"},
    )


def admin_pages() -> list[str]:
    """The index, every app's page, every registered model's list and add page, and the
    staff's own pages."""
    pages = ["/admin/", reverse("admin:password_change"), "/admin/second-factor/recovery-codes/"]
    for model in admin.site._registry:
        opts = model._meta
        pages.append(reverse("admin:app_list", args=[opts.app_label]))
        pages.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"))
        pages.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_add"))
    return sorted(set(pages))


def codes_of(response) -> list[str]:
    """The recovery codes a page shows."""
    return re.findall(r"<li>([a-z2-7]{8})</li>", response.content.decode())


def wrong(code: str) -> str:
    return f"{(int(code) + 1) % 10**6:06d}"


def later(seconds=5):
    """The clock `seconds` on: django-otp checks no code of a device for a second after a
    wrong one (two after two, ...)."""
    return mock.patch(
        "django.utils.timezone.now", return_value=timezone.now() + timedelta(seconds=seconds)
    )


def refused(response) -> bool:
    return response.status_code == 302 and response["Location"].startswith("/admin/login/")


# --- every page needs the second factor ------------------------------------------------------
def test_a_session_without_the_second_factor_is_refused_from_every_admin_page(client, ops):
    app_device(ops)
    client.force_login(ops)  # the password's session, not verified by a code
    pages = admin_pages()
    assert len(pages) > 60, pages

    for page in pages:
        assert refused(client.get(page)), page
    # Nor can it write: an add form posted is sent to sign-in, and nothing is added.
    response = client.post(
        reverse("admin:auth_user_add"),
        {"username": "intruder", "password1": "x" * 20, "password2": "x" * 20},
    )
    assert refused(response)
    assert not get_user_model().objects.filter(username="intruder").exists()


def test_a_verified_session_reaches_them(client, ops):
    sign_in(client, ops)
    for page in admin_pages():
        # 200, or 403 where an add page is offered to nobody (rows written by services).
        assert client.get(page).status_code in (200, 403), page
    assert client.get("/admin/").status_code == 200


def test_sign_in_with_the_app_code_works_and_without_it_is_refused(client, ops):
    device = app_device(ops)

    response = log_in(client)  # the right password, no code
    assert response.status_code == 200
    assert "Enter the code of your authenticator app" in response.content.decode()
    assert refused(client.get("/admin/"))

    response = log_in(client, code=wrong(app_code(device)))
    assert response.status_code == 200
    assert "That code is wrong" in response.content.decode()
    assert refused(client.get("/admin/"))
    # Right after a wrong code, the device checks none (guessing is slowed down).
    response = log_in(client, code=app_code(device))
    assert "Too many wrong codes: wait a few seconds" in response.content.decode()
    assert refused(client.get("/admin/"))

    assert log_in(client, password="wrong", code=app_code(device)).status_code == 200
    assert refused(client.get("/admin/"))

    with later():
        response = log_in(client, code=app_code(device))
    assert (response.status_code, response["Location"]) == (302, "/admin/")
    assert client.get("/admin/").status_code == 200


def test_a_used_code_is_not_accepted_again(ops):
    device = app_device(ops)
    code = app_code(device)
    first, second = Client(), Client()
    assert log_in(first, code=code).status_code == 302
    response = log_in(second, code=code)
    assert response.status_code == 200
    assert "That code is wrong" in response.content.decode()


# --- first sign-in: enrolment -----------------------------------------------------------------
def test_a_first_sign_in_enrols_an_app_and_shows_recovery_codes_once(client, ops):
    # The password alone signs a user with no device in, into a session that reaches only
    # the enrolment page.
    assert log_in(client).status_code == 302
    response = client.get("/admin/")
    assert refused(response)
    response = client.get(response["Location"])
    assert (response.status_code, response["Location"]) == (302, f"{ENROL}?next=%2Fadmin%2F")
    assert refused(client.get("/admin/cards/card/"))

    page = client.get(ENROL + "?next=/admin/")
    assert page.status_code == 200
    assert "no-store" in page["Cache-Control"]
    body = page.content.decode()
    assert "<svg" in body
    device = TOTPDevice.objects.get(user=ops)
    assert not device.confirmed
    secret = re.search(r'<code id="second-factor-secret">([A-Z2-7 ]+)</code>', body).group(1)
    assert secret.replace(" ", "") == b32encode(device.bin_key).decode()
    # The same device on a reload: the app scanned first still matches.
    client.get(ENROL)
    assert TOTPDevice.objects.filter(user=ops).count() == 1

    response = client.post(ENROL, {"code": wrong(app_code(device))})
    assert response.status_code == 200
    assert "That code is wrong" in response.content.decode()
    assert not TOTPDevice.objects.get(user=ops).confirmed

    with later():
        response = client.post(ENROL, {"code": app_code(device), "next": "/admin/"})
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    codes = codes_of(response)
    assert len(codes) == 10
    assert TOTPDevice.objects.get(user=ops).confirmed
    assert sorted(StaticToken.objects.filter(device__user=ops).values_list("token", flat=True)) == (
        sorted(codes)
    )
    assert client.get("/admin/").status_code == 200  # this session is verified now
    entry = LogEntry.objects.get(object_id=str(ops.pk))
    assert (entry.user, entry.change_message) == (
        ops,
        "Second factor enrolled: an authenticator app and 10 recovery codes.",
    )

    # Enrolled: no second enrolment, and the next sign-in needs a code.
    assert refused(client.get(ENROL))
    client.logout()
    assert log_in(client).status_code == 200
    # A recovery code signs in once.
    assert log_in(client, code=codes[0].upper()).status_code == 302
    assert client.get("/admin/").status_code == 200
    client.logout()
    response = log_in(client, code=codes[0])
    assert "That code is wrong or used up" in response.content.decode()
    assert StaticToken.objects.filter(device__user=ops).count() == 9


def test_enrolment_can_be_left(client, ops):
    log_in(client)
    response = client.post(ENROL, {"cancel": "1"})
    assert (response.status_code, response["Location"]) == (302, "/admin/login/")
    assert refused(client.get(ENROL))


def test_enrolment_is_for_signed_in_staff_only(client, ops):
    assert refused(client.get(ENROL))
    assert not TOTPDevice.objects.exists()
    clerk = get_user_model().objects.create_user("clerk", password=PASSWORD)
    client.force_login(clerk)
    assert refused(client.get(ENROL))
    assert not TOTPDevice.objects.exists()


def test_recovery_codes_are_renewed_and_the_old_ones_stop_working(client, ops):
    sign_in(client, ops)
    assert 'href="/admin/second-factor/recovery-codes/"' in client.get("/admin/").content.decode()
    page = client.get("/admin/second-factor/recovery-codes/")
    assert "You have 0 unused recovery codes" in page.content.decode()
    first = codes_of(client.post("/admin/second-factor/recovery-codes/"))
    second = codes_of(client.post("/admin/second-factor/recovery-codes/"))
    assert len(first) == len(second) == 10
    assert set(StaticToken.objects.filter(device__user=ops).values_list("token", flat=True)) == set(
        second
    )
    other = Client()
    assert log_in(other, code=first[0]).status_code == 200
    with later():
        assert log_in(other, code=second[0]).status_code == 302


# --- a lost device -----------------------------------------------------------------------------
def test_the_reset_command_deletes_the_devices_and_leaves_a_trail(client, ops, boss):
    sign_in(client, ops)
    StaticDevice.objects.create(user=ops, name="Recovery codes", confirmed=True)
    assert client.get("/admin/").status_code == 200
    out = io.StringIO()

    call_command(
        "reset_second_factor", "ops", by="boss", reason="Phone stolen, ticket 4711", stdout=out
    )

    assert "Second factor of ops reset (2 devices deleted)" in out.getvalue()
    assert not TOTPDevice.objects.filter(user=ops).exists()
    assert not StaticDevice.objects.filter(user=ops).exists()
    entry = LogEntry.objects.get(object_id=str(ops.pk))
    assert (entry.user, entry.change_message) == (
        boss,
        "Second factor reset (2 devices): Phone stolen, ticket 4711",
    )
    # The session verified by the old device is not any more: it is led to enrol again.
    assert refused(client.get("/admin/"))
    assert client.get("/admin/login/")["Location"] == ENROL


@pytest.mark.parametrize(
    ("by", "reason", "message"),
    [
        ("ops", "lost", "reset by someone else, not its owner"),
        ("clerk", "lost", "clerk is not an active superuser"),
        ("boss", "  ", "Give the reason"),
        ("nobody", "lost", "No user 'nobody'"),
    ],
)
def test_the_reset_command_refuses(ops, boss, by, reason, message):
    get_user_model().objects.create_user("clerk", password=PASSWORD, is_staff=True)
    app_device(ops)
    with pytest.raises(CommandError, match=message):
        call_command("reset_second_factor", "ops", by=by, reason=reason, stdout=io.StringIO())
    assert TOTPDevice.objects.filter(user=ops).exists()
    assert not LogEntry.objects.exists()


# --- idle sessions -----------------------------------------------------------------------------
def test_an_idle_session_ends_after_15_minutes_and_activity_keeps_it(client, ops):
    sign_in(client, ops)
    started = timezone.now()

    def at(minutes):
        return mock.patch(
            "django.utils.timezone.now", return_value=started + timedelta(minutes=minutes)
        )

    with at(14):
        response = client.get("/admin/")
        assert response.status_code == 200
        # The cookie ends with the browser; the server ends the session after 15 idle minutes.
        assert response.cookies["sessionid"]["max-age"] == ""
    with at(28):  # 28 minutes after signing in, 14 after the last request
        assert client.get("/admin/").status_code == 200
    with at(28 + 16):
        assert refused(client.get("/admin/"))


# --- passwords ---------------------------------------------------------------------------------
def test_passwords_need_12_characters(ops):
    with pytest.raises(ValidationError, match="at least 12 characters"):
        password_validation.validate_password("kq7#vLm2!pZ", ops)  # 11
    password_validation.validate_password("kq7#vLm2!pZx", ops)  # 12
