"""Request-level plumbing that runs before any view: context, size limit, access log."""

import logging
import time

from django.conf import settings

from api.context import RequestContext, current_tran_id
from api.errors import error_response
from core import exceptions as tx

access_log = logging.getLogger("tx.access")
error_log = logging.getLogger("tx.errors")

API_PREFIX = "/TX/"
# An error page Django rendered by itself (unknown URL, DEBUG pages) becomes our JSON error.
_ERRORS_BY_STATUS = {
    400: tx.ValidationFailed,
    403: tx.PermissionDenied,
    404: tx.NotFound,
    405: tx.MethodNotAllowed,
    413: tx.PayloadTooLarge,
    415: tx.UnsupportedMediaType,
}


def _is_json(response) -> bool:
    return response.get("Content-Type", "").startswith("application/json")


class RequestContextMiddleware:
    """Gives each request its `tranId`, sends it back as `X-Request-Id`, and logs one line."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.tx = ctx = RequestContext()
        token = current_tran_id.set(ctx.tran_id)
        try:
            return self._respond(request, ctx)
        finally:
            current_tran_id.reset(token)

    def _respond(self, request, ctx):
        started = time.perf_counter()
        response = self.get_response(request)
        if (
            request.path.startswith(API_PREFIX)
            and response.status_code >= 400
            and not _is_json(response)
        ):
            error = _ERRORS_BY_STATUS.get(response.status_code, tx.InternalError)
            response = error_response(request, error())
        response["X-Request-Id"] = ctx.tran_id
        access_log.info(
            "request",
            extra={
                "institution": ctx.institution_id,
                "apiKeyId": ctx.api_key_id,
                "method": request.method,
                "path": request.path,
                "status": response.status_code,
                "durationMs": round((time.perf_counter() - started) * 1000, 1),
            },
        )
        return response

    def process_exception(self, request, exception):
        """An exception no view handled: JSON 500 for API paths (even with DEBUG on)."""
        if not request.path.startswith(API_PREFIX):
            return None
        error_log.exception("unhandled error")
        return error_response(request, tx.InternalError())


# The operations whose body may be MAX_BATCH_BODY_BYTES (by the end of their path).
BATCH_BODY_PATHS = ("/transfer-batches", "/rail-files", "/bank-statements", "/network-settlements")


class BodySizeLimitMiddleware:
    """413 for a declared body over MAX_BODY_BYTES (MAX_BATCH_BODY_BYTES for a transfer batch,
    a bank's file uploaded and a network's settlement), before anything reads it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return error_response(request, tx.ValidationFailed("Content-Length is not a number."))
        limit = (
            settings.MAX_BATCH_BODY_BYTES
            if request.path.endswith(BATCH_BODY_PATHS)
            else settings.MAX_BODY_BYTES
        )
        if length > limit:
            return error_response(
                request, tx.PayloadTooLarge(f"The request body is larger than {limit} bytes.")
            )
        return self.get_response(request)
