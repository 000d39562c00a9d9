"""The admin's middleware, run for every path but the API's (issue 53; docs/architecture.md,
"Middleware").

Sessions, CSRF, authentication, the second factor and messages serve the back office
(`/admin/`): an API request (`/TX/...`) authenticates with its key (`api.auth`), has no
session, cookie or form, and DRF's views are exempt from CSRF. Each of them still ran on every
API request, reading no session but building its lazy objects, checking its cookies, setting
its headers. Here each is the same class with one change: for a path under `/TX/` its
`__call__` hands the request straight on, and its hooks (`process_view`,
`process_exception`, `process_template_response`) do nothing. Everything else is theirs: the
admin's requests pass every hook as before (its CSRF check refuses a forged form:
tests/backoffice/test_admin_middleware.py), the settings list them in the same order, and
Django's admin checks find them (they look for subclasses). django-axes's stays as it is: its
check wants its own name in the list, and on a request that is not a login it reads one
attribute.
"""

from django.contrib.auth.middleware import AuthenticationMiddleware as _Authentication
from django.contrib.messages.middleware import MessageMiddleware as _Messages
from django.contrib.sessions.middleware import SessionMiddleware as _Sessions
from django.middleware.csrf import CsrfViewMiddleware as _Csrf
from django_otp.middleware import OTPMiddleware as _OTP

from api.middleware import API_PREFIX


def _api(request) -> bool:
    return request.path_info.startswith(API_PREFIX)


def outside_the_api(middleware: type) -> type:
    """`middleware` for every request but the API's (module docstring). Sync only: the service
    runs under WSGI, and Django adapts the chain around a middleware that is not async
    capable."""

    def __call__(self, request):
        if _api(request):
            return self.get_response(request)
        return middleware.__call__(self, request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        if _api(request):
            return None
        return middleware.process_view(self, request, view_func, view_args, view_kwargs)

    def process_exception(self, request, exception):
        if _api(request):
            return None
        return middleware.process_exception(self, request, exception)

    def process_template_response(self, request, response):
        if _api(request):
            return response
        return middleware.process_template_response(self, request, response)

    hooks = {
        "process_view": process_view,
        "process_exception": process_exception,
        "process_template_response": process_template_response,
    }
    attributes = {
        "__call__": __call__,
        "__module__": __name__,
        "__doc__": f"{middleware.__module__}.{middleware.__name__}, outside the API only.",
        "sync_capable": True,
        "async_capable": False,
        **{name: hook for name, hook in hooks.items() if hasattr(middleware, name)},
    }
    return type(middleware.__name__, (middleware,), attributes)


# Imported when Django loads the settings' list (django-otp's imports its models: the apps are
# ready then).
SessionMiddleware = outside_the_api(_Sessions)
CsrfViewMiddleware = outside_the_api(_Csrf)
AuthenticationMiddleware = outside_the_api(_Authentication)
OTPMiddleware = outside_the_api(_OTP)
MessageMiddleware = outside_the_api(_Messages)
