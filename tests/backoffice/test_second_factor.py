"""The back office's second factor (PCI DSS 8.4.2, backoffice.second_factor and .sites): every
admin page needs a verified session; a first sign-in needs the password and a one-time
enrolment token, and enrols an authenticator app whose key only that session saw; recovery
codes are shown once and renewed with a current code; a lost device is reset by command; no
key, code or token is stored in clear. Plus the idle timeout (8.2.8) and the password length
(8.3.6)."""

import io
import re
import threading
import time
from base64 import b32decode, b32encode
from datetime import timedelta
from unittest import mock

import pytest
from axes.models import AccessAttempt
from cryptography.exceptions import InvalidTag
from django.contrib import admin
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model, password_validation
from django.contrib.sessions.models import Session
from django.core import mail
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.db import connection, connections
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django_otp.oath import TOTP

from backoffice import second_factor
from backoffice.models import (
    AppDevice,
    EnrolmentToken,
    RecoveryCode,
    RecoveryCodeDevice,
    StaffEvent,
)
from backoffice.second_factor import enrolment_token_issue
from core.exceptions import ValidationFailed
from tests.staff import app_code, app_device, sign_in

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"
ENROL = "/admin/second-factor/enrol/"
RENEW = "/admin/second-factor/recovery-codes/"


@pytest.fixture
def ops():
    return get_user_model().objects.create_superuser("ops", "ops@example.com", PASSWORD)


@pytest.fixture
def boss():
    return get_user_model().objects.create_superuser("boss", "boss@example.com", PASSWORD)


def token_for(user) -> str:
    """A new enrolment token for `user`, as `reset_second_factor` hands it over."""
    return enrolment_token_issue(user=user, via="test").token


def log_in(client, username="ops", password=PASSWORD, code=""):
    return client.post(
        "/admin/login/",
        {"username": username, "password": password, "otp_token": code, "next": "/admin/"},
    )


def admin_pages() -> list[str]:
    """The index, every app's page, every registered model's list and add page, and the
    staff's own pages."""
    pages = ["/admin/", reverse("admin:password_change"), RENEW]
    for model in admin.site._registry:
        opts = model._meta
        pages.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"))
        pages.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_add"))
        pages.append(reverse("admin:app_list", args=[opts.app_label]))
    return sorted(set(pages))


def codes_of(response) -> list[str]:
    """The recovery codes a page shows."""
    return re.findall(r"<li>([a-z2-7]{8})</li>", response.content.decode())


def key_of(page) -> bytes:
    """The key an enrolment page shows (as text to type; the QR code carries the same)."""
    secret = re.search(
        r'<code id="second-factor-secret">([A-Z2-7 ]+)</code>', page.content.decode()
    )
    return b32decode(secret.group(1).replace(" ", ""))


def code_of(key: bytes) -> str:
    """What an authenticator app that scanned `key` shows now."""
    return f"{TOTP(key).token():06d}"


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


def signed_in_with_token(client, token, username="ops"):
    """Password and token at the sign-in page: led to enrolment. The enrolment page."""
    response = log_in(client, username=username, code=token)
    assert (response.status_code, response["Location"]) == (302, f"{ENROL}?next=%2Fadmin%2F")
    page = client.get(ENROL)
    assert page.status_code == 200
    return page


def events(user) -> list[str]:
    return list(
        StaffEvent.objects.filter(user=user)
        .order_by("created_at", "id")
        .values_list("type", flat=True)
    )


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


# --- first sign-in: the password and an enrolment token ----------------------------------------
def test_a_stranger_with_the_password_alone_gets_no_session_and_no_key(client, ops):
    token_for(ops)  # issued to ops, and not known to the stranger

    response = log_in(client)  # the right password, no token
    assert response.status_code == 200
    assert "enter the enrolment token you were given" in response.content.decode()
    assert "_auth_user_id" not in client.session
    assert refused(client.get(ENROL))
    assert refused(client.get("/admin/"))
    # A guessed token: the same.
    response = log_in(client, code="AAAA-BBBB-CCCC-DDDD-EEEE")
    assert "That enrolment token is wrong, used or expired" in response.content.decode()
    assert "_auth_user_id" not in client.session
    assert refused(client.get(ENROL))
    assert not AppDevice.objects.exists()  # no key was ever made


def test_a_first_sign_in_enrols_an_app_and_shows_recovery_codes_once(
    client, ops, django_capture_on_commit_callbacks
):
    token = token_for(ops)
    page = signed_in_with_token(client, token.lower().replace("-", " "))  # as typed, any case
    assert refused(client.get("/admin/"))  # the token's session reaches enrolment only
    assert refused(client.get("/admin/cards/card/"))

    assert "no-store" in page["Cache-Control"]
    assert "<svg" in page.content.decode()
    device = AppDevice.objects.get(user=ops)
    assert not device.confirmed
    key = key_of(page)
    assert key == device.bin_key
    # The same key on a reload: the app scanned first still matches.
    assert key_of(client.get(ENROL)) == key
    assert AppDevice.objects.filter(user=ops).count() == 1

    response = client.post(ENROL, {"code": wrong(code_of(key))})
    assert response.status_code == 200
    assert "That code is wrong" in response.content.decode()
    assert not AppDevice.objects.get(user=ops).confirmed

    with later(), django_capture_on_commit_callbacks(execute=True):
        response = client.post(ENROL, {"code": code_of(key), "next": "/admin/"})
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    codes = codes_of(response)
    assert len(codes) == 10
    assert AppDevice.objects.get(user=ops).confirmed
    assert RecoveryCode.objects.filter(device__user=ops).count() == 10
    assert client.get("/admin/").status_code == 200  # this session is verified now
    # The token is used up, and the session keeps nothing of the enrolment.
    assert EnrolmentToken.objects.get(user=ops).used_at is not None
    assert not {"backoffice_enrolment_token", "backoffice_enrolment_device"} & set(
        client.session.keys()
    )
    entry = LogEntry.objects.get(object_id=str(ops.pk))
    assert (entry.user, entry.change_message) == (
        ops,
        "Second factor enrolled: an authenticator app and 10 recovery codes.",
    )
    enrolled = StaffEvent.objects.get(user=ops, type=StaffEvent.Type.SECOND_FACTOR_ENROLLED)
    assert (enrolled.by, enrolled.data["recoveryCodes"]) == (ops, 10)
    [told] = mail.outbox
    assert (told.to, told.subject) == (
        ["ops@example.com"],
        "TX back office: an authenticator app was set up",
    )
    assert token not in told.body and not any(code in told.body for code in codes)

    # Enrolled: no second enrolment, and the next sign-in needs a code; the token is no code.
    assert refused(client.get(ENROL))
    client.logout()
    assert "Enter the code of your authenticator app" in log_in(client).content.decode()
    assert "That code is wrong" in log_in(client, code=token).content.decode()
    # A recovery code signs in once.
    with later(seconds=10):
        assert log_in(client, code=codes[0].upper()).status_code == 302
    assert client.get("/admin/").status_code == 200
    client.logout()
    with later(seconds=20):
        response = log_in(client, code=codes[0])
    assert "That code is wrong or used up" in response.content.decode()
    assert RecoveryCode.objects.filter(device__user=ops).count() == 9


def test_enrolment_can_be_left(client, ops):
    signed_in_with_token(client, token_for(ops))
    response = client.post(ENROL, {"cancel": "1"})
    assert (response.status_code, response["Location"]) == (302, "/admin/login/")
    assert refused(client.get(ENROL))


def test_enrolment_is_for_staff_signed_in_with_a_token_only(client, ops):
    assert refused(client.get(ENROL))
    assert not AppDevice.objects.exists()
    clerk = get_user_model().objects.create_user("clerk", password=PASSWORD)
    client.force_login(clerk)
    assert refused(client.get(ENROL))
    # A staff session signed in some other way (before this release: the password alone)
    # holds no token: it is signed out, and no key is made.
    client.force_login(ops)
    assert refused(client.get(ENROL))
    assert "_auth_user_id" not in client.session
    assert not AppDevice.objects.exists()


def test_two_sessions_with_the_token_each_see_their_own_key_and_only_the_last_can_confirm(ops):
    token = token_for(ops)
    first, second = Client(), Client()
    first_key = key_of(signed_in_with_token(first, token))
    second_key = key_of(signed_in_with_token(second, token))
    assert first_key != second_key
    # One device waits for its first code: the second session's. The first's is gone.
    assert AppDevice.objects.get(user=ops).bin_key == second_key

    # Neither confirms the other's device: the second is asked for its own key's code...
    response = second.post(ENROL, {"code": code_of(first_key)})
    assert "That code is wrong" in response.content.decode()
    # ... and the first session's device is gone: it is shown a new key, nothing confirmed.
    with later():
        response = first.post(ENROL, {"code": code_of(second_key)})
    assert response.status_code == 200
    assert "replaced the key this page showed" in response.content.decode()
    third_key = key_of(response)
    assert third_key not in (first_key, second_key)
    assert not AppDevice.objects.filter(user=ops, confirmed=True).exists()

    # The second session takes it back (a new key again) and confirms it.
    second_page = second.get(ENROL)
    assert "replaced the key this page showed" in second_page.content.decode()
    own_key = key_of(second_page)
    with later(seconds=10):
        response = second.post(ENROL, {"code": code_of(own_key), "next": "/admin/"})
    assert len(codes_of(response)) == 10
    assert AppDevice.objects.get(user=ops, confirmed=True).bin_key == own_key
    assert not AppDevice.objects.filter(user=ops, confirmed=False).exists()

    # The first session's token is used now: it enrols nothing, and reaches nothing.
    assert refused(first.post(ENROL, {"code": code_of(third_key)}))
    assert refused(first.get("/admin/"))
    assert AppDevice.objects.filter(user=ops).count() == 1
    # No key the other session saw signs in.
    for seen in (first_key, second_key, third_key):
        with later(seconds=30):
            response = log_in(Client(), code=code_of(seen))
        assert response.status_code == 200, seen


def test_a_key_copied_by_a_stranger_before_the_owner_enrols_never_signs_in(ops):
    """H1: someone with the password and the token (looked over the owner's shoulder) opens
    enrolment, copies the key and leaves; the owner then enrols."""
    token = token_for(ops)
    stranger, owner = Client(), Client()
    copied = key_of(signed_in_with_token(stranger, token))

    key = key_of(signed_in_with_token(owner, token))
    assert key != copied
    with later():
        assert len(codes_of(owner.post(ENROL, {"code": code_of(key)}))) == 10

    response = log_in(Client(), code=code_of(copied))
    assert "That code is wrong" in response.content.decode()
    with later(seconds=10):
        assert log_in(Client(), code=app_code(AppDevice.objects.get(user=ops))).status_code == 302


@pytest.mark.django_db(transaction=True)
def test_two_sessions_racing_to_enrol_with_one_token_one_wins():
    ops = get_user_model().objects.create_superuser("ops", "ops@example.com", PASSWORD)
    enrolment_token_issue(user=ops, via="test")
    token = EnrolmentToken.objects.get(user=ops)
    barrier = threading.Barrier(2)
    results = [None, None]

    def session(index):
        try:
            barrier.wait()
            device, _ = second_factor.enrolment_device(user=ops, token_id=token.pk, device_id=None)
            barrier.wait()
            try:
                results[index] = second_factor.enrolment_confirm(
                    user=ops, token_id=token.pk, device_id=device.pk, code=code_of(device.bin_key)
                )
            except ValidationFailed as error:
                results[index] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=session, args=(index,)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    won = [result for result in results if isinstance(result, second_factor.Enrolled)]
    lost = [result for result in results if isinstance(result, ValidationFailed)]
    assert (len(won), len(lost)) == (1, 1), results
    assert AppDevice.objects.get(user=ops).pk == won[0].device.pk
    assert AppDevice.objects.get(user=ops).confirmed
    token.refresh_from_db()
    assert token.used_at is not None
    assert events(ops) == ["staff.enrolment_token_issued", "staff.second_factor_enrolled"]


# --- the token: single use, expires, voided by a newer one, guesses counted --------------------
def test_a_token_works_once(ops):
    token = token_for(ops)
    enrolling = Client()
    key = key_of(signed_in_with_token(enrolling, token))
    with later():
        assert len(codes_of(enrolling.post(ENROL, {"code": code_of(key)}))) == 10

    # Even were the account without an app again (its rows deleted behind the services' back),
    # the used token opens nothing.
    AppDevice.objects.filter(user=ops).delete()
    assert second_factor.enrolment_token_check(user=ops, token=token) is None
    response = log_in(Client(), code=token)
    assert "That enrolment token is wrong, used or expired" in response.content.decode()


def test_a_token_expires(ops, settings):
    assert settings.STAFF_ENROLMENT_TOKEN_HOURS == 24
    token = token_for(ops)
    with later(seconds=24 * 3600 - 60):
        assert log_in(Client(), code=token).status_code == 302
    with later(seconds=24 * 3600):
        response = log_in(Client(), code=token)
    assert "That enrolment token is wrong, used or expired" in response.content.decode()


def test_a_token_expires_after_the_setting(ops, settings):
    settings.STAFF_ENROLMENT_TOKEN_HOURS = 2
    token = token_for(ops)
    assert EnrolmentToken.objects.get(user=ops).expires_at - EnrolmentToken.objects.get(
        user=ops
    ).created_at == timedelta(hours=2)
    with later(seconds=2 * 3600):
        response = log_in(Client(), code=token)
    assert "That enrolment token is wrong, used or expired" in response.content.decode()


def test_an_enrolment_begun_is_closed_when_its_token_expires(ops):
    client = Client()
    signed_in_with_token(client, token_for(ops))
    with later(seconds=24 * 3600):
        assert refused(client.get(ENROL))
    assert "_auth_user_id" not in client.session


def test_a_newer_token_voids_the_older_one(ops):
    older = token_for(ops)
    enrolling = Client()
    signed_in_with_token(enrolling, older)
    newer = token_for(ops)

    response = log_in(Client(), code=older)
    assert "That enrolment token is wrong, used or expired" in response.content.decode()
    # The session that signed in with the older one is closed too.
    assert refused(enrolling.get(ENROL))
    signed_in_with_token(Client(), newer)
    assert list(
        EnrolmentToken.objects.filter(user=ops).order_by("pk").values_list("voided_at", flat=True)
    )[1:] == [None]


def test_wrong_tokens_count_towards_the_lockout(client, ops):
    token = token_for(ops)
    for _ in range(4):
        response = log_in(client, code="AAAA-BBBB-CCCC-DDDD-EEEE")
        assert response.status_code == 200
        assert "That enrolment token is wrong" in response.content.decode()
    assert log_in(client, code="AAAA-BBBB-CCCC-DDDD-EEEE").status_code == 429
    # Locked: the right token too.
    assert log_in(client, code=token).status_code == 429
    assert "_auth_user_id" not in client.session


# --- an account that has not enrolled has no power -------------------------------------------
def test_a_superuser_who_has_not_enrolled_cannot_reset_anyone(ops, boss):
    app_device(ops)
    with pytest.raises(CommandError, match="boss has not enrolled a second factor"):
        call_command("reset_second_factor", "ops", by="boss", reason="lost", stdout=io.StringIO())
    assert AppDevice.objects.filter(user=ops).exists()


# --- recovery codes ------------------------------------------------------------------------------
def test_recovery_codes_are_renewed_with_a_current_code_and_the_old_ones_stop_working(
    client, ops, django_capture_on_commit_callbacks
):
    device = sign_in(client, ops)
    assert f'href="{RENEW}"' in client.get("/admin/").content.decode()
    page = client.get(RENEW)
    assert "You have 0 unused recovery codes" in page.content.decode()

    # L1: the session alone is not enough.
    response = client.post(RENEW, {})
    assert codes_of(response) == []
    assert "This field is required" in response.content.decode()
    response = client.post(RENEW, {"code": wrong(app_code(device))})
    assert codes_of(response) == []
    assert "That code is wrong" in response.content.decode()
    assert not RecoveryCode.objects.exists()

    with later(), django_capture_on_commit_callbacks(execute=True):
        first = codes_of(client.post(RENEW, {"code": app_code(device)}))
    with later(seconds=10):
        second = codes_of(client.post(RENEW, {"code": app_code(device)}))
    assert len(first) == len(second) == 10
    assert RecoveryCode.objects.filter(device__user=ops).count() == 10
    other = Client()
    with later(seconds=20):
        assert log_in(other, code=first[0]).status_code == 200
    with later(seconds=30):
        assert log_in(other, code=second[0]).status_code == 302
    assert events(ops) == ["staff.recovery_codes_renewed"] * 2
    assert LogEntry.objects.filter(object_id=str(ops.pk)).count() == 2
    [told] = mail.outbox
    assert (told.to, told.subject) == (["ops@example.com"], "TX back office: new recovery codes")
    assert not any(code in told.body for code in first)


def test_a_sign_in_with_a_recovery_code_stays_fast(ops):
    """Ten salted keyed hashes (backoffice.secrets), not a slow hash each: well under 100 ms,
    the database included."""
    sign_in(Client(), ops)
    codes = second_factor._recovery_codes_issue(ops)
    started = time.perf_counter()
    device = second_factor.device_for_code(ops, codes[-1])
    took = time.perf_counter() - started
    assert isinstance(device, RecoveryCodeDevice)
    assert took < 0.1, took


# --- nothing in clear at rest -------------------------------------------------------------------
def test_the_database_holds_no_key_code_or_token_in_clear(client, ops):
    token = token_for(ops)
    page = signed_in_with_token(client, token)
    key = key_of(page)
    with later():
        codes = codes_of(client.post(ENROL, {"code": code_of(key)}))
    assert len(codes) == 10
    # Failed sign-ins that carried the token and a code: django-axes records the attempts.
    assert log_in(Client(), password="wrong", code=token).status_code == 200
    assert log_in(Client(), password="wrong", code=codes[0]).status_code == 200
    assert AccessAttempt.objects.filter(username="ops").exists()
    secrets = [token, token.replace("-", ""), key.hex(), b32encode(key).decode(), *codes]

    with connection.cursor() as cursor:
        stored = []
        for table in (
            "backoffice_appdevice",
            "backoffice_recoverycodedevice",
            "backoffice_recoverycode",
            "backoffice_enrolmenttoken",
            "backoffice_staffevent",
            "django_admin_log",
            "axes_accessattempt",
            "axes_accesslog",
            "axes_accessfailurelog",
        ):
            cursor.execute(f"SELECT * FROM {table}")  # noqa: S608 (our table names)
            stored.extend(str(value) for row in cursor.fetchall() for value in row)
        [key_encrypted] = [value for value in stored if value.startswith("dev1:")]
    text = "\n".join(stored).lower()
    for secret in secrets:
        assert secret.lower() not in text, secret
    # Sessions hold ids, never the token or the key.
    for session in Session.objects.all():
        decoded = str(session.get_decoded()).lower()
        assert not any(secret.lower() in decoded for secret in secrets)
    # The key is sealed to its row: moved to another device, it does not decrypt.
    other = AppDevice.create(
        user=get_user_model().objects.create_user("x", is_staff=True), confirmed=True
    )
    AppDevice.objects.filter(pk=other.pk).update(key_encrypted=key_encrypted)
    other.refresh_from_db()
    with pytest.raises(InvalidTag):
        other.bin_key  # noqa: B018


# --- a lost device -----------------------------------------------------------------------------
def test_the_reset_command_deletes_the_devices_issues_a_token_and_leaves_a_trail(
    client, ops, boss, django_capture_on_commit_callbacks
):
    sign_in(client, ops)
    second_factor._recovery_codes_issue(ops)
    app_device(boss)
    assert client.get("/admin/").status_code == 200
    out = io.StringIO()

    with django_capture_on_commit_callbacks(execute=True):
        call_command(
            "reset_second_factor", "ops", by="boss", reason="Phone stolen, ticket 4711", stdout=out
        )

    output = out.getvalue()
    assert "Second factor of ops reset (2 devices deleted)." in output
    token = re.search(r"^    ([A-Z2-7]{4}(?:-[A-Z2-7]{4}){4})$", output, re.MULTILINE).group(1)
    assert not AppDevice.objects.filter(user=ops).exists()
    assert not RecoveryCodeDevice.objects.filter(user=ops).exists()
    assert not RecoveryCode.objects.exists()
    entry = LogEntry.objects.get(object_id=str(ops.pk))
    assert (entry.user, entry.change_message) == (
        boss,
        "Second factor reset (2 devices): Phone stolen, ticket 4711",
    )
    reset = StaffEvent.objects.get(user=ops, type=StaffEvent.Type.SECOND_FACTOR_RESET)
    assert (reset.by, reset.data) == (boss, {"reason": "Phone stolen, ticket 4711", "devices": 2})
    issued = StaffEvent.objects.get(user=ops, type=StaffEvent.Type.ENROLMENT_TOKEN_ISSUED)
    assert (issued.by, issued.data["via"], issued.data["delivery"]) == (
        boss,
        "reset_second_factor",
        "printed",
    )
    assert sorted((told.subject, *told.to) for told in mail.outbox) == [
        ("TX back office: an enrolment token was issued", "ops@example.com"),
        ("TX back office: your second factor was reset", "ops@example.com"),
    ]
    assert not any(token in told.body for told in mail.outbox)
    # The session verified by the old device is not any more; the token enrols a new app.
    assert refused(client.get("/admin/"))
    client.logout()
    signed_in_with_token(client, token)


def test_the_reset_command_mails_the_token_when_asked(
    ops, boss, django_capture_on_commit_callbacks
):
    app_device(ops)
    app_device(boss)
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command(
            "reset_second_factor", "ops", by="boss", reason="lost", mail_token=True, stdout=out
        )
    assert "Enrolment token mailed to ops@example.com" in out.getvalue()
    # The token's own mail stands for the notice of its issue.
    mails = {told.subject: told for told in mail.outbox}
    assert sorted(mails) == [
        "TX back office: your enrolment token",
        "TX back office: your second factor was reset",
    ]
    token_mail = mails["TX back office: your enrolment token"]
    assert token_mail.to == ["ops@example.com"]
    token = re.search(r"^    (\S+)$", token_mail.body, re.MULTILINE).group(1)
    assert token not in out.getvalue()
    signed_in_with_token(Client(), token)


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
    app_device(boss)
    with pytest.raises(CommandError, match=message):
        call_command("reset_second_factor", "ops", by=by, reason=reason, stdout=io.StringIO())
    assert AppDevice.objects.filter(user=ops).exists()
    assert not LogEntry.objects.exists()
    assert not StaffEvent.objects.exists()


def test_a_token_is_not_mailed_to_a_user_without_an_address(boss):
    user = get_user_model().objects.create_user("noaddress", password=PASSWORD, is_staff=True)
    app_device(user)
    app_device(boss)
    with pytest.raises(CommandError, match="noaddress has no e-mail address"):
        call_command(
            "reset_second_factor",
            "noaddress",
            by="boss",
            reason="lost",
            mail_token=True,
            stdout=io.StringIO(),
        )
    assert AppDevice.objects.filter(user=user).exists()  # nothing was reset
    out = io.StringIO()
    call_command("reset_second_factor", "noaddress", by="boss", reason="lost", stdout=out)
    assert "noaddress has no e-mail address: they are not told by mail." in out.getvalue()


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
