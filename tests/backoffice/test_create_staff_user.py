"""`manage.py create_staff_user` (backoffice.staff_accounts): a back-office login with its roles
and institutions, or a superuser, and a one-time enrolment token, printed once or mailed; never
a password on the command line; Django's password validators."""

import io
import re
from unittest import mock

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.core.management import CommandError, call_command
from django.test import Client

from backoffice.models import EnrolmentToken, StaffEvent
from institutions.models import InstitutionAccess
from institutions.staff import staff_institutions
from tests.backoffice.helpers import restore_roles
from tests.cards.helpers import make_institution

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"
TOKEN_LINE = re.compile(r"^    ([A-Z2-7]{4}(?:-[A-Z2-7]{4}){4})$", re.MULTILINE)


@pytest.fixture(autouse=True)
def roles():
    restore_roles()  # a transactional test before this one may have emptied the groups


def create(*args, password=PASSWORD, **options) -> str:
    out = io.StringIO()
    call_command(
        "create_staff_user",
        *args,
        "--password-stdin",
        stdin=io.StringIO(f"{password}\n"),
        stdout=out,
        **options,
    )
    return out.getvalue()


def test_a_staff_user_with_roles_and_institutions_and_a_printed_token(
    django_capture_on_commit_callbacks,
):
    bank, other = make_institution(), make_institution()
    with django_capture_on_commit_callbacks(execute=True):
        out = create(
            "alice",
            "--email",
            "alice@example.com",
            "--role",
            "operations",
            "--role",
            "support",
            "--institution",
            bank.pk,
        )

    alice = User.objects.get(username="alice")
    assert (alice.is_staff, alice.is_superuser, alice.check_password(PASSWORD)) == (
        True,
        False,
        True,
    )
    assert sorted(alice.groups.values_list("name", flat=True)) == ["operations", "support"]
    assert list(staff_institutions(alice).values_list("institution_id", flat=True)) == [bank.pk]
    assert not InstitutionAccess.objects.filter(institution=other).exists()
    assert f"Staff user alice made (roles operations, support; works on {bank.pk})." in out
    token = TOKEN_LINE.search(out).group(1)
    assert "Hand it to alice in person or by phone" in out
    # Stored hashed, for 24 hours.
    row = EnrolmentToken.objects.get(user=alice)
    assert token not in row.digest and token.replace("-", "") not in row.digest
    assert (row.expires_at - row.created_at).total_seconds() == 24 * 3600
    event = StaffEvent.objects.get(user=alice)
    assert (event.type, event.by, event.data["via"], event.data["delivery"]) == (
        "staff.enrolment_token_issued",
        None,
        "create_staff_user",
        "printed",
    )
    [told] = mail.outbox
    assert (told.to, told.subject) == (
        ["alice@example.com"],
        "TX back office: an enrolment token was issued",
    )
    assert token not in told.body
    # The password and the token lead to enrolment; the password alone does not.
    client = Client()
    response = client.post(
        "/admin/login/", {"username": "alice", "password": PASSWORD, "otp_token": token}
    )
    assert response["Location"].startswith("/admin/second-factor/enrol/")
    assert client.get("/admin/")["Location"].startswith("/admin/login/")


def test_a_superuser_with_the_token_mailed_and_the_password_from_the_environment(monkeypatch):
    monkeypatch.setenv("NEW_STAFF_PASSWORD", PASSWORD)
    out = io.StringIO()
    call_command(
        "create_staff_user",
        "root",
        "--superuser",
        "--email",
        "root@example.com",
        "--password-env",
        "NEW_STAFF_PASSWORD",
        "--mail-token",
        stdout=out,
    )
    root = User.objects.get(username="root")
    assert root.is_superuser and root.is_staff and root.check_password(PASSWORD)
    assert "Staff user root made (a superuser)." in out.getvalue()
    assert "Enrolment token mailed to root@example.com" in out.getvalue()
    [token_mail] = mail.outbox
    assert (token_mail.to, token_mail.subject) == (
        ["root@example.com"],
        "TX back office: your enrolment token",
    )
    token = TOKEN_LINE.search(token_mail.body).group(1)
    assert token not in out.getvalue()
    # Not enrolled: the superuser flag opens nothing yet.
    client = Client()
    client.force_login(root)
    assert client.get("/admin/auth/user/")["Location"].startswith("/admin/login/")


def test_every_institution_and_no_address():
    out = create("bob", "--role", "support", "--all-institutions")
    bob = User.objects.get(username="bob")
    assert staff_institutions(bob) is None
    assert "works on every institution" in out
    assert "bob has no e-mail address: they are not told by mail." in out
    assert not mail.outbox


def test_the_password_is_asked_twice_in_a_terminal():
    terminal = mock.Mock(isatty=lambda: True)
    with mock.patch("getpass.getpass", side_effect=[PASSWORD, PASSWORD]):
        call_command(
            "create_staff_user", "carol", "--superuser", stdin=terminal, stdout=io.StringIO()
        )
    assert User.objects.get(username="carol").check_password(PASSWORD)
    with (
        mock.patch("getpass.getpass", side_effect=[PASSWORD, "something else entirely"]),
        pytest.raises(CommandError, match="The two passwords differ"),
    ):
        call_command("create_staff_user", "dave", "--superuser", stdin=terminal)
    assert not User.objects.filter(username="dave").exists()


@pytest.mark.parametrize(
    ("args", "password", "message"),
    [
        (["--superuser"], "short", "This password is too short"),
        (["--superuser"], "password1234", "This password is too common"),
        (["--superuser"], "123456789012", "entirely numeric"),
        (["--superuser", "--role", "support"], PASSWORD, "A superuser has every permission"),
        ([], PASSWORD, "Give one or more roles among support, operations, compliance"),
        (["--role", "support", "--email", "not an address"], PASSWORD, "is not an e-mail"),
        (["--role", "support", "--institution", "nowhere"], PASSWORD, "No institution"),
        (["--superuser", "--mail-token"], PASSWORD, "erin has no e-mail address"),
    ],
)
def test_refused(args, password, message):
    with pytest.raises(CommandError, match=message):
        create("erin", *args, password=password)
    assert not User.objects.filter(username="erin").exists()
    assert not EnrolmentToken.objects.exists()


def test_an_existing_username_is_refused():
    create("frank", "--superuser")
    with pytest.raises(CommandError, match="A user 'frank' exists already"):
        create("frank", "--superuser")
    assert EnrolmentToken.objects.count() == 1


def test_never_a_password_on_the_command_line():
    # There is no option for it (argparse refuses even an abbreviation's guess).
    with pytest.raises(CommandError, match="ambiguous option: --password"):
        call_command("create_staff_user", "gina", "--superuser", "--password", PASSWORD)
    # Without a terminal, and without --password-stdin or --password-env: refused.
    with pytest.raises(CommandError, match="No password: run in a terminal"):
        call_command("create_staff_user", "gina", "--superuser", stdin=io.StringIO(PASSWORD))
    assert not User.objects.filter(username="gina").exists()
