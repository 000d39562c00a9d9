"""Renders every error the API answers, in the caller's version (docs/design.md section 5).

`exception_handler` is DRF's hook: it maps DRF's and Django's own exceptions onto our hierarchy
and renders them. `error_response` is the same rendering for errors raised outside DRF views
(middleware, unknown URLs, Django's 500): no HTML error page ever reaches an API client.
"""

import logging

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import Http404, JsonResponse
from rest_framework import exceptions as drf
from rest_framework.views import set_rollback

from api.context import context_of
from api.names import api_details
from api.versions import error_body, version_of_path
from core import exceptions as tx

logger = logging.getLogger("tx.errors")

# RFC 9110 section 15.5.2: a 401 must name the scheme to use (as ApiKeyAuthentication does).
WWW_AUTHENTICATE = 'ApiKey header="x-api-key"'


class RequestInvalid(tx.ValidationFailed):
    """A body or query a serializer refused: its `details` are keyed by the serializer's fields
    (or the client's own unknown names), already the version's names."""


def error_response(request, error: tx.TXError, version: str | None = None) -> JsonResponse:
    version = version or getattr(request, "version", None) or version_of_path(request.path)
    ctx = context_of(request)
    # Services raise in the domain's names; the client reads the version's (`api.names`).
    details = (
        error.details if isinstance(error, RequestInvalid) else api_details(error.details, version)
    )
    if isinstance(error, tx.InternalError) and details is None:
        details = {"tranId": ctx.tran_id}
    body = error_body(version, error.code, error.message, details, ctx.meta())
    response = JsonResponse(body, status=error.status, json_dumps_params={"separators": (",", ":")})
    retry_after = getattr(error, "retry_after", None)
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    if error.status == 401:
        response["WWW-Authenticate"] = WWW_AUTHENTICATE
    return response


def _validation_details(detail, prefix: str = "") -> dict:
    """Flatten DRF's nested error detail into {"field.path": "message"}."""
    flat: dict[str, str] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            path = prefix if key == "non_field_errors" else (f"{prefix}.{key}" if prefix else key)
            flat.update(_validation_details(value, path))
    elif isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            flat[prefix or "body"] = " ".join(str(item) for item in detail)
        else:
            for index, item in enumerate(detail):
                flat.update(_validation_details(item, f"{prefix}[{index}]"))
    else:
        flat[prefix or "body"] = str(detail)
    return flat


def to_tx_error(exc: Exception) -> tx.TXError | None:
    """Our error for an exception, or None when it is not an expected one (a bug: 500)."""
    if isinstance(exc, tx.TXError):
        return exc
    if isinstance(exc, drf.ParseError):
        return RequestInvalid(
            "The request body is not valid JSON.", details={"body": str(exc.detail)}
        )
    if isinstance(exc, drf.ValidationError):
        return RequestInvalid(details=_validation_details(exc.detail))
    if isinstance(exc, drf.NotAuthenticated | drf.AuthenticationFailed):
        return tx.AuthenticationFailed()
    if isinstance(exc, drf.PermissionDenied | DjangoPermissionDenied):
        return tx.PermissionDenied()
    if isinstance(exc, drf.NotFound | Http404):
        return tx.NotFound()
    if isinstance(exc, drf.MethodNotAllowed):
        return tx.MethodNotAllowed()
    if isinstance(exc, drf.UnsupportedMediaType):
        return tx.UnsupportedMediaType()
    if isinstance(exc, drf.NotAcceptable):
        return tx.ValidationFailed("Responses are only available as application/json.")
    if isinstance(exc, drf.Throttled):
        return tx.RateLimited(retry_after=max(1, int(exc.wait or 1)))
    if isinstance(exc, OperationalError | InterfaceError):
        return tx.ServiceUnavailable()
    return None


def exception_handler(exc, context):
    request = context["request"]
    error = to_tx_error(exc)
    if error is None:
        if isinstance(exc, DatabaseError):
            logger.exception("database error")
        else:
            logger.exception("unhandled error")
        error = tx.InternalError()
    elif isinstance(exc, OperationalError | InterfaceError):
        logger.error("database unavailable", extra={"error": type(exc).__name__})
    set_rollback()
    return error_response(request, error)


# Django's handlers for errors outside DRF views (config/urls.py names them).
def handler404(request, exception=None):
    return error_response(request, tx.NotFound())


def handler500(request):
    return error_response(request, tx.InternalError())


def handler400(request, exception=None):
    return error_response(request, tx.ValidationFailed("The request could not be understood."))


def handler403(request, exception=None):
    return error_response(request, tx.PermissionDenied())
