"""The back office's error pages (docs/back-office.md, "Error pages"): what a staff user sees
when the admin refuses a page (403), has none at the address (404), cannot read the request
(400) or fails (500), in the back office's look. The root URLconf sends the admin's paths here
and every other path to the API's JSON errors (`api.errors`), as before.

The 403 and 404 pages are the admin's frame (header, search box, the user's links): the
request got past the middleware, so the site's context can be read. The 400 and 500 pages read
nothing from the database or the request but the request's id: the database may be what
failed, and a 400 may come of a request the site cannot trust (a host it does not serve).
"""

from django.contrib import admin
from django.http import HttpResponse
from django.template import loader
from django.template.response import TemplateResponse

TEMPLATE = "backoffice/error.html"

# What each page says: its heading, then what happened and what to do.
PAGES = {
    400: (
        "The request could not be read",
        "The back office could not understand what your browser sent. Go back, reload the page "
        "and try again.",
    ),
    403: (
        "You may not open this page",
        "Your roles do not give you this page or this action. If your work needs it, ask a "
        "back-office superuser to give you the role.",
    ),
    404: (
        "Nothing here",
        "No page of the back office has this address: the link may be wrong or old. Search for "
        "what you need, or start again from Today's work.",
    ),
    500: (
        "Something went wrong on our side",
        "The back office failed to answer, and the error is logged. Nothing you did caused it. "
        "If it happens again, tell the team that runs TX and quote the reference below.",
    ),
}


def _reference(request) -> str:
    """The request's id (`X-Request-Id`, the `tranId` its log lines carry), when it has one."""
    context = getattr(request, "tx", None)
    return getattr(context, "tran_id", "") or ""


def page(request, status: int) -> HttpResponse:
    """The error page of `status` for an admin path."""
    heading, text = PAGES[status]
    context = {
        "title": heading,
        "text": text,
        "status": status,
        "reference": _reference(request),
    }
    if status in (403, 404):
        context = {**admin.site.each_context(request), **context}
        return TemplateResponse(request, TEMPLATE, context, status=status).render()
    # Without the request: no context processor, no session, no query.
    return HttpResponse(loader.get_template(TEMPLATE).render(context), status=status)
