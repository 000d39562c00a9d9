"""Per-request context: the `tranId` and timestamp that every response's `meta` carries.

Set by `api.middleware.RequestContextMiddleware` on the Django request as `request.tx`.
"""

from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime

from core.ids import new_id
from core.timestamps import iso_millis


@dataclass
class RequestContext:
    tran_id: str = field(default_factory=lambda: new_id("req"))
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    institution_id: str | None = None
    api_key_id: str | None = None

    def meta(self) -> dict:
        return {"tranId": self.tran_id, "timestamp": iso_millis(self.started_at)}


# The tranId of the request this thread is serving, for log lines written far from the request.
current_tran_id: ContextVar[str | None] = ContextVar("tx_tran_id", default=None)


def context_of(request) -> RequestContext:
    """The context of a Django or DRF request (one is made if middleware did not run)."""
    django_request = getattr(request, "_request", request)
    ctx = getattr(django_request, "tx", None)
    if ctx is None:
        ctx = RequestContext()
        django_request.tx = ctx
    return ctx
