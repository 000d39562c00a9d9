"""The admin's middleware runs outside the API only (config.middleware, docs/architecture.md
"Middleware"): an API request passes none of it; the back office's requests pass all of it,
its CSRF check included."""

from django.http import HttpResponse
from django.test import Client, RequestFactory

from config.middleware import AuthenticationMiddleware, CsrfViewMiddleware, SessionMiddleware
from tests.backoffice.helpers import staff
from tests.staff import sign_in

PASSWORD_CHANGE = "/admin/password_change/"


def test_a_forged_form_is_refused_and_the_real_one_accepted(db):
    """A signed-in staff user's browser posts a form another site made (no CSRF token): 403,
    nothing changed. The page's own form, its token in it, goes through."""
    user = staff("csrf-target")
    browser = Client(enforce_csrf_checks=True)
    sign_in(browser, user)
    change = {"old_password": "pw", "new_password1": "S3cret-enough!", "new_password2": ""}
    change["new_password2"] = change["new_password1"]

    forged = browser.post(PASSWORD_CHANGE, change)

    assert forged.status_code == 403
    user.refresh_from_db()
    assert user.check_password("pw")

    page = browser.get(PASSWORD_CHANGE)
    assert page.status_code == 200
    token = page.context["csrf_token"]
    real = browser.post(PASSWORD_CHANGE, {**change, "csrfmiddlewaretoken": str(token)})
    assert real.status_code == 302
    user.refresh_from_db()
    assert user.check_password(change["new_password1"])


def test_an_api_request_passes_none_of_it():
    seen = []

    def view(request):
        seen.append(request)
        return HttpResponse()

    chain = SessionMiddleware(CsrfViewMiddleware(AuthenticationMiddleware(view)))
    for path in ("/TX/v2/customers", "/admin/"):
        request = RequestFactory().post(path)
        chain(request)
    api, admin = seen
    assert not hasattr(api, "session") and not hasattr(api, "user")
    assert hasattr(admin, "session") and hasattr(admin, "user")
    # The hook of the admin's CSRF check does nothing for the API's paths.
    assert chain.get_response.process_view(api, view, (), {}) is None
