"""What the decisioning tests share: a program's endpoint on loopback (a real HTTP server in a
thread) and creating endpoints through the API.

`Program` is `http.server.ThreadingHTTPServer` on 127.0.0.1 (port 0: the system picks one). It
records every request (headers, body) and answers what `answer` says: a status and a body
(`APPROVE`, `GARBAGE`, ...), after `delay` seconds, or (`held=True`) once the test calls
`answer_now()`; `called` is set when the first request arrives and `wait_for(n)` returns when n
have (a test then acts while the program is still thinking); `most_thinking` is the most
requests it was answering at once. While it handles a request it
also looks at PostgreSQL: `open_transactions` records how many sessions of the test database
were inside a transaction at that moment (none may be: TX calls a program with nothing open).
`port`: a given one (`free_port()`: the program that was down comes back there).

It signs its answers as docs/decisioning.md says a program does (`sign_answer`, "Signed
answers"): Standard Webhooks headers over the answer's body with its `secret`, its
`webhook-id` the request's. `create_endpoint` gives the program at the endpoint's URL the
endpoint's secret, as a bank configures its program with the secret it was shown (a test that
rotates gives it the new one itself, `program.secret = ...`, or keeps the old one). `signing`
answers otherwise: `UNSIGNED`, `WRONG_SECRET`, `OTHER_ID` (signed, for another message id),
`STALE` (signed, its timestamp 10 minutes old); `replay`, when set, is an answer it sent
before (`replies`), sent again byte for byte with its headers.

Loopback is a private target: the tests run with WEBHOOK_ALLOW_PRIVATE_TARGETS (the test
settings, as development's), which is what lets webhooks' tests reach their local receiver too
(tests/webhooks/helpers.py); the production rules are switched on by the `production` fixture.
"""

import json
import socket
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import psycopg
from django.db import connection
from standardwebhooks import Webhook

from tests.accounts.api.helpers import created
from tests.conftest import Api

APPROVE = (200, b'{"approved": true}')
FAIL = (500, b'{"error": "down"}')
GARBAGE = (200, b"<html>definitely not json</html>")
NO_DECISION = (200, b'{"ok": true}')

# How the program signs its answers (`Program.signing`).
SIGNED = "signed"  # as the docs say: its secret, the request's webhook-id, now
UNSIGNED = "unsigned"  # no webhook-* header at all
WRONG_SECRET = "wrong secret"  # a secret TX never gave (anyone answering in its place)
OTHER_ID = "other id"  # the right secret, for another message id
STALE = "stale"  # the right secret and id, timestamped 10 minutes ago
# A secret nobody gave the program: what a host answering in the program's place signs with.
A_WRONG_SECRET = "whsec_" + "d3Jvbmcgc2VjcmV0IG9mIDMyIGJ5dGVzISEhISEhISE="


def sign_answer(secret: str, message_id: str, body: bytes, at: datetime | None = None) -> dict:
    """The Standard Webhooks headers of a program's answer `body` to the request `message_id`,
    as docs/decisioning.md's signer makes them (`at`: now unless given)."""
    at = at or datetime.now(tz=UTC)
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": Webhook(secret).sign(message_id, at, body.decode()),
    }


@dataclass
class Reply:
    """An answer the program sent: its status, signature headers and body."""

    status: int
    headers: dict
    body: bytes


@dataclass
class Call:
    headers: dict
    body: bytes
    open_transactions: int | None

    @property
    def payload(self) -> dict:
        return json.loads(self.body)


def _open_transactions() -> int:
    """Sessions of the test database inside a transaction now (this check's own excluded),
    on a connection of its own (the handler runs on the server's thread)."""
    params = connection.get_connection_params()
    conninfo = {k: v for k, v in params.items() if k in ("dbname", "host", "port", "user")}
    with psycopg.connect(**conninfo, password=params.get("password") or None) as check:
        return check.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND backend_type = 'client backend' "
            "AND xact_start IS NOT NULL"
        ).fetchone()[0]


# The programs running, by URL: `create_endpoint` gives the one at the endpoint's URL its secret.
_RUNNING: dict[str, "Program"] = {}


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that gave up (timeout) is expected here


class Program:
    def __init__(
        self,
        answer=APPROVE,
        delay: float = 0.0,
        watch_transactions: bool = False,
        port: int = 0,
        held: bool = False,
        signing: str = SIGNED,
        secret: str | None = None,
    ):
        self.answer = answer
        self.delay = delay
        self.watch_transactions = watch_transactions
        self.signing = signing
        self.secret = secret  # the endpoint's, set by `create_endpoint`
        self.replay: Reply | None = None
        self.replies: list[Reply] = []
        self.calls: list[Call] = []
        self.called = threading.Event()  # set by the first request (the program is thinking)
        self._arrived = threading.Condition()
        self.thinking = 0
        self.most_thinking = 0
        self._released = threading.Event()
        if not held:
            self._released.set()
        self._hurried = threading.Event()  # set by `hurry()`: the delay is cut short
        program = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = {name.lower(): value for name, value in self.headers.items()}
                open_now = _open_transactions() if program.watch_transactions else None
                with program._arrived:
                    program.calls.append(
                        Call(headers=headers, body=body, open_transactions=open_now)
                    )
                    program.thinking += 1
                    program.most_thinking = max(program.most_thinking, program.thinking)
                    program._arrived.notify_all()
                program.called.set()
                try:
                    program._released.wait(10)
                    if program.delay:
                        program._hurried.wait(program.delay)
                finally:
                    with program._arrived:
                        program.thinking -= 1
                reply = program.replay or program.reply_to(headers.get("webhook-id", ""))
                with program._arrived:
                    program.replies.append(reply)
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply.body)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, format, *args):
                pass

        self.server = _Server(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        _RUNNING[self.url] = self
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return url_at(self.port)

    def reply_to(self, message_id: str) -> Reply:
        """`answer`, signed as `signing` says, to the request `message_id`."""
        status, body = self.answer
        if self.signing == UNSIGNED:
            return Reply(status, {}, body)
        assert self.secret is not None, "the program has no secret: create_endpoint gives it"
        secret, at = self.secret, None
        if self.signing == WRONG_SECRET:
            secret = A_WRONG_SECRET
        elif self.signing == OTHER_ID:
            message_id = "auth_0000000000000000000000000"
        elif self.signing == STALE:
            at = datetime.now(tz=UTC) - timedelta(minutes=10)
        else:
            assert self.signing == SIGNED, self.signing
        return Reply(status, sign_answer(secret, message_id, body, at), body)

    def wait_for(self, count: int, timeout: float = 10) -> None:
        """Return once `count` requests have arrived (each is thinking, if held)."""
        with self._arrived:
            assert self._arrived.wait_for(lambda: len(self.calls) >= count, timeout), (
                f"{len(self.calls)} of {count} calls arrived"
            )

    def answer_now(self) -> None:
        """A held program answers every request waiting, and the later ones at once."""
        self._released.set()

    def hold(self) -> None:
        """From now on requests wait for `answer_now()` (at most 10 s)."""
        self._released.clear()

    def hurry(self) -> None:
        """From now on a delayed program answers at once, the requests thinking included: a
        test that has measured what it needed does not wait out their delay to finish."""
        self._hurried.set()

    def stop(self) -> None:
        _RUNNING.pop(self.url, None)
        self._released.set()
        self.server.shutdown()
        self.server.server_close()


def url_at(port: int) -> str:
    return f"http://127.0.0.1:{port}/decide"


def free_port() -> int:
    """A loopback port nothing listens on (the system's pick, closed again): a program that is
    down. A `Program(port=...)` started on it later is the same program come back."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def endpoint_body(**fields) -> dict:
    return {
        "url": "https://decide.example.com/tx",
        "timeoutMs": 1500,
        "onFailure": "standin",
        "mode": "live",
        **fields,
    }


def create_endpoint(api, **fields) -> dict:
    """Create an endpoint through the API; returns the created body (with its `secret`). The
    program running at its URL, if any, is given the secret to sign its answers with."""
    body = created(api.post("/decisioning-endpoints", endpoint_body(**fields)), api.version)
    if body["url"] in _RUNNING:
        _RUNNING[body["url"]].secret = body["secret"]
    return body


class InThread:
    """`work(client)` on a thread of its own, with its own client and database connection;
    `result()` joins it and returns what it returned (re-raising what it raised)."""

    def __init__(self, api, work):
        self._client = Api(api.version, api.key)
        self._work = work
        self._outcome: dict = {}
        self._thread = threading.Thread(target=self._run)
        self._thread.start()

    def _run(self):
        try:
            self._outcome["value"] = self._work(self._client)
        except BaseException as error:  # noqa: BLE001 - re-raised in result()
            self._outcome["error"] = error
        finally:
            connection.close()

    def alive(self) -> bool:
        return self._thread.is_alive()

    def result(self, timeout: float = 30):
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the thread is stuck"
        if "error" in self._outcome:
            raise self._outcome["error"]
        return self._outcome["value"]
