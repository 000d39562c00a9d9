"""What the webhook tests share: a real HTTP receiver on loopback, a worker run in this process,
and subscribing through the API.

The receiver is `http.server.ThreadingHTTPServer` on 127.0.0.1 (port 0: the system picks one),
serving in a thread. It records every request it answers (headers, body, status given) and
answers what `respond(request)` says (a status code); `delay` makes it slow. `stop()` closes
the socket (connections are refused), `start()` listens again on the same port.

`RawReceiver` is a bare socket server on 127.0.0.1 for the answers http.server cannot give:
its connections are answered in turn by the functions it was given (the last one answers every
connection after), each in a thread of its own: `trickle_headers`, `trickle_body`,
`huge_body`, `huge_headers`, `trickle_tls` (a TLS handshake one byte at a time) and `ok`.

`run_jobs()` runs a procrastinate worker over the delivery queue until no job is due, then
returns, as `manage.py procrastinate worker` would run them (its own database connections: the
tests that use it commit, `django_db(transaction=True)`).
"""

import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from django.db import connection, transaction
from procrastinate.contrib.django import DjangoApp, app
from standardwebhooks import Webhook

from events.services import emit
from tests.accounts.api.helpers import created
from tests.factories import InstitutionFactory
from webhooks.models import WebhookDelivery
from webhooks.services import webhook_endpoint_create
from webhooks.tasks import QUEUE, deliver

# The longest a trickling answer goes on when nobody stops it (a client that honours its
# deadline hangs up long before).
TRICKLE_SECONDS = 30.0
TRICKLE_INTERVAL = 0.2


@dataclass
class Received:
    path: str
    headers: dict
    body: bytes
    status: int
    at: float = field(default_factory=time.monotonic)

    @property
    def webhook_id(self) -> str:
        return self.headers["webhook-id"]

    @property
    def event(self) -> dict:
        return json.loads(self.body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that gave up (timeout) is expected here, not an error to print


class Receiver:
    def __init__(self):
        self.received: list[Received] = []
        self.respond = lambda request: 200
        self.delay = 0.0
        self._hurried = threading.Event()  # set by `hurry()`: the delay is cut short
        self._lock = threading.Lock()
        self.port = 0
        self.server = None
        self.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks?source=tx"

    def start(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = {name.lower(): value for name, value in self.headers.items()}
                request = Received(path=self.path, headers=headers, body=body, status=0)
                status = receiver.respond(request)
                request.status = status
                with receiver._lock:
                    receiver.received.append(request)
                if receiver.delay:
                    receiver._hurried.wait(receiver.delay)
                payload = json.dumps({"status": status, "note": "x" * 600}).encode()
                self.send_response(status)
                if 300 <= status < 400:
                    self.send_header("Location", receiver.url + "&redirected=1")
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format, *args):
                pass

        self.server = _Server(("127.0.0.1", self.port), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def hurry(self) -> None:
        """From now on a delayed receiver answers at once, the requests waiting included: a
        test that has seen what the delay was for does not wait it out."""
        self._hurried.set()

    def stop(self) -> None:
        """Down: the port refuses connections until `start()`."""
        self.server.shutdown()
        self.server.server_close()

    def acknowledged(self) -> list[Received]:
        """The requests answered with a 2xx, in the order they arrived."""
        return [request for request in self.received if 200 <= request.status <= 299]


def verified(request: Received, secret: str) -> dict:
    """The event, after the Standard Webhooks library checked the request's signature."""
    return Webhook(secret).verify(request.body, request.headers)


def _close_connection(call_next, context, worker):
    """Each task's Django connection is closed when it ends (the test database is dropped at the
    end of the run: no connection may linger in a worker thread)."""
    try:
        return call_next()
    finally:
        connection.close()


def takeable_jobs() -> int:
    """Delivery jobs a worker may take now: waiting, due, and first of their lock (as
    procrastinate's fetch decides: a job waits for every earlier job with its lock)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT count(*) FROM procrastinate_jobs AS job
            WHERE job.queue_name = %s AND job.status = 'todo'
              AND (job.scheduled_at IS NULL OR job.scheduled_at <= now())
              AND NOT EXISTS (
                SELECT 1 FROM procrastinate_jobs AS other
                WHERE other.lock = job.lock
                  AND (other.status = 'doing' OR (other.status = 'todo' AND other.id < job.id))
              )
            """,
            [QUEUE],
        )
        return cursor.fetchone()[0]


def run_jobs(*, concurrency: int = 1, rounds: int = 20) -> None:
    """Run every due delivery job (and every retry that falls due meanwhile), then return.

    A worker that does not wait stops at the first moment it finds no job it may take; with
    several jobs at once, the next job of a resource is not takeable while the one before it
    runs, so the worker is run again while a job is takeable (at most `rounds` times)."""
    worker_app = DjangoApp(
        connector=app.connector.get_worker_connector(),
        worker_defaults={"task_middleware": [_close_connection]},
    )
    worker_app.tasks = {deliver.name: deliver}  # only the delivery task, no periodic job
    for _ in range(rounds):
        worker_app.run_worker(
            queues=[QUEUE],
            concurrency=concurrency,
            wait=False,
            listen_notify=False,
            install_signal_handlers=False,
        )
        if not takeable_jobs():
            return
    raise AssertionError(f"delivery jobs still takeable after {rounds} worker runs")


def subscribe(api, url: str, event_types=("*",), **fields) -> dict:
    """Create an endpoint through the API; returns the created body (with its `secret`)."""
    body = {"url": url, "eventTypes": list(event_types), **fields}
    return created(api.post("/webhook-endpoints", body), api.version)


def pending_delivery(
    url: str, *, institution=None, object_id: str = "cus_1"
) -> tuple[WebhookDelivery, str]:
    """A delivery of a new `customer.created` event (about `object_id`) to a new endpoint at
    `url` of `institution` (a new one by default), and the endpoint's secret."""
    institution = institution or InstitutionFactory()
    endpoint = webhook_endpoint_create(institution=institution, url=url, event_types=["*"])
    with transaction.atomic():
        event = emit(
            institution=institution,
            type="customer.created",
            object_type="customer",
            object_id=object_id,
            data={"customerId": object_id},
        )
    return WebhookDelivery.objects.get(
        event=event, endpoint_id=endpoint.endpoint.pk
    ), endpoint.secret


# --- A receiver on a bare socket, and what it may answer
def read_request(conn: socket.socket) -> bytes:
    """The request's head and body (by its Content-Length)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def _trickle(conn: socket.socket, first: bytes, byte: bytes) -> None:
    """Send `first`, then `byte` every TRICKLE_INTERVAL until the client hangs up."""
    conn.sendall(first)
    ends = time.monotonic() + TRICKLE_SECONDS
    while time.monotonic() < ends:
        conn.sendall(byte)
        time.sleep(TRICKLE_INTERVAL)


def trickle_headers(conn: socket.socket) -> None:
    """The status line, then a header line that never ends, one byte at a time."""
    read_request(conn)
    _trickle(conn, b"HTTP/1.1 200 OK\r\nX-Slow: ", b"x")


def trickle_body(conn: socket.socket) -> None:
    """Status and headers at once, then the body one byte at a time."""
    read_request(conn)
    _trickle(conn, b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n", b"a")


def trickle_tls(conn: socket.socket) -> None:
    """A TLS handshake record announced at 16 KiB and sent one byte at a time."""
    conn.recv(65536)  # the ClientHello
    _trickle(conn, b"\x16\x03\x03\x40\x00", b"\x02")


HUGE = 10 * 1024 * 1024


def huge_body(conn: socket.socket) -> None:
    """A 200 with a 10 MB body, all sent as fast as the client takes it."""
    read_request(conn)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % HUGE)
    conn.sendall(b"b" * HUGE)


def huge_headers(conn: socket.socket) -> None:
    """A 200 whose one header line is 10 MB long."""
    read_request(conn)
    conn.sendall(b"HTTP/1.1 200 OK\r\nX-Huge: " + b"h" * HUGE)


def ok(conn: socket.socket) -> None:
    read_request(conn)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")


class RawReceiver:
    def __init__(self, *answers: Callable[[socket.socket], None]):
        self.answers = answers
        self.connections = 0
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def url(self, scheme: str = "http") -> str:
        return f"{scheme}://127.0.0.1:{self.port}/hooks"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return  # stopped
            answer = self.answers[min(self.connections, len(self.answers) - 1)]
            self.connections += 1
            threading.Thread(target=self._answer, args=(answer, conn), daemon=True).start()

    def _answer(self, answer, conn: socket.socket) -> None:
        with conn:
            try:
                answer(conn)
            except OSError:
                pass  # the client hung up: what the deadline and the byte cap are for

    def stop(self) -> None:
        try:
            self.server.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in accept()
        except OSError:
            pass
        self.server.close()
