"""The HTTP client of outbound calls (webhook deliveries, decisioning endpoints): one POST
with one deadline and a cap on the bytes read, no redirects, no proxies from the environment,
and a connection that is dropped before anything is sent when its peer address is not allowed
(`core.outbound.targets.refusal`).

The peer check sits in the connection itself (urllib3's `_new_conn`): whatever the name resolved
to when the delivery checked it, the address the socket is connected to is what is judged, so a
DNS answer that changes between the check and the connection (rebinding) cannot reach a private
address. Errors are described in a few words without the URL (it may carry a token).

**One deadline per attempt.** `requests`' timeout is per socket operation: a receiver that sends
one byte just before each read times out holds the attempt (and the worker running it) for as
long as it likes. So an attempt has a `Budget` instead: a wall-clock deadline, `timeout` seconds
after `post` starts, and a number of bytes it may read. Every blocking step gets only the time
left, so the deadline holds however the peer trickles:

- connecting: each address the host resolves to is tried with the time left (urllib3 would give
  each address the whole timeout: a name with many unreachable addresses multiplies it);
- the TLS handshake: the connected socket's timeout is set to the time left, and CPython bounds
  a whole `do_handshake` by the socket timeout (one deadline, not one per read);
- sending: the time left before each `sendall` (which CPython bounds as a whole too);
- the response: the status line, headers and body are read through `_BoundedReader`, which sets
  the socket's timeout to the time left before each read, and stops the attempt
  (`DeadlinePassed`) when none is left;
- resolving the name: `core.outbound.resolver`, on the caller's thread, with the time left as its
  lifetime (or from its cache).

**A cap on the bytes read.** http.client accepts header lines of up to 64 KiB, 100 of them.
Here every byte taken from the socket (status line, headers and body together) counts against
the budget's `max_bytes` (WEBHOOK_MAX_RESPONSE_BYTES), and of the body only what the excerpt
needs (`EXCERPT_BYTES`) is asked for; the rest is never read (the connection is closed). A
response whose headers do not fit is a failed attempt (`ResponseTooLarge`); compression is not
accepted (`Accept-Encoding: identity`), so nothing is inflated.

`DeadlinePassed` and `ResponseTooLarge` are not `OSError`s on purpose: urllib3 and requests
let them through unwrapped (closing the connection on the way), and `post` turns them into a
failed attempt.
"""

import errno
import functools
import http.client
import io
import os
import socket
import sys
import time
from dataclasses import dataclass, field

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import (
    ConnectTimeoutError,
    HTTPError,
    NameResolutionError,
    NewConnectionError,
)
from urllib3.util.connection import allowed_gai_family

from . import resolver
from .targets import REFUSED, refusal

# The first characters of a response kept for its record, and the longest error description
# (the columns of webhook attempts hold them).
RESPONSE_EXCERPT_CHARS = 500
MAX_ERROR_LENGTH = 200

# Bytes read from a response for its excerpt (a UTF-8 character is at most four bytes).
EXCERPT_BYTES = RESPONSE_EXCERPT_CHARS * 4
# The longest value kept of a response header the caller asks for (`post(keep_headers=...)`):
# a decisioning answer's signature headers are well under it (a `v1,` signature is 47
# characters); what is longer is cut, which can only make a signature fail to verify.
MAX_KEPT_HEADER_CHARS = 1024


class DeadlinePassed(Exception):  # noqa: N818 (reads as what happened)
    """The attempt's wall-clock deadline passed before its response was complete."""


class ResponseTooLarge(Exception):  # noqa: N818
    """The response needed more bytes than the attempt may read."""


class Budget:
    """What one attempt may spend: time until `deadline` (time.monotonic()) and `max_bytes`
    read from the socket. One per `post`, shared by its connection and its response."""

    def __init__(self, *, deadline: float, max_bytes: int):
        self.deadline = deadline
        self.max_bytes = max_bytes
        self.bytes_read = 0

    def time_left(self) -> float:
        return self.deadline - time.monotonic()

    def timeout(self) -> float:
        """The time left, as a socket timeout; DeadlinePassed when there is none."""
        left = self.time_left()
        if left <= 0:
            raise DeadlinePassed
        return left

    def allowance(self, wanted: int) -> int:
        """How many of `wanted` bytes the next read may take; ResponseTooLarge when none."""
        left = self.max_bytes - self.bytes_read
        if left <= 0:
            raise ResponseTooLarge
        return min(wanted, left)


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


def _connect(conn, budget: Budget) -> socket.socket:
    """urllib3's `create_connection`, except that the host is resolved by
    `core.outbound.resolver` within the time left, and each of its addresses is tried with the
    time left only. Raises what it does (gaierror, TimeoutError, OSError)."""
    host = conn._dns_host
    if host.startswith("["):
        host = host.strip("[]")
    error: OSError = OSError("the host has no address")
    for ip in resolver.addresses(host, timeout=budget.time_left(), family=allowed_gai_family()):
        left = budget.time_left()
        if left <= 0:
            raise TimeoutError("no time left to connect")
        # The socket address of an IP literal (an IPv6 zone id made a scope id): numeric only,
        # nothing is resolved here.
        [(family, kind, proto, _, address)] = socket.getaddrinfo(
            ip, conn.port, 0, socket.SOCK_STREAM, socket.IPPROTO_TCP, socket.AI_NUMERICHOST
        )
        sock = socket.socket(family, kind, proto)
        try:
            for option in conn.socket_options or ():
                sock.setsockopt(*option)
            sock.settimeout(left)
            if conn.source_address:
                sock.bind(conn.source_address)
            sock.connect(address)
            return sock
        except OSError as exc:
            sock.close()
            error = exc
    raise error


class _BoundedReader(io.RawIOBase):
    """The socket as http.client reads a response from it: before each read the socket's
    timeout becomes the time left, and no read takes more than the bytes left."""

    def __init__(self, sock, budget: Budget):
        super().__init__()
        self._sock = sock
        # The socket's own raw file: it keeps the socket open while the response is read,
        # as http.client expects (it may close its connection before reading the body).
        self._file = sock.makefile("rb", buffering=0)
        self._budget = budget

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._file.fileno()

    def readinto(self, buffer) -> int:
        view = memoryview(buffer).cast("B")
        size = self._budget.allowance(len(view))
        self._sock.settimeout(self._budget.timeout())
        try:
            count = self._file.readinto(view[:size])
        except TimeoutError:
            raise DeadlinePassed from None
        self._budget.bytes_read += count or 0
        return count

    def close(self) -> None:
        if not self.closed:
            self._file.close()
        super().close()


class _BoundedResponse(http.client.HTTPResponse):
    """http.client's response, reading through `_BoundedReader`."""

    def __init__(self, sock, *args, budget: Budget, **kwargs):
        super().__init__(sock, *args, **kwargs)
        self.fp.close()  # the plain file http.client made (closing it only drops a reference)
        self.fp = io.BufferedReader(_BoundedReader(sock, budget))


class _Guarded:
    """What deliveries add to urllib3's connections: the attempt's budget and the peer check."""

    def __init__(self, *args, budget: Budget, **kwargs):
        super().__init__(*args, **kwargs)
        self.budget = budget
        self.response_class = functools.partial(_BoundedResponse, budget=budget)

    def _new_conn(self):
        try:
            sock = _connect(self, self.budget)
        except socket.gaierror as exc:
            raise NameResolutionError(self.host, self, exc) from exc
        except TimeoutError as exc:
            raise ConnectTimeoutError(self, f"Connection to {self.host} timed out.") from exc
        except OSError as exc:
            raise NewConnectionError(self, f"Failed to establish a new connection: {exc}") from exc
        sys.audit("http.client.connect", self, self.host, self.port)
        sock = _checked(sock, self)
        left = self.budget.time_left()
        if left <= 0:
            sock.close()
            raise ConnectTimeoutError(self, f"Connection to {self.host} timed out.")
        sock.settimeout(left)  # bounds the TLS handshake that follows (https)
        return sock

    def send(self, data) -> None:
        if self.sock is not None:
            self.sock.settimeout(self.budget.timeout())
        try:
            super().send(data)
        except TimeoutError:
            raise DeadlinePassed from None


class GuardedHTTPConnection(_Guarded, HTTPConnection):
    pass


class GuardedHTTPSConnection(_Guarded, HTTPSConnection):
    pass


class GuardedHTTPConnectionPool(HTTPConnectionPool):
    ConnectionCls = GuardedHTTPConnection


class GuardedHTTPSConnectionPool(HTTPSConnectionPool):
    ConnectionCls = GuardedHTTPSConnection


class GuardedAdapter(HTTPAdapter):
    """requests' adapter with the guarded pools; their connections get `budget`."""

    def __init__(self, *, budget: Budget):
        self.budget = budget
        super().__init__(max_retries=0)

    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, **kwargs)
        # A pool passes the keywords it does not know to its connections.
        self.poolmanager.pool_classes_by_scheme = {
            "http": functools.partial(GuardedHTTPConnectionPool, budget=self.budget),
            "https": functools.partial(GuardedHTTPSConnectionPool, budget=self.budget),
        }


@dataclass
class Outcome:
    """What one POST got: a status code and an excerpt, or an error (no complete response).
    `headers`: the response headers the caller asked to keep (lower-case names, each value at
    most MAX_KEPT_HEADER_CHARS), those present only. `bytes_read` is what was taken from the
    socket (not recorded)."""

    duration_ms: int
    status_code: int | None = None
    response_excerpt: str = ""
    error: str = ""
    bytes_read: int = 0
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code <= 299


def post(
    url: str,
    *,
    body: bytes,
    headers: dict,
    timeout: float,
    max_response_bytes: int,
    excerpt_chars: int = RESPONSE_EXCERPT_CHARS,
    keep_headers: tuple[str, ...] = (),
) -> Outcome:
    """POST `body` to `url` within `timeout` seconds (wall clock, everything included),
    reading at most `max_response_bytes`; never raises for what the network or the receiver
    does. A response not complete by the deadline (status line, headers and the excerpt's part
    of the body) is a timeout: no status. The excerpt is the body's first `excerpt_chars`
    characters (a decisioning endpoint's answer is read whole this way: its size is capped).
    `keep_headers`: the response headers (lower-case names) returned in `Outcome.headers`
    (a decisioning answer's signature); the headers are read anyway, within the byte cap."""
    started = time.monotonic()
    budget = Budget(deadline=started + timeout, max_bytes=max_response_bytes)
    session = requests.Session()
    session.trust_env = False  # no proxy or .netrc credentials from the environment
    adapter = GuardedAdapter(budget=budget)
    session.mount("http://", adapter)
    session.mount("https://", adapter)

    def failed(error: str) -> Outcome:
        return Outcome(
            duration_ms=_since(started),
            error=error[:MAX_ERROR_LENGTH],
            bytes_read=budget.bytes_read,
        )

    try:
        with session.post(
            url,
            data=body,
            headers={**headers, "accept-encoding": "identity"},
            timeout=(timeout, timeout),
            allow_redirects=False,
            stream=True,
        ) as response:
            excerpt = _excerpt(response.raw, excerpt_chars)
            return Outcome(
                duration_ms=_since(started),
                status_code=response.status_code,
                response_excerpt=excerpt,
                bytes_read=budget.bytes_read,
                headers={
                    name: response.headers[name][:MAX_KEPT_HEADER_CHARS]
                    for name in keep_headers
                    if name in response.headers
                },
            )
    except DeadlinePassed:
        return failed(f"timeout: no response within {timeout:g} s")
    except ResponseTooLarge:
        return failed(f"response too large: its headers exceed {max_response_bytes} bytes")
    except requests.RequestException as exc:
        return failed(describe(exc, timeout))
    finally:
        session.close()


def _excerpt(raw, chars: int = RESPONSE_EXCERPT_CHARS) -> str:
    """The start of the body: at most `chars` characters (4 bytes each at most). Read
    in small pieces, so what came before the byte cap or a broken connection is kept; the
    deadline (DeadlinePassed) ends the attempt."""
    data = bytearray()
    wanted = chars * 4
    try:
        while len(data) < wanted:
            chunk = raw.read(min(512, wanted - len(data)), decode_content=False)
            if not chunk:
                break
            data += chunk
    except (ResponseTooLarge, HTTPError, OSError):
        pass  # the status stands; the excerpt is what arrived
    return bytes(data).decode("utf-8", errors="replace")[:chars]


def _since(started: float) -> int:
    return max(0, round((time.monotonic() - started) * 1000))


def describe(exc: requests.RequestException, timeout: float) -> str:
    """A few words on why there was no response; never the URL."""
    reason = _reason(exc)
    # A refused address and a name that does not resolve read the same
    # (core.outbound.targets.REFUSED): told apart, they would map the bank's internal DNS for
    # whoever controls the endpoint's name.
    if isinstance(reason, RefusedAddress | NameResolutionError):
        text = f"refused: {REFUSED}"
    elif isinstance(exc, requests.ConnectTimeout):
        text = f"timeout: no connection within {timeout:g} s"
    elif isinstance(exc, requests.ReadTimeout):
        text = f"timeout: no response within {timeout:g} s"
    elif isinstance(exc, requests.exceptions.SSLError):
        text = "TLS error: the handshake or the certificate check failed"
    elif isinstance(reason, NewConnectionError):
        text = f"connection failed: {_os_error(reason) or 'could not connect'}"
    elif _malformed(exc):
        text = "invalid response: not a well-formed HTTP/1.x status line and headers"
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


def _malformed(exc: BaseException) -> bool:
    """Whether http.client refused the response itself (a bad status line, over 100 headers),
    as opposed to a connection closed early (RemoteDisconnected)."""
    pending, seen = [exc], set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, http.client.RemoteDisconnected):
            return False
        if isinstance(current, http.client.HTTPException):
            return True
        pending += [arg for arg in current.args if isinstance(arg, BaseException)]
        pending += [e for e in (current.__cause__, current.__context__) if e is not None]
    return False


def _os_error(exc: BaseException) -> str | None:
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in errno.errorcode:
            return os.strerror(exc.errno)
        exc = exc.__cause__ or exc.__context__
    return None
