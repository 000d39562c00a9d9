"""A gunicorn worker that ends gracefully writes the rate-limit counts it has not written yet
(gunicorn.conf.py `worker_exit`): a restart or a deploy forgives no request
(docs/api-contract.md, "Rate limits")."""

import os
import runpy
import time
import types

import pytest

from api import ratelimit
from api.models import RateCounter
from tests.gunicorn import free_port, http_get, serving
from tests.jobs.workers import database_url


def counted(bucket: str) -> int:
    return sum(RateCounter.objects.filter(bucket=bucket).values_list("count", flat=True))


@pytest.mark.parametrize(("pid_offset", "flushes"), [(0, 1), (1, 0)], ids=["worker", "arbiter"])
def test_only_the_worker_itself_flushes(monkeypatch, pid_offset, flushes):
    """gunicorn calls `worker_exit` in the exiting worker, and in the arbiter for a worker
    already gone: only the first has counts of its own to write."""
    calls = []
    monkeypatch.setattr(ratelimit, "flush", lambda: calls.append(True))
    hook = runpy.run_path("gunicorn.conf.py")["worker_exit"]
    hook(None, types.SimpleNamespace(pid=os.getpid() + pid_offset))
    assert len(calls) == flushes


@pytest.mark.django_db(transaction=True)
def test_a_worker_stopped_gracefully_writes_what_it_counted(tmp_path, key):
    api_key, secret = key
    # The window is a day (tests/settings_batched.py): none ends during the test, unless it
    # starts in the last seconds of one.
    while 86400 - time.time() % 86400 < 30:
        time.sleep(1)
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings_batched",
        "DATABASE_URL": database_url(),
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_WORKERS": "1",
    }
    headers = {"x-api-key": secret}
    with serving(env, tmp_path / "gunicorn.log"):
        for _ in range(5):
            status, body = http_get(port, "/TX/v2/accounts", headers)
            assert status == 200, body
        # The first request of the window wrote its count; the worker holds the other four.
        assert counted(f"key:{api_key.id}") == 1
        assert counted(f"institution:{api_key.institution_id}") == 1
    # SIGTERM: the worker ended its requests and wrote them as it exited.
    assert counted(f"key:{api_key.id}") == 5
    assert counted(f"institution:{api_key.institution_id}") == 5
