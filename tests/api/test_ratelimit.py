"""Rate limits (api/ratelimit.py): per key, per institution, refused authentications per client
address, the schema documents per address; one counting statement per request; exact under
concurrency (real threads, committed counters).

The per-key basics (N then 429, Retry-After, the next window, 0 disables) are also in
tests/api/test_errors.py with the rest of the error table.
"""

import threading
import types
from unittest.mock import ANY

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from drf_spectacular.generators import SchemaGenerator

from api import ratelimit
from api.models import RateCounter
from api.urls import SchemaView
from customers.models import Customer
from tests.conftest import Api, error_of
from tests.factories import InstitutionFactory, issue_key

WINDOW_START = 1_700_000_040  # a multiple of 60
CUSTOMER = {"firstName": "Ada", "lastName": "Lovelace", "countryId": "826"}
WRONG_KEY = "tx_aaaaaaaaaa_not-the-secret-of-any-key-at-all-aaaaaaaaaaaaaaaaa"


@pytest.fixture
def clock(monkeypatch):
    """The limiter's clock, 15.25 s into a window: Retry-After is 45 until the window ends."""
    now = types.SimpleNamespace(value=WINDOW_START + 15.25)
    monkeypatch.setattr(ratelimit, "time", types.SimpleNamespace(time=lambda: now.value))
    return now


@pytest.fixture
def limits(db, settings, clock):
    settings.RATE_LIMIT_WINDOW_SECONDS = 60
    settings.RATE_LIMIT_REQUESTS = 1000
    settings.RATE_LIMIT_INSTITUTION_REQUESTS = 1000
    settings.RATE_LIMIT_FAILED_AUTH_REQUESTS = 1000
    settings.RATE_LIMIT_SCHEMA_REQUESTS = 1000
    return settings


def assert_rate_limited(response, message, retry_after="45"):
    assert response.status_code == 429, response.content
    assert response["Content-Type"] == "application/json"
    assert response["Retry-After"] == retry_after
    version = "v1" if "/TX/v1/" in response.wsgi_request.path else "v2"
    assert error_of(response, version) == {"code": "rate_limited", "message": message}
    if version == "v1":
        assert response.json()["meta"] == {"tranId": response["X-Request-Id"], "timestamp": ANY}


def counter_statements(queries) -> list[str]:
    return [
        query["sql"] for query in queries.captured_queries if "api_rate_counter" in query["sql"]
    ]


# --- Per key and per institution ---------------------------------------------------------------


def test_a_key_gets_exactly_its_limit_then_429(api, limits):
    limits.RATE_LIMIT_REQUESTS = 5
    for _ in range(5):
        assert api.get("/customers").status_code == 200
    assert_rate_limited(api.get("/customers"), ratelimit.KEY_LIMITED)
    # A write is refused before it runs, and nothing is stored.
    assert_rate_limited(api.post("/customers", CUSTOMER), ratelimit.KEY_LIMITED)
    assert Customer.objects.count() == 0


def test_retry_after_is_the_rest_of_the_window_rounded_up(api, limits, clock):
    limits.RATE_LIMIT_REQUESTS = 1
    api.get("/customers")
    clock.value = WINDOW_START + 59.01
    assert_rate_limited(api.get("/customers"), ratelimit.KEY_LIMITED, retry_after="1")
    clock.value = WINDOW_START + 0.5  # a late request of the same window: never 61
    assert_rate_limited(api.get("/customers"), ratelimit.KEY_LIMITED, retry_after="60")


def test_two_keys_of_one_institution_share_its_limit(version, institution, limits):
    limits.RATE_LIMIT_INSTITUTION_REQUESTS = 5
    first = Api(version, issue_key(institution)[1])
    second = Api(version, issue_key(institution)[1])
    for client in (first, second, first, second, first):
        assert client.get("/customers").status_code == 200
    assert_rate_limited(second.get("/customers"), ratelimit.INSTITUTION_LIMITED)
    assert_rate_limited(first.get("/customers"), ratelimit.INSTITUTION_LIMITED)
    # Another institution counts on its own.
    other = Api(version, issue_key(InstitutionFactory())[1])
    assert other.get("/customers").status_code == 200


def test_institution_limit_zero_disables_it(api, limits):
    limits.RATE_LIMIT_INSTITUTION_REQUESTS = 0
    limits.RATE_LIMIT_REQUESTS = 3
    for _ in range(3):
        assert api.get("/customers").status_code == 200
    assert_rate_limited(api.get("/customers"), ratelimit.KEY_LIMITED)
    assert not RateCounter.objects.filter(bucket__startswith="institution:").exists()


def test_the_next_window_starts_from_zero(api, limits, clock):
    limits.RATE_LIMIT_REQUESTS = 2
    limits.RATE_LIMIT_FAILED_AUTH_REQUESTS = 2
    stranger = Api(api.version, WRONG_KEY, remote_addr="198.51.100.9")
    for _ in range(2):
        assert api.get("/customers").status_code == 200
        assert stranger.get("/customers").status_code == 401
    assert api.get("/customers").status_code == 429
    assert stranger.get("/customers").status_code == 429
    clock.value = WINDOW_START + 60
    assert api.get("/customers").status_code == 200
    assert stranger.get("/customers").status_code == 401


def eight_clients(secret: str) -> list[int]:
    """The statuses of 8 threads x 25 GETs with key `secret`, each thread on its own
    connection, released together."""
    statuses = []
    start = threading.Barrier(8)

    def client():
        api = Api("v2", secret)
        try:
            start.wait()
            for _ in range(25):
                statuses.append(api.get("/products/accounts").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=client) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_never_lose_a_count(limits):
    """8 threads x 25 requests, each on its own connection, committing: exactly 100 pass."""
    limits.RATE_LIMIT_REQUESTS = 100
    secret = issue_key(InstitutionFactory())[1]
    statuses = eight_clients(secret)

    assert sorted(statuses) == [200] * 100 + [429] * 100
    counts = dict(RateCounter.objects.values_list("bucket", "count"))
    assert sorted(counts.values()) == [200, 200]  # the key's and the institution's


@pytest.mark.django_db(transaction=True)
def test_concurrent_refusals_from_one_address_are_counted_exactly(limits):
    limits.RATE_LIMIT_FAILED_AUTH_REQUESTS = 30
    statuses = []
    start = threading.Barrier(6)

    def client():
        stranger = Api("v2", WRONG_KEY, remote_addr="203.0.113.50")
        try:
            start.wait()
            for _ in range(10):
                statuses.append(stranger.get("/customers").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=client) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(statuses) == [401] * 30 + [429] * 30


# --- Refused authentications per client address -------------------------------------------------


def test_401s_from_an_address_are_limited_then_even_a_valid_key_gets_429(
    version, institution, limits
):
    limits.RATE_LIMIT_FAILED_AUTH_REQUESTS = 3
    secret = issue_key(institution, allow=["0.0.0.0/0"])[1]
    attacker = "198.51.100.7"
    tampered = secret[:-1] + ("B" if secret.endswith("A") else "A")
    for key in (WRONG_KEY, None, tampered):
        response = Api(version, key, remote_addr=attacker).get("/customers")
        assert response.status_code == 401
    assert_rate_limited(
        Api(version, WRONG_KEY, remote_addr=attacker).get("/customers"), ratelimit.ADDRESS_LIMITED
    )
    # The right key from that address: the same 429, whatever the key (nothing to learn).
    assert_rate_limited(
        Api(version, secret, remote_addr=attacker).get("/customers"), ratelimit.ADDRESS_LIMITED
    )
    # Another address, same key: unaffected; and it still has its own refusals to spend.
    assert Api(version, secret, remote_addr="198.51.100.8").get("/customers").status_code == 200
    assert Api(version, WRONG_KEY, remote_addr="198.51.100.8").get("/customers").status_code == 401


def test_ip_not_allowed_stays_403_and_is_counted_per_address(version, institution, limits):
    limits.RATE_LIMIT_FAILED_AUTH_REQUESTS = 2
    secret = issue_key(institution, allow=["10.0.0.0/8"])[1]
    outside = Api(version, secret, remote_addr="192.0.2.1")
    for _ in range(2):
        response = outside.get("/customers")
        assert response.status_code == 403
        assert error_of(response, version) == {
            "code": "ip_not_allowed",
            "message": "Requests from this address are not allowed for this API key.",
        }
    assert_rate_limited(outside.get("/customers"), ratelimit.ADDRESS_LIMITED)
    # 401s and 403s share the address's count.
    assert_rate_limited(
        Api(version, WRONG_KEY, remote_addr="192.0.2.1").get("/customers"),
        ratelimit.ADDRESS_LIMITED,
    )
    assert Api(version, secret, remote_addr="10.1.2.3").get("/customers").status_code == 200


def test_permission_denied_is_not_a_refused_authentication(institution, limits):
    limits.RATE_LIMIT_FAILED_AUTH_REQUESTS = 1
    readonly = Api("v2", issue_key(institution, scopes=["read"])[1])
    for _ in range(3):
        assert readonly.post("/customers", CUSTOMER).status_code == 403
    assert readonly.get("/customers").status_code == 200


def test_a_trusted_proxys_forwarded_address_is_the_one_counted(version, institution, limits):
    limits.RATE_LIMIT_FAILED_AUTH_REQUESTS = 2
    limits.TRUSTED_PROXIES = ["10.0.0.1/32"]
    secret = issue_key(institution, allow=["0.0.0.0/0"])[1]

    def via_proxy(key, client_address):
        api = Api(version, key, remote_addr="10.0.0.1")
        return api.get("/customers", headers={"X-Forwarded-For": f"1.1.1.1, {client_address}"})

    for _ in range(2):
        assert via_proxy(WRONG_KEY, "203.0.113.5").status_code == 401
    assert_rate_limited(via_proxy(secret, "203.0.113.5"), ratelimit.ADDRESS_LIMITED)
    # Another client behind the same proxy is not the one refused.
    assert via_proxy(secret, "203.0.113.6").status_code == 200
    assert RateCounter.objects.get(bucket="refused:203.0.113.5").count == 2
    assert not RateCounter.objects.filter(bucket="refused:10.0.0.1").exists()
    # From an untrusted peer the header is ignored: the peer is counted.
    forged = Api(version, WRONG_KEY, remote_addr="192.0.2.77")
    forged.get("/customers", headers={"X-Forwarded-For": "203.0.113.99"})
    assert RateCounter.objects.get(bucket="refused:192.0.2.77").count == 1


def test_ipv6_addresses_count_per_64(version, limits):
    limits.RATE_LIMIT_FAILED_AUTH_REQUESTS = 2
    for host in ("2001:db8:1:2::1", "2001:db8:1:2:ffff::9"):
        assert Api(version, WRONG_KEY, remote_addr=host).get("/customers").status_code == 401
    assert_rate_limited(
        Api(version, WRONG_KEY, remote_addr="2001:db8:1:2::abcd").get("/customers"),
        ratelimit.ADDRESS_LIMITED,
    )
    assert Api(version, WRONG_KEY, remote_addr="2001:db8:1:3::1").get("/customers").status_code == (
        401
    )


# --- Statements --------------------------------------------------------------------------------


def test_an_accepted_request_costs_one_counting_statement(api_v2, limits):
    with CaptureQueriesContext(connection) as queries:
        assert api_v2.get("/customers").status_code == 200
    [statement] = counter_statements(queries)
    assert statement.lstrip().startswith("WITH hits AS")
    # The key's and the institution's counters, and the address's refusals (none yet).
    assert sorted(RateCounter.objects.values_list("count", flat=True)) == [1, 1]


def test_a_refused_request_costs_one_counting_statement(limits):
    api = Api("v2", None, remote_addr="192.0.2.200")
    with CaptureQueriesContext(connection) as queries:
        assert api.get("/customers").status_code == 401
    assert len(counter_statements(queries)) == 1
    assert len(queries.captured_queries) == 1  # no key presented: nothing else is read
    assert RateCounter.objects.get(bucket="refused:192.0.2.200").count == 1


def test_with_every_limit_off_nothing_is_counted(api_v2, settings):
    settings.RATE_LIMIT_REQUESTS = 0
    settings.RATE_LIMIT_INSTITUTION_REQUESTS = 0
    settings.RATE_LIMIT_FAILED_AUTH_REQUESTS = 0
    with CaptureQueriesContext(connection) as queries:
        assert api_v2.get("/customers").status_code == 200
        assert Api("v2", WRONG_KEY).get("/customers").status_code == 401
    assert counter_statements(queries) == []


def test_the_counter_table_is_unlogged(db):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relpersistence, reloptions FROM pg_class WHERE relname = 'api_rate_counter'"
        )
        assert cursor.fetchone() == ("u", ["fillfactor=70"])


def test_purge_deletes_ended_windows_only(api_v2, limits, clock):
    api_v2.get("/customers")
    clock.value = WINDOW_START + 60
    api_v2.get("/customers")
    assert RateCounter.objects.count() == 4
    assert ratelimit.rate_counters_purge(now=WINDOW_START + 90) == 2
    assert set(RateCounter.objects.values_list("window_start", flat=True)) == {WINDOW_START + 60}
    assert ratelimit.rate_counters_purge(now=WINDOW_START + 120) == 2


# --- Batches: each process counts locally, writes every RATE_LIMIT_FLUSH_EVERY ---------------


@pytest.fixture
def batches(limits, monkeypatch):
    """Batches of 4, a fresh process's counters (restored after the test)."""
    limits.RATE_LIMIT_FLUSH_EVERY = 4
    limits.RATE_LIMIT_FLUSH_SECONDS = 1.0
    monkeypatch.setattr(ratelimit, "local_counters", ratelimit.LocalCounters())
    return limits


def statements_per_request(api, count: int, path: str = "/customers") -> list[int]:
    statements = []
    for _ in range(count):
        with CaptureQueriesContext(connection) as queries:
            assert api.get(path).status_code == 200
        statements.append(len(counter_statements(queries)))
    return statements


def shared_counts() -> dict[str, int]:
    """The shared counters of the clock's window, by kind of bucket."""
    rows = RateCounter.objects.filter(window_start=WINDOW_START).values_list("bucket", "count")
    return {bucket.split(":")[0]: count for bucket, count in rows}


def test_a_batch_writes_once_per_flush_every_requests(api_v2, batches):
    # The first request of the window learns the shared counts; then one statement per 4.
    assert statements_per_request(api_v2, 9) == [1, 0, 0, 0, 1, 0, 0, 0, 1]
    assert shared_counts() == {"key": 9, "institution": 9}
    assert statements_per_request(api_v2, 3) == [0, 0, 0]
    assert shared_counts() == {"key": 9, "institution": 9}  # 3 pending in this process
    with CaptureQueriesContext(connection) as queries:
        ratelimit.flush()
    assert len(counter_statements(queries)) == 1
    assert shared_counts() == {"key": 12, "institution": 12}


def test_a_single_process_refuses_exactly_at_the_limit(api_v2, batches):
    """Alone, a process's shared count + pending is the exact count: no request late."""
    batches.RATE_LIMIT_REQUESTS = 6
    for _ in range(6):
        assert api_v2.get("/customers").status_code == 200
    assert_rate_limited(api_v2.get("/customers"), ratelimit.KEY_LIMITED)


def test_with_two_processes_the_429_comes_at_most_flush_every_minus_1_late(
    api_v2, batches, monkeypatch
):
    batches.RATE_LIMIT_REQUESTS = 10
    first, second = ratelimit.LocalCounters(), ratelimit.LocalCounters()

    def statuses(process, count):
        monkeypatch.setattr(ratelimit, "local_counters", process)
        return [api_v2.get("/customers").status_code for _ in range(count)]

    assert statuses(first, 1) == [200]  # sees 1
    # The second flushes at its 1st, 5th and 9th requests (2, 6, 10): exact, the 10th is late
    # by nothing.
    assert statuses(second, 12) == [200] * 9 + [429] * 3
    # The first still knows 1: 3 requests (FLUSH_EVERY - 1) beyond the limit, then its batch
    # is due, it learns 14 and refuses.
    assert statuses(first, 5) == [200] * 3 + [429] * 2
    # 18 requests, 13 granted: limit + 3, within 2 processes x (4 - 1).
    first.flush(ratelimit.backend())
    second.flush(ratelimit.backend())
    assert shared_counts() == {"key": 18, "institution": 18}


def test_a_new_window_flushes_and_an_ended_windows_pending_is_dropped(api_v2, batches, clock):
    assert statements_per_request(api_v2, 2) == [1, 0]
    clock.value = WINDOW_START + 60
    assert statements_per_request(api_v2, 2) == [1, 0]
    counts = RateCounter.objects.values_list("window_start", "bucket", "count")
    # The ended window's 1 pending request was never written: it can refuse nothing any more.
    assert sorted((start, bucket.split(":")[0], count) for start, bucket, count in counts) == [
        (WINDOW_START, "institution", 1),
        (WINDOW_START, "key", 1),
        (WINDOW_START + 60, "institution", 1),
        (WINDOW_START + 60, "key", 1),
    ]


def test_a_batch_is_written_after_flush_seconds_whatever_its_size(api_v2, batches, clock):
    batches.RATE_LIMIT_FLUSH_EVERY = 100
    assert statements_per_request(api_v2, 1) == [1]
    clock.value += 0.99
    assert statements_per_request(api_v2, 2) == [0, 0]
    clock.value += 0.01  # 1.0 s after the last flush
    assert statements_per_request(api_v2, 2) == [1, 0]
    assert shared_counts() == {"key": 4, "institution": 4}


def test_an_address_blocked_elsewhere_is_seen_within_flush_seconds(
    version, institution, batches, clock, monkeypatch
):
    batches.RATE_LIMIT_FAILED_AUTH_REQUESTS = 2
    secret = issue_key(institution, allow=["0.0.0.0/0"])[1]
    address = "198.51.100.70"
    first, second = ratelimit.LocalCounters(), ratelimit.LocalCounters()

    def status(process, key):
        monkeypatch.setattr(ratelimit, "local_counters", process)
        return Api(version, key, remote_addr=address).get("/customers").status_code

    assert status(first, secret) == 200  # the first process reads 0 refusals
    assert status(second, secret) == 200
    # Refusals are counted at once, one statement each: the address is blocked in the 3rd.
    assert [status(second, WRONG_KEY) for _ in range(3)] == [401, 401, 429]
    # The process that counted them knows at once; the other one at its next flush.
    assert status(second, secret) == 429
    clock.value += 0.5
    assert status(first, secret) == 200
    clock.value += 0.5
    assert status(first, secret) == 429


@pytest.mark.django_db(transaction=True)
def test_concurrent_threads_of_a_batching_process_are_exact(batches):
    """8 threads x 25 requests of one process: its lock makes them one sequence, so exactly
    100 pass, and the shared counters hold every request once its batches are written."""
    batches.RATE_LIMIT_REQUESTS = 100
    secret = issue_key(InstitutionFactory())[1]
    statuses = eight_clients(secret)

    assert sorted(statuses) == [200] * 100 + [429] * 100
    ratelimit.flush()
    assert shared_counts() == {"key": 200, "institution": 200}


class CountingBackend:
    """A backend in memory that records its calls."""

    def __init__(self):
        self.counts: dict[str, int] = {}
        self.calls: list[dict[str, int]] = []

    def count(self, *, window_start, window, hits, reads):
        self.calls.append(dict(hits))
        for bucket, amount in hits.items():
            self.counts[bucket] = self.counts.get(bucket, 0) + amount
        return {bucket: self.counts.get(bucket, 0) for bucket in [*hits, *reads]}


def test_the_process_keeps_at_most_max_buckets(batches, monkeypatch):
    monkeypatch.setattr(ratelimit, "MAX_BUCKETS", 4)
    counters, backend = ratelimit.LocalCounters(), CountingBackend()

    def count(*hits, reads=()):
        return counters.count(
            backend, now=WINDOW_START, window_start=WINDOW_START, window=60, hits=hits, reads=reads
        )

    def kept():
        return {bucket: state.pending for (bucket, _), state in counters._buckets.items()}

    assert count("key:1", "institution:1", reads=["refused:a"]) == {
        "key:1": 1,
        "institution:1": 1,
        "refused:a": 0,
    }
    assert count("key:1", "institution:1", reads=["refused:a"])["key:1"] == 2  # pending
    assert count("key:2", "institution:1") == {"key:2": 1, "institution:1": 3}  # new: flushed
    assert kept() == {"key:1": 1, "institution:1": 0, "refused:a": 0, "key:2": 0}
    # A 5th bucket: the buckets with nothing pending make room, the pending hit stays.
    assert count("key:3") == {"key:3": 1}
    assert kept() == {"key:1": 1, "key:3": 0}
    for bucket in ("key:3", "key:4", "key:4", "key:5", "key:5"):
        count(bucket)
    assert kept() == {"key:1": 1, "key:3": 1, "key:4": 1, "key:5": 1}
    # Full of pending hits: start over, as a restarted process would (4 pending dropped).
    assert count("key:6") == {"key:6": 1}
    assert kept() == {"key:6": 0}
    assert backend.calls == [
        {"key:1": 1, "institution:1": 1},
        {"key:2": 1, "institution:1": 2},
        {"key:3": 1},
        {"key:4": 1},
        {"key:5": 1},
        {"key:6": 1},
    ]


# --- Redis (a fake that records round trips; no server is needed) ---------------------------


class FakeRedis:
    def __init__(self):
        self.values: dict[str, int] = {}
        self.expire_at: dict[str, int] = {}
        self.round_trips = 0

    def pipeline(self, transaction=True):
        return FakePipeline(self)


class FakePipeline:
    def __init__(self, redis):
        self.redis = redis
        self.commands = []

    def incr(self, key, amount=1):  # redis-py's signature
        self.commands.append(("incr", key, amount))

    def expireat(self, key, when):
        self.commands.append(("expireat", key, when))

    def get(self, key):
        self.commands.append(("get", key))

    def execute(self):
        self.redis.round_trips += 1
        replies = []
        for name, key, *args in self.commands:
            if name == "incr":
                self.redis.values[key] = self.redis.values.get(key, 0) + args[0]
                replies.append(self.redis.values[key])
            elif name == "expireat":
                self.redis.expire_at[key] = args[0]
                replies.append(True)
            else:
                value = self.redis.values.get(key)
                replies.append(None if value is None else str(value).encode())
        return replies


@pytest.fixture
def redis(limits, monkeypatch):
    fake = FakeRedis()
    limits.RATE_LIMIT_BACKEND = "redis"
    limits.CACHE_URL = "redis://cache.internal:6379/0"
    monkeypatch.setattr(ratelimit, "redis_client", lambda url: fake)
    return fake


def test_redis_backend_one_round_trip_per_request(api_v2, redis, limits):
    limits.RATE_LIMIT_REQUESTS = 3
    limits.RATE_LIMIT_FAILED_AUTH_REQUESTS = 2
    with CaptureQueriesContext(connection) as queries:
        for _ in range(3):
            assert api_v2.get("/customers").status_code == 200
        assert_rate_limited(api_v2.get("/customers"), ratelimit.KEY_LIMITED)
    assert redis.round_trips == 4
    assert counter_statements(queries) == []
    # Each counter expires by itself, after the next window.
    assert set(redis.expire_at.values()) == {WINDOW_START + 120}

    stranger = Api("v2", WRONG_KEY, remote_addr="198.51.100.3")
    for _ in range(2):
        assert stranger.get("/customers").status_code == 401
    assert_rate_limited(stranger.get("/customers"), ratelimit.ADDRESS_LIMITED)
    assert redis.values[f"tx:ratelimit:refused:198.51.100.3:{WINDOW_START}"] == 3
    assert redis.round_trips == 7


def test_redis_counts_the_same_batches(api_v2, redis, batches):
    batches.RATE_LIMIT_REQUESTS = 6

    def counts():
        return {name.split(":")[2]: value for name, value in redis.values.items()}

    for _ in range(6):
        assert api_v2.get("/customers").status_code == 200
    assert_rate_limited(api_v2.get("/customers"), ratelimit.KEY_LIMITED)
    # Round trips at the 1st and 5th requests: 1, then 4 added at once (INCRBY).
    assert redis.round_trips == 2
    assert counts() == {"key": 5, "institution": 5}
    ratelimit.flush()
    assert redis.round_trips == 3
    assert counts() == {"key": 7, "institution": 7}


def test_backend_follows_the_settings(settings, monkeypatch):
    settings.RATE_LIMIT_BACKEND = "postgresql"
    assert isinstance(ratelimit.backend(), ratelimit.PostgresBackend)
    fake = FakeRedis()
    monkeypatch.setattr(ratelimit, "redis_client", lambda url: fake)
    settings.RATE_LIMIT_BACKEND = "redis"
    chosen = ratelimit.backend()
    assert isinstance(chosen, ratelimit.RedisBackend)
    assert chosen.client is fake


# --- The schema documents -------------------------------------------------------------------


@pytest.fixture
def generations(monkeypatch):
    """Fresh per-process documents for the test, and a count of documents generated."""
    monkeypatch.setattr(SchemaView, "documents", {})
    calls = []
    real = SchemaGenerator.get_schema

    def spy(self, *args, **kwargs):
        calls.append(self.api_version)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SchemaGenerator, "get_schema", spy)
    return calls


def test_each_versions_schema_is_generated_once_per_process(db, limits, generations):
    api = Api("v2", None)
    first = api.client.get("/TX/v2/schema?format=json")
    assert first.status_code == 200
    assert generations == ["v2"]
    second = api.client.get("/TX/v2/schema?format=json", HTTP_HOST="localhost")
    assert second.status_code == 200
    assert second.content == first.content
    assert api.client.get("/TX/v2/schema").status_code == 200  # YAML: rendered from the same
    assert generations == ["v2"]
    assert api.client.get("/TX/v1/schema?format=json").status_code == 200
    assert api.client.get("/TX/v1/schema?format=json").status_code == 200
    assert generations == ["v2", "v1"]
    # Each version has its own document.
    v1_paths = api.client.get("/TX/v1/schema?format=json").json()["paths"]
    assert all(path.startswith("/TX/v1/") for path in v1_paths)
    assert all(path.startswith("/TX/v2/") for path in first.json()["paths"])


def test_schema_documents_are_rate_limited_per_address(db, limits, generations):
    limits.RATE_LIMIT_SCHEMA_REQUESTS = 2
    reader = Api("v2", None, remote_addr="192.0.2.10").client
    assert reader.get("/TX/v2/schema?format=json").status_code == 200
    assert reader.get("/TX/v1/docs").status_code == 200  # the docs page counts too
    assert_rate_limited(reader.get("/TX/v2/schema"), ratelimit.SCHEMA_LIMITED)
    assert_rate_limited(reader.get("/TX/v1/schema"), ratelimit.SCHEMA_LIMITED)
    assert_rate_limited(reader.get("/TX/v2/docs"), ratelimit.SCHEMA_LIMITED)
    assert generations == ["v2"]  # a refused request builds nothing
    other = Api("v2", None, remote_addr="192.0.2.11").client
    assert other.get("/TX/v2/schema?format=json").status_code == 200
