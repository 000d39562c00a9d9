"""The admin's errors are pages of the back office; the API's stay JSON (issue 48 item 2;
docs/back-office.md, "Error pages"): a refused admin page (403), an address the admin has none
at (404) and a failure (500) answer HTML in the back office's look, while the same errors on
/TX/ paths keep the API's JSON bodies exactly."""

import json

import pytest
from django.test import Client, RequestFactory
from django.urls import reverse

from config import urls
from tests.api.test_errors import NOT_FOUND, REQUEST_ID, SECRET_TEXT, assert_error
from tests.backoffice.helpers import staff
from tests.cards.helpers import make_institution
from tests.staff import sign_in

pytestmark = pytest.mark.django_db

API_SCOPE_WORDS = "This API key does not have the scope this operation needs."


def signed_in(user) -> Client:
    client = Client(raise_request_exception=False)
    sign_in(client, user)
    return client


def assert_page(response, status: int, heading: str) -> str:
    assert response.status_code == status
    assert response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assert f"<h1>{heading}</h1>" in html
    assert f"<title>{heading} | TX back office</title>" in html
    assert "TX back office</a></div>" in html  # the back office's header
    assert API_SCOPE_WORDS not in html and '"code"' not in html
    return html


@pytest.fixture
def clerk():
    return staff("clerk", roles=["support"], institutions=[make_institution()])


def test_a_page_the_role_does_not_give_is_a_403_page_of_the_back_office(clerk):
    client = signed_in(clerk)

    # API keys are administration: no role reaches them.
    response = client.get(reverse("admin:institutions_apikey_changelist"))

    html = assert_page(response, 403, "You may not open this page")
    assert "ask a back-office superuser to give you the role" in html
    assert 'id="global-search"' in html  # the frame of a signed-in page: the search box
    assert f"Reference: <code>{response['X-Request-Id']}</code>" in html


def test_an_address_the_admin_has_no_page_at_is_a_404_page(clerk):
    response = signed_in(clerk).get("/admin/no-such-page/")

    html = assert_page(response, 404, "Nothing here")
    assert 'href="/admin/">Back to Today\'s work</a>' in html


def test_a_failure_in_the_admin_is_a_500_page_that_gives_nothing_away(clerk, monkeypatch):
    def fail(request):
        raise RuntimeError(SECRET_TEXT)

    monkeypatch.setattr("backoffice.templatetags.backoffice.queues_of", fail)

    response = signed_in(clerk).get(reverse("admin:index"))

    html = assert_page(response, 500, "Something went wrong on our side")
    assert REQUEST_ID.match(response["X-Request-Id"])
    assert f"Reference: <code>{response['X-Request-Id']}</code>" in html
    for leak in ("Traceback", "RuntimeError", SECRET_TEXT):
        assert leak not in html
    assert "global-search" not in html  # rendered without the request: no query, no session


def test_api_paths_keep_their_json_errors(key):
    """The same errors elsewhere than /admin/: the API's bodies, as before."""
    client = Client(raise_request_exception=False, headers={"x-api-key": key[1]})
    assert_error(client.get("/TX/v2/no-such-path"), "v2", 404, NOT_FOUND)
    assert_error(client.get("/TX/v1/no-such-path"), "v1", 404, NOT_FOUND)
    assert_error(client.get("/no-such-path"), "v2", 404, NOT_FOUND)  # outside both: JSON

    # Django's handlers as a middleware's or a view's exception reaches them, on an API path.
    request = RequestFactory().get("/TX/v2/customers")
    for handler, status, body in [
        (urls.handler403, 403, {"code": "permission_denied", "message": API_SCOPE_WORDS}),
        (urls.handler404, 404, NOT_FOUND),
        (
            urls.handler500,
            500,
            {"code": "internal_error", "message": "An internal error occurred."},
        ),
    ]:
        response = handler(request) if handler is urls.handler500 else handler(request, None)
        assert (response.status_code, response["Content-Type"]) == (status, "application/json")
        answered = json.loads(response.content)
        answered.pop("details", None)  # a 500's tranId
        assert answered == body


def test_a_request_the_admin_cannot_read_is_a_400_page():
    response = Client(raise_request_exception=False).get("/admin/", HTTP_HOST="not-ours.example")

    assert_page(response, 400, "The request could not be read")
