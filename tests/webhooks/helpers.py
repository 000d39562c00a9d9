"""What the webhook tests share: a real HTTP receiver on loopback, a worker run in this process,
and subscribing through the API.

The receiver is `http.server.ThreadingHTTPServer` on 127.0.0.1 (port 0: the system picks one),
serving in a thread. It records every request it answers (headers, body, status given) and
answers what `respond(request)` says (a status code); `delay` makes it slow. `stop()` closes
the socket (connections are refused), `start()` listens again on the same port.

`run_jobs()` runs a procrastinate worker over the delivery queue until no job is due, then
returns, as `manage.py procrastinate worker` would run them (its own database connections: the
tests that use it commit, `django_db(transaction=True)`).
"""

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from django.db import connection
from procrastinate.contrib.django import DjangoApp, app
from standardwebhooks import Webhook

from tests.money_api.helpers import created
from webhooks.tasks import deliver

QUEUE = "webhooks"


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
                    time.sleep(receiver.delay)
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
