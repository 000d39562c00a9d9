"""`GET /metrics` (api.metrics, core.metrics, docs/operations.md "Metrics"): its guard, the
counters against what the test did (read from the exposition text, as Prometheus reads it), a
rollback that counts nothing, the job queues read at scrape time, and multiprocess mode (values
of several processes summed, a dead one's live gauges dropped)."""

import json
import os
import subprocess
import sys
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import OperationalError, connection, transaction
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families
from psycopg_pool import ConnectionPool, PoolTimeout

from accounts.models import Account
from api.metrics import _route_and_version, pool_publish
from core.actors import SYSTEM
from jobs.services import job_defer
from tests.accounts.api.helpers import created, funded_account
from tests.authorizations.helpers import approved, declined, funded
from tests.conftest import Api
from tests.gunicorn import free_port, http_get, serving
from tests.jobs.workers import ROOT, clear_jobs, database_url
from tests.webhooks.helpers import Receiver, pending_delivery
from transfers.services import transfer_create
from webhooks import tasks as webhook_tasks
from webhooks.models import WebhookDelivery
from webhooks.services import delivery_attempt

TOKEN = "test-metrics-token-0123456789abcdefghijklmnopqrstuvwxyz"
POST_TRANSFERS = {
    "route": "/TX/<version>/transfers",
    "method": "POST",
    "status": "201",
    "version": "v2",
}


@pytest.fixture
def metrics_on(settings):
    settings.METRICS_TOKEN = TOKEN
    settings.METRICS_ALLOWED_IPS = []


def scrape(**headers) -> dict:
    """Every sample of one scrape: {(name, frozenset(labels)): value}."""
    response = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}", **headers)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    assert response["Cache-Control"] == "no-store"
    return parse(response.content.decode())


def parse(text: str) -> dict:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: dict, name: str, **labels) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def moved(before: dict, after: dict) -> dict:
    """The tx_ counters and histogram counts that changed between two scrapes, by how much
    (the HTTP series of the scrapes themselves left out)."""
    changes = {}
    for key, new in after.items():
        name, labels = key
        if not name.endswith(("_total", "_count")) or dict(labels).get("route") == "/metrics":
            continue
        if new != before.get(key, 0.0):
            changes[(name, tuple(sorted(labels)))] = new - before.get(key, 0.0)
    return changes


def series(name: str, **labels) -> tuple:
    return (name, tuple(sorted(labels.items())))


# --- The guard


def get(path="/metrics", remote_addr="127.0.0.1", **headers):
    return Client(REMOTE_ADDR=remote_addr).get(path, **headers)


def code_of(response) -> str:
    return response.json()["code"]


@pytest.mark.django_db
def test_off_without_a_token_or_an_allowlist(settings):
    """Neither setting: not even loopback reads it (a local reverse proxy makes every client
    look local); it answers as an unknown URL does."""
    settings.METRICS_TOKEN, settings.METRICS_ALLOWED_IPS = "", []
    response = get(HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert (response.status_code, code_of(response)) == (404, "not_found")
    assert b"tx_" not in response.content


@pytest.mark.django_db
def test_the_token_is_required_and_compared_whole(settings, key):
    settings.METRICS_TOKEN, settings.METRICS_ALLOWED_IPS = TOKEN, []
    refused = [
        {},
        {"HTTP_AUTHORIZATION": TOKEN},  # no scheme
        {"HTTP_AUTHORIZATION": f"Basic {TOKEN}"},
        {"HTTP_AUTHORIZATION": f"Bearer {TOKEN[:-1]}"},
        {"HTTP_AUTHORIZATION": f"Bearer {TOKEN}x"},
        {"HTTP_X_API_KEY": key[1]},  # an API key is not the metrics token
    ]
    for headers in refused:
        response = get(**headers)
        assert (response.status_code, code_of(response)) == (401, "authentication_failed")
        assert response["WWW-Authenticate"] == 'Bearer realm="metrics"'
        assert b"tx_" not in response.content
    assert get(HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 200
    assert get(HTTP_AUTHORIZATION=f"bearer  {TOKEN}").status_code == 200


@pytest.mark.django_db
def test_the_allowlist_reads_the_client_address_as_the_api_does(settings):
    settings.METRICS_TOKEN, settings.METRICS_ALLOWED_IPS = "", ["10.1.0.0/16", "::1"]
    settings.TRUSTED_PROXIES = ["192.0.2.10/32"]
    assert get(remote_addr="10.1.2.3").status_code == 200
    assert get(remote_addr="::1").status_code == 200
    for remote_addr, forwarded in [
        ("10.2.0.1", None),
        ("127.0.0.1", None),  # loopback is not allowed unless listed
        ("203.0.113.5", "10.1.2.3"),  # a header from an untrusted peer is ignored
        ("192.0.2.10", "203.0.113.5"),  # the trusted proxy says who the client is
    ]:
        headers = {} if forwarded is None else {"HTTP_X_FORWARDED_FOR": forwarded}
        response = get(remote_addr=remote_addr, **headers)
        assert (response.status_code, code_of(response)) == (403, "ip_not_allowed"), remote_addr
    assert get(remote_addr="192.0.2.10", HTTP_X_FORWARDED_FOR="10.1.9.9").status_code == 200


@pytest.mark.django_db
def test_with_both_both_must_pass(settings):
    settings.METRICS_TOKEN, settings.METRICS_ALLOWED_IPS = TOKEN, ["10.1.0.0/16"]
    bearer = {"HTTP_AUTHORIZATION": f"Bearer {TOKEN}"}
    assert get(remote_addr="10.1.2.3", **bearer).status_code == 200
    assert get(remote_addr="10.9.2.3", **bearer).status_code == 403
    assert get(remote_addr="10.1.2.3").status_code == 401


@pytest.mark.django_db
def test_get_only(metrics_on):
    response = Client().post("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 405


# --- Counters against what was done (committed for real: counted on commit)


@pytest.mark.django_db(transaction=True)
def test_counters_move_by_exactly_what_was_done(metrics_on, key):
    api = Api("v2", key[1])
    source, destination = funded_account(api, 10_000), funded_account(api, 0)
    card = funded(api, load=1_000)
    before = scrape()

    body = {
        "source": {"accountId": source["accountId"]},
        "destination": {"accountId": destination["accountId"]},
        "amount": 700,
        "currency": "EUR",
    }
    idempotency_key = uuid.uuid4()
    created(api.post("/transfers", body, idempotency_key=idempotency_key), "v2")
    replay = api.post("/transfers", body, idempotency_key=idempotency_key)
    assert replay["Idempotent-Replayed"] == "true"
    declined(api, card.card_id, 5_000, "insufficient_funds")
    approved(api, card.card_id, 100)
    after = scrape()

    assert moved(before, after) == {
        series("tx_transfers_posted_total", kind="single"): 1,
        series("tx_idempotent_replays_total"): 1,
        series("tx_authorizations_total", decision="declined", code="insufficient_funds"): 1,
        series("tx_authorizations_total", decision="approved", code=""): 1,
        series("tx_http_requests_total", **POST_TRANSFERS): 2,
        series(
            "tx_http_request_duration_seconds_count",
            route="/TX/<version>/transfers",
            method="POST",
            version="v2",
        ): 2,
        series(
            "tx_http_requests_total",
            route="/TX/<version>/card-authorizations",
            method="POST",
            status="201",
            version="v2",
        ): 2,
        series(
            "tx_http_request_duration_seconds_count",
            route="/TX/<version>/card-authorizations",
            method="POST",
            version="v2",
        ): 2,
    }
    # The latency of the transfers is in the histogram's sum.
    duration = ("tx_http_request_duration_seconds_sum", "/TX/<version>/transfers")
    labels = {"route": duration[1], "method": "POST", "version": "v2"}
    assert value(after, duration[0], **labels) > value(before, duration[0], **labels)


@pytest.mark.django_db(transaction=True)
def test_batches_count_their_posted_items_and_a_refused_batch_nothing(metrics_on, key):
    api = Api("v2", key[1])
    a, b = (funded_account(api, amount)["accountId"] for amount in (1_000, 0))

    def item(amount):
        return {
            "source": {"accountId": a},
            "destination": {"accountId": b},
            "amount": amount,
            "currency": "EUR",
        }

    before = scrape()
    # Atomic: the first item was posted inside the batch's transaction, then undone with it.
    refused = api.post(
        "/transfer-batches", {"mode": "atomic", "transfers": [item(100), item(5_000)]}
    )
    assert refused.status_code == 422
    middle = scrape()
    assert value(middle, "tx_transfers_posted_total", kind="batch") == value(
        before, "tx_transfers_posted_total", kind="batch"
    )
    independent = api.post(
        "/transfer-batches",
        {"mode": "independent", "transfers": [item(100), item(5_000), item(200)]},
    )
    assert created(independent, "v2")["posted"] == 2
    after = scrape()
    assert moved(middle, after)[series("tx_transfers_posted_total", kind="batch")] == 2
    assert value(after, "tx_transfers_posted_total", kind="single") == value(
        before, "tx_transfers_posted_total", kind="single"
    )


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_transfer_is_not_counted(metrics_on, key):
    """The service posted the transfer, and the transaction around it rolled back after: not
    counted. The same call committed: counted once."""
    api = Api("v2", key[1])
    source_id, destination_id = (funded_account(api, 1_000)["accountId"] for _ in range(2))
    source, destination = Account.objects.get(pk=source_id), Account.objects.get(pk=destination_id)

    def post_one():
        return transfer_create(
            institution=source.institution,
            source=source,
            destination=destination,
            amount=10,
            currency="EUR",
            actor=SYSTEM,
        )

    before = scrape()
    with pytest.raises(RuntimeError), transaction.atomic():
        post_one()
        raise RuntimeError("rolled back after the transfer was posted")
    assert moved(before, scrape()) == {}
    with transaction.atomic():
        post_one()
    assert moved(before, scrape()) == {series("tx_transfers_posted_total", kind="single"): 1}


@pytest.mark.django_db(transaction=True)
def test_webhook_attempts_and_deliveries_by_outcome(metrics_on):
    receiver = Receiver()
    try:
        before = scrape()
        receiver.respond = lambda request: 500
        retried, _ = pending_delivery(receiver.url)
        assert delivery_attempt(delivery_id=retried.pk) is not None  # failed, retried later
        receiver.respond = lambda request: 200
        assert delivery_attempt(delivery_id=retried.pk) is None  # succeeded
        receiver.respond = lambda request: 503
        given_up, _ = pending_delivery(receiver.url, object_id="cus_2")
        WebhookDelivery.objects.filter(pk=given_up.pk).update(retry_until=timezone.now())
        assert delivery_attempt(delivery_id=given_up.pk) is None  # failed for good
        after = scrape()
    finally:
        receiver.stop()
        clear_jobs()  # the deliveries' jobs committed; Django's flush leaves them
    assert moved(before, after) == {
        series("tx_webhook_attempts_total", outcome="failed"): 2,
        series("tx_webhook_attempts_total", outcome="succeeded"): 1,
        series("tx_webhook_deliveries_total", outcome="succeeded"): 1,
        series("tx_webhook_deliveries_total", outcome="failed"): 1,
    }


# --- Read at scrape time


@pytest.mark.django_db
def test_queue_depth_and_connections_are_read_at_scrape(metrics_on):
    before = scrape()
    job_defer(webhook_tasks.deliver, delivery_id="whd_metrics_due")
    job_defer(webhook_tasks.deliver, delivery_id="whd_metrics_due_2")
    later = webhook_tasks.deliver.configure(schedule_at=timezone.now() + timedelta(hours=1))
    job_defer(later, delivery_id="whd_metrics_later")
    after = scrape()

    def depth(samples, status):
        return value(samples, "tx_job_queue_jobs", queue="webhooks", status=status)

    assert depth(after, "todo") - depth(before, "todo") == 2
    assert depth(after, "scheduled") - depth(before, "scheduled") == 1
    assert depth(after, "doing") == depth(before, "doing")
    # Every queue of the code is shown, empty or not.
    for queue in ("periodic", "webhooks"):
        assert (
            "tx_job_queue_jobs",
            frozenset({"queue": queue, "status": "doing"}.items()),
        ) in after
    assert value(after, "tx_database_up") == 1
    assert value(after, "tx_db_connections", state="active") >= 1  # this scrape's own
    assert value(after, "tx_db_max_connections") >= 1


@pytest.mark.django_db
def test_a_database_that_does_not_answer_leaves_the_scrape_up(metrics_on):
    def refuse(execute, sql, params, many, context):
        raise OperationalError("connection refused")

    with connection.execute_wrapper(refuse):
        samples = scrape()
    assert value(samples, "tx_database_up") == 0
    assert not any(name.startswith(("tx_job_queue", "tx_db_conn")) for name, _ in samples)
    assert ("tx_transfers_posted_total", frozenset({"kind": "single"}.items())) in samples


def test_routes_are_patterns_never_paths():
    assert _route_and_version("TX/v1/accounts/<id:account_id>/transactions") == (
        "/TX/<version>/accounts/<id:account_id>/transactions",
        "v1",
    )
    assert _route_and_version("TX/v2/transfers") == ("/TX/<version>/transfers", "v2")
    assert _route_and_version("admin/cards/card/<path:object_id>/change/") == ("/admin/", "")
    assert _route_and_version("health/ready") == ("/health/ready", "")
    assert _route_and_version(None) == ("unmatched", "")


@pytest.mark.django_db
def test_unknown_paths_and_methods_share_one_series(metrics_on, key):
    before = scrape()
    Client().get(f"/no/such/{uuid.uuid4()}")
    Client().generic("BREW", "/health/live")
    after = scrape()
    changes = moved(before, after)
    unmatched = {"route": "unmatched", "method": "GET", "status": "404", "version": ""}
    assert changes[series("tx_http_requests_total", **unmatched)] == 1
    brew = {"route": "/health/live", "method": "other", "status": "405", "version": ""}
    assert changes[series("tx_http_requests_total", **brew)] == 1
    assert not any("no/such" in str(labels) for _, labels in changes)


@pytest.mark.django_db
def test_a_pool_publishes_its_use_and_its_exhaustion(metrics_on):
    """A real psycopg pool of one connection on the test database: one connection taken, a
    second request times out. What DATABASE_POOL's pools publish when a request ends."""
    alias = f"pool_{uuid.uuid4().hex[:8]}"  # a series of this test's own
    with ConnectionPool(database_url(), min_size=1, max_size=1, open=True) as pool:
        pool.wait()
        before = scrape()
        held = pool.getconn()
        with pytest.raises(PoolTimeout):
            pool.getconn(timeout=0.2)
        pool_publish(alias, pool)
        busy = scrape()
        pool.putconn(held)
        pool_publish(alias, pool)
        idle = scrape()

    def of(samples, name):
        return value(samples, name, database=alias)

    assert [of(busy, name) for name in ("tx_db_pool_size", "tx_db_pool_available")] == [1, 0]
    assert of(busy, "tx_db_pool_max") == 1
    assert of(busy, "tx_db_pool_timeouts_total") - of(before, "tx_db_pool_timeouts_total") == 1
    assert of(busy, "tx_db_pool_waits_total") == 1
    assert 0.15 < of(busy, "tx_db_pool_wait_seconds_total") < 5
    assert of(idle, "tx_db_pool_available") == 1
    # Published again, nothing new: the counters do not count the same waits twice.
    assert of(idle, "tx_db_pool_timeouts_total") == of(busy, "tx_db_pool_timeouts_total")
    assert of(idle, "tx_db_pool_waits_total") == 1


# --- Multiprocess mode: what gunicorn's workers write, one scrape sums


def run_python(code: str, env: dict) -> str:
    return run_ok([sys.executable, "-c", code], env)


def run_ok(command: list[str], env: dict) -> str:
    """`command` in the project's root with `env`; its output, once it has exited with 0."""
    done = subprocess.run(  # noqa: S603
        command,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


WORKER = """
import os
from core import metrics
metrics.TRANSFER_SINGLE.inc({transfers})
metrics.HTTP_REQUEST_DURATION.labels(route="/x", method="GET", version="").observe({seconds})
metrics.DB_POOL_SIZE.labels("default").set({pool})
print(os.getpid())
"""

SCRAPER = """
import os, runpy, types, django
django.setup()
from django.test import Client
if {dead}:  # what gunicorn calls when a worker has exited
    runpy.run_path("gunicorn.conf.py")["child_exit"](None, types.SimpleNamespace(pid={dead}))
bearer = "Bearer " + os.environ["METRICS_TOKEN"]
response = Client().get("/metrics", HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=bearer)
assert response.status_code == 200, response.content
print(response.content.decode())
"""


@pytest.mark.django_db
def test_multiprocess_mode_sums_every_process(tmp_path):
    env = {
        **os.environ,
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path),
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": database_url(),
        "METRICS_TOKEN": TOKEN,
    }
    first = int(run_python(WORKER.format(transfers=3, seconds=0.02, pool=5), env))
    second = int(run_python(WORKER.format(transfers=4, seconds=3.0, pool=7), env))
    assert first != second and len(list(tmp_path.glob("*.db"))) >= 2

    samples = parse(run_python(SCRAPER.format(dead=0), env))
    assert value(samples, "tx_transfers_posted_total", kind="single") == 7
    histogram = {"route": "/x", "method": "GET", "version": ""}
    assert value(samples, "tx_http_request_duration_seconds_count", **histogram) == 2
    assert value(samples, "tx_http_request_duration_seconds_bucket", le="0.025", **histogram) == 1
    assert value(samples, "tx_http_request_duration_seconds_bucket", le="5.0", **histogram) == 2
    assert value(samples, "tx_db_pool_size", database="default") == 12  # live gauges: summed
    assert value(samples, "tx_database_up") == 1

    # gunicorn's child_exit: a dead worker's live gauges go, its counters stay.
    samples = parse(run_python(SCRAPER.format(dead=first), env))
    assert value(samples, "tx_db_pool_size", database="default") == 7
    assert value(samples, "tx_transfers_posted_total", kind="single") == 7


def test_gunicorn_configuration_loads():
    """gunicorn reads ./gunicorn.conf.py (bench/transfers.py starts it from the root too)."""
    env = {**os.environ, "GUNICORN_WORKERS": "3", "GUNICORN_BIND": "127.0.0.1:0"}
    run_ok([str(Path(sys.executable).parent / "gunicorn"), "config.wsgi", "--check-config"], env)
    config = run_python(
        "import json, runpy; c = runpy.run_path('gunicorn.conf.py'); "
        "print(json.dumps({k: c[k] for k in ('bind', 'workers', 'threads', 'timeout')}))",
        env,
    )
    assert json.loads(config) == {
        "bind": "127.0.0.1:0",
        "workers": 3,
        "threads": 2,
        "timeout": 30,
    }


def test_gunicorn_worker_freezes_what_it_loaded():
    """post_worker_init (a worker has loaded the application) loads the URLconf and puts every
    object alive then out of the cyclic collector's way: a full collection in a request walks
    only what requests made since."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    found = run_python(
        "import gc, json, runpy, sys, django; django.setup(); "
        "loaded = len(gc.get_objects()); urls = 'config.urls' in sys.modules; "
        "runpy.run_path('gunicorn.conf.py')['post_worker_init'](None); "
        "print(json.dumps({'loaded': loaded, 'urls_before': urls, "
        "'urls': 'config.urls' in sys.modules, 'frozen': gc.get_freeze_count(), "
        "'walked': len(gc.get_objects())}))",
        env,
    )
    state = json.loads(found)
    assert not state["urls_before"] and state["urls"]
    assert state["frozen"] > state["loaded"]  # the URLconf's objects too
    assert state["walked"] == 0


@pytest.mark.django_db
@pytest.mark.parametrize("directory_given", [True, False], ids=["directory-given", "no-directory"])
def test_under_gunicorn_every_scrape_sums_every_worker(tmp_path, directory_given):
    """gunicorn with ./gunicorn.conf.py and three workers: requests answered by whichever
    worker, each scrape (by whichever worker) counts all of them; also when the environment
    names no metrics directory and gunicorn.conf.py makes one."""
    port = free_port()
    env = {key: value for key, value in os.environ.items() if key != "PROMETHEUS_MULTIPROC_DIR"}
    if directory_given:
        env["PROMETHEUS_MULTIPROC_DIR"] = str(tmp_path / "metrics")  # made by on_starting
    env = {
        **env,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": database_url(),
        "METRICS_TOKEN": TOKEN,
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_WORKERS": "3",
    }
    with serving(env, tmp_path / "gunicorn.log"):
        for _ in range(30):  # one new connection each: spread over the workers
            assert http_get(port, "/health/live")[0] == 200
        bearer = {"Authorization": f"Bearer {TOKEN}", "Connection": "close"}
        live = {"route": "/health/live", "method": "GET", "status": "200", "version": ""}
        for scrape_number in range(6):
            status, body = http_get(port, "/metrics", bearer)
            assert status == 200, body
            samples = parse(body.decode())
            assert value(samples, "tx_http_requests_total", **live) == 30
            scrapes = {**live, "route": "/metrics"}
            # The scrapes before this one (a request is counted when it has been answered).
            assert value(samples, "tx_http_requests_total", **scrapes) == scrape_number
        if directory_given:
            assert len(list((tmp_path / "metrics").glob("counter_*.db"))) == 3  # one per worker
