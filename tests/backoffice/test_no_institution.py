"""A staff user who works on no institution is told so on every page, and whom to ask,
instead of reading zeros (issue 33, item 4; docs/back-office.md "A colleague with no
institution")."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from institutions.models import InstitutionAccess
from tests.backoffice.helpers import populated, staff
from tests.cards.helpers import make_institution
from tests.staff import sign_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def institution():
    return make_institution()


NOTICE = 'id="no-institution-notice"'


def test_a_staff_user_with_no_institution_is_told_why_everything_is_empty(client, institution):
    populated(institution)
    sign_in(client, staff("newcomer", roles=["support"]))

    for url in (
        reverse("admin:index"),
        reverse("admin:accounts_account_changelist"),
        reverse("admin:search"),
    ):
        html = client.get(url).content.decode()
        assert NOTICE in html, url
        assert "You have access to no institution yet" in html
        assert "Ask a superuser" in html


def test_no_notice_once_they_have_an_institution(client, institution):
    user = staff("newcomer", roles=["support"])
    sign_in(client, user)
    assert NOTICE in client.get(reverse("admin:index")).content.decode()

    InstitutionAccess.objects.create(user=user, institution=institution)
    assert NOTICE not in client.get(reverse("admin:index")).content.decode()


@pytest.mark.parametrize("who", ["superuser", "everywhere"])
def test_no_notice_for_those_who_work_on_every_institution(client, institution, who):
    if who == "superuser":
        user = User.objects.create_superuser("root", password="pw")
    else:
        user = staff("head", roles=["support"], everywhere=True)
    sign_in(client, user)

    assert NOTICE not in client.get(reverse("admin:index")).content.decode()
