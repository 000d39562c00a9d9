"""gunicorn with the project's ./gunicorn.conf.py, started by a test: what the production
server does that Django's test client cannot show (several worker processes, a worker's exit).

The server connects to the test database (`tests.jobs.workers.database_url` in its
environment), so a test that uses it commits its data: `django_db(transaction=True)`.
"""

import contextlib
import http.client
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.jobs.workers import ROOT


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def http_get(port: int, path: str, headers=None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@contextlib.contextmanager
def serving(env: dict, log: Path):
    """gunicorn config.wsgi in the project's root with `env`, which names its port in
    GUNICORN_BIND (127.0.0.1:<port>); yields the port once it answers /health/ready. On leaving,
    SIGTERM, gunicorn's graceful stop (each worker ends its requests, then exits), awaited."""
    port = int(env["GUNICORN_BIND"].rsplit(":", 1)[1])
    with log.open("w") as output:
        server = subprocess.Popen(  # noqa: S603
            [str(Path(sys.executable).parent / "gunicorn"), "config.wsgi"],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                assert server.poll() is None, log.read_text()
                try:
                    # Not a route a test counts: a probe that timed out on a loaded machine
                    # may still be answered, and counted, after the client gave up on it.
                    http_get(port, "/health/ready")
                    break
                except OSError:
                    assert time.monotonic() < deadline, "gunicorn did not answer"
                    time.sleep(0.2)
            yield port
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
