"""Name resolution of outbound calls (issue 46, H6; core/outbound/resolver.py) against a real DNS
server on loopback (tests/dns.py): literals and /etc/hosts names resolve without DNS; DNS answers
are cached for their TTL within a floor and a ceiling (the cache's clock is the test's), a name
with no address for a short while, a timeout not at all; a name whose zone never answers costs
its callers their own time only, on their own threads, and does not delay another name."""

import socket
import threading
import time
import types

import pytest

from core.outbound import resolver
from core.outbound.resolver import MAX_TTL, MIN_TTL, NEGATIVE_TTL
from tests import dns
from tests.dns import Records


@pytest.fixture
def server():
    with dns.serving() as server:
        yield server


@pytest.fixture
def clock():
    """The cache's clock (seconds), moved by the test."""
    return types.SimpleNamespace(now=1000.0)


@pytest.fixture
def hosts(tmp_path):
    path = tmp_path / "hosts"
    path.write_text("127.0.0.1 localhost\n10.1.2.3 program.internal program # a comment\n")
    return path


@pytest.fixture
def names(server, clock, hosts):
    """A resolver that asks `server`, reads `hosts` and keeps time by `clock`."""
    return server.resolver(hosts=hosts, clock=lambda: clock.now)


def test_literals_are_their_own_address_and_nothing_is_asked(server, names):
    for host, address in [
        ("93.184.216.34", "93.184.216.34"),
        ("2130706433", "127.0.0.1"),  # as getaddrinfo (inet_aton) reads it
        ("0x7f000001", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("::1", "::1"),
        ("::ffff:127.0.0.1", "::ffff:7f00:1"),  # judged as 127.0.0.1 by the address rules
        ("fe80::1%eth0", "fe80::1%eth0"),
    ]:
        assert names.addresses(host, timeout=1) == [address]
    with pytest.raises(socket.gaierror):  # an IPv6 literal is no IPv4 address
        names.addresses("::1", timeout=1, family=socket.AF_INET)
    assert server.queries == []


def test_hosts_file_names_and_localhost_are_not_asked_of_dns(server, names, hosts):
    assert names.addresses("program.internal", timeout=1) == ["10.1.2.3"]
    assert names.addresses("PROGRAM", timeout=1) == ["10.1.2.3"]  # names are case-blind
    assert names.addresses("localhost", timeout=1) == ["127.0.0.1"]  # as the file says
    # RFC 6761: localhost names are loopback even where the file does not name them.
    assert names.addresses("api.localhost", timeout=1) == ["127.0.0.1", "::1"]
    assert names.addresses("api.localhost", timeout=1, family=socket.AF_INET) == ["127.0.0.1"]
    # The file is read again when it changes.
    hosts.write_text("10.9.9.9 program.internal\n")
    assert names.addresses("program.internal", timeout=1) == ["10.9.9.9"]
    assert server.queries == []


def test_a_dns_answer_is_cached_for_its_ttl(server, names, clock):
    server.records = {
        "decide.example.com": Records(["2606:2800:220:1::1", "93.184.216.34"], ttl=60)
    }
    # IPv4 first; both families asked once.
    assert names.addresses("decide.example.com", timeout=1) == [
        "93.184.216.34",
        "2606:2800:220:1::1",
    ]
    assert server.queries == [("decide.example.com", "A"), ("decide.example.com", "AAAA")]
    clock.now += 59
    assert names.addresses("Decide.Example.COM.", timeout=1)[0] == "93.184.216.34"  # a hit
    assert len(server.queries) == 2
    # IPv4 only: its own entry, A asked alone.
    assert names.addresses("decide.example.com", timeout=1, family=socket.AF_INET) == [
        "93.184.216.34"
    ]
    assert server.queries[2:] == [("decide.example.com", "A")]
    clock.now += 1.5  # the TTL has passed: asked again
    server.records["decide.example.com"] = Records(["93.184.216.35"], ttl=60)
    assert names.addresses("decide.example.com", timeout=1) == ["93.184.216.35"]
    assert len(server.queries) == 5


@pytest.mark.parametrize(
    ("ttl", "kept"),
    [(0, MIN_TTL), (2, MIN_TTL), (86_400, MAX_TTL)],
    ids=["ttl 0", "under the floor", "over the ceiling"],
)
def test_a_ttl_is_kept_within_a_floor_and_a_ceiling(server, names, clock, ttl, kept):
    server.records = {"decide.example.com": Records(["93.184.216.34"], ttl=ttl)}
    names.addresses("decide.example.com", timeout=1, family=socket.AF_INET)
    clock.now += kept - 0.5
    names.addresses("decide.example.com", timeout=1, family=socket.AF_INET)
    assert server.questions("decide.example.com") == 1
    clock.now += 1
    names.addresses("decide.example.com", timeout=1, family=socket.AF_INET)
    assert server.questions("decide.example.com") == 2


def test_a_name_without_address_is_remembered_briefly(server, names, clock):
    server.records = {"empty.example.com": Records([])}  # exists, no A or AAAA
    for host in ("nowhere.example.com", "empty.example.com"):
        with pytest.raises(socket.gaierror):
            names.addresses(host, timeout=1)
    asked = len(server.queries)
    assert asked == 3  # NXDOMAIN ends the first name's lookup: no AAAA asked
    clock.now += NEGATIVE_TTL - 0.5
    for host in ("nowhere.example.com", "empty.example.com"):
        with pytest.raises(socket.gaierror):
            names.addresses(host, timeout=1)
    assert len(server.queries) == asked
    clock.now += 1
    server.records["nowhere.example.com"] = Records(["93.184.216.34"])
    assert names.addresses("nowhere.example.com", timeout=1) == ["93.184.216.34"]


def test_a_timeout_is_not_cached(server, names):
    server.silent = {"slow.example.com"}
    for _ in range(2):
        with pytest.raises(TimeoutError):
            names.addresses("slow.example.com", timeout=0.2)
    assert server.questions("slow.example.com") >= 2  # asked again: a timeout is not an answer
    with pytest.raises(TimeoutError):
        names.addresses("slow.example.com", timeout=0)


def test_the_cache_keeps_a_bounded_number_of_names(server, clock, hosts):
    names = server.resolver(hosts=hosts, clock=lambda: clock.now, cache_size=2)
    server.records = {f"n{i}.example.com": Records([f"93.184.216.{i}"]) for i in range(3)}
    for i in (0, 1, 0, 2):  # n1 is the least recently used when n2 comes
        names.addresses(f"n{i}.example.com", timeout=1, family=socket.AF_INET)
    names.addresses("n0.example.com", timeout=1, family=socket.AF_INET)
    names.addresses("n1.example.com", timeout=1, family=socket.AF_INET)
    assert [server.questions(f"n{i}.example.com") for i in range(3)] == [1, 2, 1]


def test_a_slow_zone_does_not_delay_another_name(server, names):
    """Six lookups of a name whose zone never answers (more than the 4 threads the old shared
    pool had) each wait their own 1 s on their own thread; meanwhile another name resolves at
    once, and when the six have given up nothing goes on resolving."""
    server.silent = {"slow.example.com"}
    server.records = {"fast.example.com": Records(["93.184.216.34"])}
    threads_before = threading.active_count()
    waited: list[float] = []

    def slow():
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            names.addresses("slow.example.com", timeout=1.0)
        waited.append(time.monotonic() - started)

    callers = [threading.Thread(target=slow) for _ in range(6)]
    for caller in callers:
        caller.start()
    server.wait_for("slow.example.com", 6)  # all six are waiting on the zone
    started = time.monotonic()
    assert names.addresses("fast.example.com", timeout=1.0) == ["93.184.216.34"]
    fast = time.monotonic() - started
    for caller in callers:
        caller.join(5)
    assert fast < 0.5
    assert len(waited) == 6 and all(0.9 <= w < 2.0 for w in waited)
    assert threading.active_count() == threads_before


def test_the_process_resolver_is_made_again_in_a_child(monkeypatch):
    first = resolver.default()
    assert resolver.default() is first
    monkeypatch.setattr(first, "pid", first.pid + 1)  # as a forked child sees its parent's
    assert resolver.default() is not first
