"""The HTTP client of deliveries: one POST, a timeout, no redirects, no proxies from the
environment, and a connection that is dropped before anything is sent when its peer address is
not allowed (`webhooks.targets.refusal`).

The peer check sits in the connection itself (urllib3's `_new_conn`): whatever the name resolved
to when the delivery checked it, the address the socket is connected to is what is judged, so a
DNS answer that changes between the check and the connection (rebinding) cannot reach a private
address. Errors are described in a few words without the URL (it may carry a token).
"""

import errno
import os
import time
from dataclasses import dataclass

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import NameResolutionError, NewConnectionError

from .models import MAX_ERROR_LENGTH, RESPONSE_EXCERPT_CHARS
from .targets import refusal

# Bytes read from a response for its excerpt (a UTF-8 character is at most four bytes).
EXCERPT_BYTES = RESPONSE_EXCERPT_CHARS * 4


class RefusedAddress(NewConnectionError):
    """The socket connected to an address deliveries may not reach; closed before sending."""

    def __init__(self, conn, reason: str):
        self.reason = reason
        super().__init__(conn, f"refused target address ({reason})")


def _checked(sock, conn):
    address = sock.getpeername()[0]
    reason = refusal(address)
    if reason is not None:
        sock.close()
        raise RefusedAddress(conn, reason)
    return sock


class GuardedHTTPConnection(HTTPConnection):
    def _new_conn(self):
        return _checked(super()._new_conn(), self)


class GuardedHTTPSConnection(HTTPSConnection):
    def _new_conn(self):
        return _checked(super()._new_conn(), self)


class GuardedHTTPConnectionPool(HTTPConnectionPool):
    ConnectionCls = GuardedHTTPConnection


class GuardedHTTPSConnectionPool(HTTPSConnectionPool):
    ConnectionCls = GuardedHTTPSConnection


class GuardedAdapter(HTTPAdapter):
    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {
            "http": GuardedHTTPConnectionPool,
            "https": GuardedHTTPSConnectionPool,
        }


@dataclass
class Outcome:
    """What one POST got: a status code and an excerpt, or an error (no response)."""

    duration_ms: int
    status_code: int | None = None
    response_excerpt: str = ""
    error: str = ""

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code <= 299


def post(url: str, *, body: bytes, headers: dict, timeout: float) -> Outcome:
    """POST `body` to `url`; never raises for what the network or the receiver does."""
    started = time.monotonic()
    session = requests.Session()
    session.trust_env = False  # no proxy or .netrc credentials from the environment
    adapter = GuardedAdapter(max_retries=0)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    try:
        with session.post(
            url,
            data=body,
            headers=headers,
            timeout=(timeout, timeout),
            allow_redirects=False,
            stream=True,
        ) as response:
            excerpt = _excerpt(response)
            return Outcome(
                duration_ms=_since(started),
                status_code=response.status_code,
                response_excerpt=excerpt,
            )
    except requests.RequestException as exc:
        return Outcome(duration_ms=_since(started), error=describe(exc, timeout))
    finally:
        session.close()


def _excerpt(response) -> str:
    try:
        chunk = next(response.iter_content(EXCERPT_BYTES), b"")
    except requests.RequestException:
        return ""
    if isinstance(chunk, str):  # pragma: no cover - only with decode_unicode
        return chunk[:RESPONSE_EXCERPT_CHARS]
    return chunk.decode("utf-8", errors="replace")[:RESPONSE_EXCERPT_CHARS]


def _since(started: float) -> int:
    return max(0, round((time.monotonic() - started) * 1000))


def describe(exc: requests.RequestException, timeout: float) -> str:
    """A few words on why there was no response; never the URL."""
    reason = _reason(exc)
    if isinstance(reason, RefusedAddress):
        text = f"refused: the host resolved to {reason.reason}"
    elif isinstance(exc, requests.ConnectTimeout):
        text = f"timeout: no connection within {timeout:g} s"
    elif isinstance(exc, requests.ReadTimeout):
        text = f"timeout: no response within {timeout:g} s"
    elif isinstance(exc, requests.exceptions.SSLError):
        text = "TLS error: the handshake or the certificate check failed"
    elif isinstance(reason, NameResolutionError):
        text = "connection failed: the host could not be resolved"
    elif isinstance(reason, NewConnectionError):
        text = f"connection failed: {_os_error(reason) or 'could not connect'}"
    elif isinstance(exc, requests.ConnectionError):
        text = "connection failed: the connection was closed without a complete response"
    elif isinstance(exc, requests.exceptions.InvalidURL | requests.exceptions.MissingSchema):
        text = "invalid URL"
    else:
        text = f"request failed: {type(exc).__name__}"
    return text[:MAX_ERROR_LENGTH]


def _reason(exc: BaseException):
    """The urllib3 error behind a requests error (requests wraps a MaxRetryError)."""
    for arg in exc.args:
        inner = getattr(arg, "reason", None)
        if isinstance(inner, BaseException):
            return inner
    return None


def _os_error(exc: BaseException) -> str | None:
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in errno.errorcode:
            return os.strerror(exc.errno)
        exc = exc.__cause__ or exc.__context__
    return None
