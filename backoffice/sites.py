"""The back office's admin site: Django's, where every page needs a session verified by a
second factor (PCI DSS 8.4.2; `backoffice.second_factor`, docs/back-office.md).

`StaffAdminConfig` (backoffice.apps) makes this class `django.contrib.admin.site`, so every
`admin.site.register` of the apps registers here and every admin page, action and history goes
through `has_permission`. Pages of its own: the search (/admin/search/, `backoffice.search`)
and, under /admin/second-factor/:

- enrolment: for a staff user with no app yet (first sign-in, or after a reset), signed in
  with their password and one-time enrolment token: the only page that session reaches. The
  token's and the new device's ids are kept in the session (`ENROLMENT_TOKEN`,
  `ENROLMENT_DEVICE`), so the key shown is this session's alone;
- recovery codes: a verified user renews theirs with a current code of the app.

Both answer with `Cache-Control: no-store` (never_cache): the secret and the codes are shown
once and kept by no cache.

Headings in plain language (`admin_view`, `plain_heading`): every admin page goes through the
site's `admin_view`, Django's own admins' too, so the headings are set there once, not per
admin. A list is titled by what it lists ("Accounts"), a row's page by the row's own name
("Account acc_... (EUR)"), an add form "New ...", a row's history "History: ...", an app's
page by the app's name; Django's "Select account to change", "Change account", "View account",
"Add account", "Change history: ..." and "Accounts administration" never show
(docs/back-office.md).
"""

from base64 import b32encode
from functools import wraps

import django_otp
import qrcode
import qrcode.image.svg
from django.contrib import admin
from django.contrib.auth import REDIRECT_FIELD_NAME, logout
from django.contrib.auth.views import redirect_to_login
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.utils.safestring import mark_safe
from django.utils.text import capfirst
from django.utils.translation import gettext
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect

from backoffice import search, second_factor
from backoffice.forms import CodeForm, StaffLoginForm
from backoffice.kit import staff_institutions
from backoffice.models import RecoveryCode
from core.exceptions import ValidationFailed

MAX_QUERY = 200  # characters of a search
# What a session signed in with an enrolment token keeps: the token's row and the device it
# showed (ids, never the token or the key).
ENROLMENT_TOKEN = "backoffice_enrolment_token"  # noqa: S105 (a session key's name)
ENROLMENT_DEVICE = "backoffice_enrolment_device"

# The framework's tables and the platform's own, apart from the business (docs/back-office.md,
# "The menu"): one "Administration" section at the end of the index and the sidebar. No role
# reaches them (superusers, or a group made for the purpose); their models are named for staff.
ADMINISTRATION = "Administration"
ADMINISTRATION_APPS = [
    "auth",
    "axes",
    "procrastinate",
    "api",
]
# The back office's own approval requests are business (four eyes); its lockouts are not.
ADMINISTRATION_MODELS = [
    "institutions.ApiKey",
    "institutions.InstitutionAccess",
    "backoffice.SignInLockout",
    "backoffice.StaffEvent",
]
ADMINISTRATION_NAMES = {
    "axes.AccessAttempt": "Sign-in failures (lockouts)",
    "axes.AccessFailureLog": "Sign-in failure log",
    "axes.AccessLog": "Sign-in log",
    "procrastinate.ProcrastinateJob": "Background jobs",
    "auth.User": "Staff users",
    "auth.Group": "Staff roles (groups)",
    "backoffice.StaffEvent": "Staff security events",
}


class StaffAdminSite(admin.AdminSite):
    login_form = StaffLoginForm
    login_template = "backoffice/login.html"
    # No public site to go back to: the admin's "View site" link is not shown.
    site_url = None

    def get_app_list(self, request, app_label=None):
        """The business apps, by name, then one "Administration" section with the framework's
        tables and the platform's (users, roles, lockouts, jobs, API keys, access rows), for
        whoever may view them."""
        app_list = super().get_app_list(request, app_label)
        if app_label is not None:
            return app_list
        business, administration = [], []
        for app in app_list:
            if app["app_label"] in ADMINISTRATION_APPS:
                administration.extend(app["models"])
                continue
            kept = []
            for model in app["models"]:
                label = model["model"]._meta.label
                (administration if label in ADMINISTRATION_MODELS else kept).append(model)
            if kept:
                business.append({**app, "models": kept})
        if not administration:
            return business
        for model in administration:
            model["name"] = ADMINISTRATION_NAMES.get(model["model"]._meta.label, model["name"])
        administration.sort(key=lambda model: model["name"])
        section = {
            "name": ADMINISTRATION,
            "app_label": "administration",
            "app_url": reverse("admin:index", current_app=self.name) + "#administration",
            "has_module_perms": True,
            "models": administration,
        }
        return [*business, section]

    def each_context(self, request):
        context = super().each_context(request)
        context["no_institution"] = _works_on_no_institution(request)
        return context

    def has_permission(self, request):
        return super().has_permission(request) and request.user.is_verified()

    def admin_view(self, view, cacheable=False):
        """Django's wrapper of every admin page (permission, CSRF, no cache), then the page's
        heading and browser title in plain language (`plain_heading`)."""
        inner = super().admin_view(view, cacheable)

        @wraps(inner)
        def with_plain_heading(request, *args, **kwargs):
            response = inner(request, *args, **kwargs)
            # A TemplateResponse renders after the view returns: its context can still change.
            context = getattr(response, "context_data", None)
            if context is not None and not response.is_rendered:
                plain_heading(context)
            return response

        return with_plain_heading

    def login(self, request, extra_context=None):
        if _needs_enrolment(request.user):
            return self._to_enrolment(request)
        response = super().login(request, extra_context)
        # Signed in just now with the password and an enrolment token (StaffLoginForm): the
        # session keeps the token's id and goes to enrolment, where its own key is made.
        token_id = getattr(request.user, "enrolment_token_id", None)
        if token_id is not None:
            request.session[ENROLMENT_TOKEN] = token_id
            request.session.pop(ENROLMENT_DEVICE, None)
            return self._to_enrolment(request)
        return response

    def _to_enrolment(self, request):
        target = reverse("admin:second_factor_enrol", current_app=self.name)
        redirect_to = request.POST.get(REDIRECT_FIELD_NAME) or request.GET.get(REDIRECT_FIELD_NAME)
        if redirect_to:
            target = f"{target}?{urlencode({REDIRECT_FIELD_NAME: redirect_to})}"
        return HttpResponseRedirect(target)

    def get_urls(self):
        return [
            path(
                "second-factor/enrol/",
                never_cache(csrf_protect(self.second_factor_enrol)),
                name="second_factor_enrol",
            ),
            path(
                "second-factor/recovery-codes/",
                self.admin_view(self.recovery_codes),
                name="second_factor_recovery_codes",
            ),
            path("search/", self.admin_view(self.search), name="search"),
            *super().get_urls(),
        ]

    def second_factor_enrol(self, request):
        """This session's new key as a QR code (and as text to type), then the app's first
        code: the device is confirmed, the token used up, the session verified, and the
        recovery codes shown once. A session whose token is closed (used by another session,
        replaced, expired) is signed out."""
        user = request.user
        login_url = reverse("admin:login", current_app=self.name)
        if not _needs_enrolment(user):
            # Not signed in, not staff, or enrolled already (a new device is a reset's).
            return redirect_to_login(request.get_full_path(), login_url)
        if request.method == "POST" and "cancel" in request.POST:
            logout(request)
            return HttpResponseRedirect(login_url)
        token_id = request.session.get(ENROLMENT_TOKEN)
        form = CodeForm(request.POST if request.method == "POST" else None)
        notice = None
        if form.is_valid():
            try:
                enrolled = second_factor.enrolment_confirm(
                    user=user,
                    token_id=token_id,
                    device_id=request.session.get(ENROLMENT_DEVICE),
                    code=form.cleaned_data["code"],
                )
            except second_factor.EnrolmentClosed:
                logout(request)
                return HttpResponseRedirect(login_url)
            except second_factor.EnrolmentKeyReplaced as replaced:
                notice, form = replaced.message, CodeForm()
            except ValidationFailed as error:
                form.add_error(None, error.message)
            else:
                if enrolled is None:
                    form.add_error("code", "That code is wrong. Enter the app's current code.")
                else:
                    request.session.pop(ENROLMENT_DEVICE, None)
                    request.session.pop(ENROLMENT_TOKEN, None)
                    django_otp.login(request, enrolled.device)
                    return self._codes_page(request, enrolled.codes, next_url=_next_url(request))
        try:
            device, made = second_factor.enrolment_device(
                user=user, token_id=token_id, device_id=request.session.get(ENROLMENT_DEVICE)
            )
        except ValidationFailed:  # the token is closed, or the user enrolled meanwhile
            logout(request)
            return HttpResponseRedirect(login_url)
        if made and ENROLMENT_DEVICE in request.session and notice is None:
            notice = second_factor.EnrolmentKeyReplaced.message
        request.session[ENROLMENT_DEVICE] = device.pk
        context = {
            **self.each_context(request),
            "title": "Set up your second factor",
            "form": form,
            "notice": notice,
            "qr_svg": _qr_svg(device.config_url),
            "secret": _grouped(b32encode(device.bin_key).decode()),
            REDIRECT_FIELD_NAME: _next_url(request),
        }
        request.current_app = self.name
        return TemplateResponse(request, "backoffice/second_factor_enrol.html", context)

    def recovery_codes(self, request):
        """A verified user's new recovery codes (the old ones stop working), shown once, for a
        current code of their app."""
        form = CodeForm(request.POST if request.method == "POST" else None)
        if form.is_valid():
            try:
                codes = second_factor.recovery_codes_renew(
                    user=request.user, code=form.cleaned_data["code"]
                )
            except ValidationFailed as error:
                form.add_error(None, error.message)
            else:
                if codes is not None:
                    return self._codes_page(request, codes, next_url=reverse("admin:index"))
                form.add_error("code", "That code is wrong. Enter the app's current code.")
        context = {
            **self.each_context(request),
            "title": "Recovery codes",
            "form": form,
            "remaining": _remaining_codes(request.user),
        }
        request.current_app = self.name
        return TemplateResponse(request, "backoffice/second_factor_renew.html", context)

    def search(self, request):
        """The search box's page (`backoffice.search`): a POST, so that what was typed (an
        account or card number) stays out of URLs and logs; a GET shows the empty box."""
        query = request.POST.get("q", "")[:MAX_QUERY] if request.method == "POST" else ""
        context = {
            **self.each_context(request),
            "title": "Search",
            "query": search.shown(query),
            "searched": bool(query.strip()),
            "groups": search.search(request, query),
        }
        request.current_app = self.name
        return TemplateResponse(request, "backoffice/search.html", context)

    def _codes_page(self, request, codes, *, next_url):
        context = {
            **self.each_context(request),
            "title": "Your recovery codes",
            "codes": codes,
            "next_url": next_url,
        }
        request.current_app = self.name
        return TemplateResponse(request, "backoffice/second_factor_codes.html", context)


def list_title(opts) -> str:
    """A changelist's heading: what it lists, as the menu names it ("Accounts", "Staff
    users")."""
    return ADMINISTRATION_NAMES.get(opts.label, capfirst(opts.verbose_name_plural))


def object_title(opts, obj) -> str:
    """A row's page's heading: the row's own name (its `__str__`, shown by Django under its
    heading before), after what it is unless the name already says it."""
    name = str(obj)
    kind = str(opts.verbose_name)
    if name.lower().startswith(kind.lower()):
        return capfirst(name)
    return f"{capfirst(kind)} {name}"


def plain_heading(context: dict) -> None:
    """Replace the heading (and so the browser tab's title) Django gives a changelist or a
    change form with a plain one. Only Django's own words are replaced: a page that set its
    own title (the customer page, an action's confirmation) keeps it."""
    opts, title = context.get("opts"), context.get("title")
    app_list = context.get("app_list")
    if opts is None and title is not None and context.get("app_label") and app_list:
        # An app's own page: "Accounts administration" -> "Accounts".
        name = app_list[0]["name"]
        if title == gettext("%(app)s administration") % {"app": name}:
            context["title"] = name
        return
    if opts is None or title is None:
        return
    obj = context.get("object")
    if obj is not None and title == gettext("Change history: %s") % obj:
        context["title"] = f"History: {object_title(opts, obj)}"
        return
    changelist = context.get("cl")
    if changelist is not None:
        if title == changelist.title:  # "Select account to change" / "... to view" / "Select"
            context["title"] = list_title(opts)
        return
    if "original" not in context or "add" not in context:
        return
    django_titles = {
        gettext(word) % opts.verbose_name for word in ("Add %s", "Change %s", "View %s")
    }
    if title not in django_titles:
        return
    original = context["original"]
    if original is None:
        context["title"] = f"New {opts.verbose_name}"
    else:
        context["title"] = object_title(opts, original)
        context["subtitle"] = None  # the name was Django's subtitle: now the heading


def _works_on_no_institution(request) -> bool:
    """A verified staff user with no institution to work on (no `InstitutionAccess` row, not
    every institution): every list is empty for them, and the pages say why."""
    user = request.user
    if not (user.is_active and user.is_staff) or user.is_superuser or not user.is_verified():
        return False
    allowed = staff_institutions(request)
    return allowed is not None and not allowed.exists()


def _needs_enrolment(user) -> bool:
    return (
        user.is_authenticated
        and user.is_active
        and user.is_staff
        and not user.is_verified()
        and not second_factor.has_second_factor(user)
    )


def _next_url(request) -> str:
    redirect_to = request.POST.get(REDIRECT_FIELD_NAME) or request.GET.get(REDIRECT_FIELD_NAME)
    if redirect_to and url_has_allowed_host_and_scheme(
        redirect_to, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return redirect_to
    return reverse("admin:index")


def _qr_svg(url: str) -> str:
    image = qrcode.make(url, image_factory=qrcode.image.svg.SvgPathImage, box_size=8)
    return mark_safe(image.to_string(encoding="unicode"))  # noqa: S308 (our own SVG)


def _grouped(secret: str) -> str:
    return " ".join(secret[i : i + 4] for i in range(0, len(secret), 4))


def _remaining_codes(user) -> int:
    return RecoveryCode.objects.filter(device__user=user).count()
