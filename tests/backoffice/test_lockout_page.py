"""A locked-out sign-in is answered with the back office's page, saying what happened and
what to do, with axes's status (issue 33, item 4; docs/back-office.md "Lockouts")."""

import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from tests.staff import app_code, app_device

pytestmark = pytest.mark.django_db


def test_a_locked_out_sign_in_gets_the_back_office_page(client, settings):
    user = User.objects.create_superuser("ops", password="a long enough password")
    code = app_code(app_device(user))

    def sign_in_with(password, otp_token=""):
        return client.post(
            reverse("admin:login"),
            {"username": "ops", "password": password, "otp_token": otp_token, "next": "/admin/"},
            REMOTE_ADDR="203.0.113.5",
        )

    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert sign_in_with("wrong").status_code == 200
    for response in (sign_in_with("wrong"), sign_in_with("a long enough password", code)):
        assert response.status_code == 429
        assert "backoffice/locked_out.html" in [t.name for t in response.templates]
        html = response.content.decode()
        assert "<h1>Sign-in locked: too many failed attempts</h1>" in html
        assert '<div id="site-name"><a href="/admin/login/">TX back office</a></div>' in html
        assert "The username <strong>ops</strong> is" in html
        assert "locked after 5 failed sign-ins in a row" in html
        assert re.search(r"Wait 60 minutes\s+from the last failed", html)
        assert "ask a colleague who is a back-office superuser to lift the lockout" in html
        assert "global-search" not in html  # nothing of the signed-in pages
