"""Where webhooks may go: the URL rules, and the address rules that keep deliveries out of the
bank's own network unless WEBHOOK_ALLOW_PRIVATE_TARGETS (development and tests) says so."""

import base64
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from core.outbound import resolver, targets
from core.outbound.targets import TargetRefused, check_url, parse_url, refusal
from tests import dns
from tests.dns import Records


@pytest.fixture
def production(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
    settings.WEBHOOK_REQUIRE_HTTPS = True


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "127.8.9.10",
        "::1",
        "::ffff:127.0.0.1",
        "0.0.0.0",  # noqa: S104 (what is refused)
        "::",
        "169.254.169.254",  # cloud metadata
        "fe80::1%eth0",
        "224.0.0.1",
        "ff02::1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "::ffff:10.0.0.1",
        "100.64.0.1",  # carrier-grade NAT
        "fc00::1",
        "fd12:3456::1",  # unique-local
        "240.0.0.1",
        "255.255.255.255",
        "192.0.2.1",  # documentation
        "198.51.100.7",
        "203.0.113.9",
        "198.18.0.1",  # benchmarking
        "192.0.0.170",  # NAT64 discovery
        "192.88.99.1",  # 6to4 relay anycast
        "192.31.196.1",  # AS112
        "192.175.48.1",
        "192.52.193.1",  # AMT
        # Python 3.11.7 calls these global (issue 29):
        "2002:7f00:1::",  # 6to4 wrapping 127.0.0.1
        "2002:a00:1::",  # 6to4 wrapping 10.0.0.1
        "2002:5db8:d822::1",  # 6to4 wrapping a public address: refused whole all the same
        "fec0::1",  # site-local
        "fec0:0:0:ffff::1",
        "3fff::1",  # documentation (2024)
        "5f00::1",  # SRv6
        # Teredo (2001::/32) wrapping private and public addresses, and the rest of 2001::/23:
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",
        "2001:0:a00:1::f5ff:fffe",
        "2001:2::1",
        "2001:db8::1",
        # NAT64: the well-known prefix judged by the IPv4 address it carries; local-use refused.
        "64:ff9b::a00:1",  # 10.0.0.1
        "64:ff9b::7f00:1",  # 127.0.0.1
        "64:ff9b::a9fe:a9fe",  # 169.254.169.254
        "64:ff9b:1::5db8:d822",
        "::a00:1",  # IPv4-compatible (deprecated)
        "100::1",  # discard-only
        "2620:4f:8000::1",  # AS112
    ],
)
def test_special_purpose_addresses_are_refused(production, address):
    assert refusal(address) is not None


@pytest.mark.parametrize(
    "address",
    [
        "93.184.216.34",
        "2606:2800:220:1:248:1893:25c8:1946",
        "::ffff:93.184.216.34",
        "64:ff9b::5db8:d822",  # NAT64 of 93.184.216.34: what DNS64 answers on IPv6-only networks
        "2001:4860:4860::8888",  # outside 2001::/23
    ],
)
def test_public_addresses_are_allowed(production, address):
    assert refusal(address) is None


def test_every_special_purpose_block_is_in_the_table(production):
    """The first and the last address of every block of the table are refused."""
    for network in targets.SPECIAL_NETWORKS:
        assert refusal(str(network.network_address)) is not None
        assert refusal(str(network.broadcast_address)) is not None


def test_development_allows_every_address(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    assert refusal("127.0.0.1") is None
    assert refusal("10.0.0.1") is None


@pytest.mark.parametrize(
    "url, message",
    [
        ("http://hooks.example.com/", "The scheme must be https."),
        ("ftp://hooks.example.com/", "The scheme must be https."),
        ("hooks.example.com/x", "The scheme must be https."),
        (
            "https://user:pw@hooks.example.com/",
            "A URL with credentials (user:password@) is not "
            "accepted: authenticate webhooks by their signature.",
        ),
        (
            "https://token@hooks.example.com/",
            "A URL with credentials (user:password@) is not "
            "accepted: authenticate webhooks by their signature.",
        ),
        ("https:///path", "The URL has no host."),
        ("https://hooks.example.com:99999/", "Not a valid URL."),
        ("https://hooks.example.com/a b", "A URL has no spaces or control characters."),
        ("https://hooks.example.com/\x00", "A URL has no spaces or control characters."),
        ("", "Must be a URL."),
        ("https://x.example/" + "a" * 2048, "At most 2048 characters."),
    ],
)
def test_url_rules(production, url, message):
    with pytest.raises(TargetRefused) as refused:
        parse_url(url)
    assert str(refused.value) == message


def test_http_is_allowed_outside_production(settings):
    settings.WEBHOOK_REQUIRE_HTTPS = False
    target = parse_url("HTTP://Hooks.Example.com:8080/x?y=1")
    assert (target.scheme, target.host, target.port) == ("http", "hooks.example.com", 8080)
    assert parse_url("https://hooks.example.com/").port == 443


@pytest.fixture
def names(monkeypatch):
    """The DNS this process asks: a server on loopback (tests/dns.py)."""
    with dns.serving() as server:
        dns.use(monkeypatch, server)
        yield server


def test_every_address_of_the_host_must_be_public(production, names):
    names.records = {
        "public.example.com": Records(["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"]),
        "mixed.example.com": Records(["93.184.216.34", "10.0.0.5"]),
        "mixed6.example.com": Records(["93.184.216.34", "fd12:3456::1"]),
        "internal.example.com": Records(["192.168.10.10"]),
        "tunnel.example.com": Records(["2002:a00:1::"]),
    }
    assert check_url("https://public.example.com/hooks").host == "public.example.com"
    # One message whatever the reason: a name that does not resolve reads like a private one.
    for host in ("mixed", "mixed6", "internal", "tunnel", "nowhere"):
        with pytest.raises(TargetRefused) as refused:
            check_url(f"https://{host}.example.com/hooks")
        assert str(refused.value) == targets.REFUSED
    # Both families were asked of every name that exists (NXDOMAIN ends it at once).
    assert names.queries.count(("mixed6.example.com", "AAAA")) == 1
    assert names.queries.count(("nowhere.example.com", "AAAA")) == 0


def test_a_name_that_does_not_resolve_in_time_is_refused(production, settings, names):
    """The lookup asks DNS itself, on the request's thread, for the setting's time: the API
    request waits that long, no longer, and nothing goes on resolving after it."""
    settings.WEBHOOK_RESOLVE_TIMEOUT_SECONDS = 0.2
    names.silent = {"slow.example.com"}
    threads = threading.active_count()
    started = time.monotonic()
    with pytest.raises(TargetRefused) as refused:
        check_url("https://slow.example.com/hooks")
    waited = time.monotonic() - started
    assert str(refused.value) == targets.REFUSED
    assert 0.2 <= waited < 1.0
    assert names.questions("slow.example.com") >= 1
    assert threading.active_count() == threads


def test_loopback_names_and_literals_are_refused(production, names):
    """Literals, in every form the system's resolver reads too (decimal, hex, short), are their
    own addresses, and `localhost` names are loopback: none of them is asked of DNS."""
    for url in (
        "https://localhost/",
        "https://api.localhost/",
        "https://127.0.0.1:8443/",
        "https://[::1]/",
        "https://[::ffff:127.0.0.1]/",
        "https://2130706433/",
        "https://0x7f000001/",
        "https://127.1/",
    ):
        with pytest.raises(TargetRefused) as refused:
            check_url(url)
        assert str(refused.value) == targets.REFUSED
    assert names.queries == []


def test_private_targets_are_not_even_resolved_when_allowed(settings, monkeypatch):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    monkeypatch.setattr(resolver, "addresses", pytest.fail)
    assert check_url("http://receiver.internal:9000/").host == "receiver.internal"


def test_production_settings_force_https_and_public_targets():
    """Whatever the environment says, production refuses http and private targets."""
    env = {
        **os.environ,
        "DATABASE_URL": "postgres://u:p@db.example.com/tx",
        "SECRET_KEY": "s" * 50,
        "FIELD_ENCRYPTION_KEYS": "k1:" + base64.b64encode(b"k" * 32).decode(),
        "PIN_KEY": "p" * 32,
        "PAN_FINGERPRINT_KEY": "f" * 32,
        "STAFF_RECOVERY_CODE_KEY": "r" * 32,
        "WEBHOOK_REQUIRE_HTTPS": "0",
        "WEBHOOK_ALLOW_PRIVATE_TARGETS": "1",
    }
    code = (
        "from config.settings import production as p; "
        "print(p.WEBHOOK_REQUIRE_HTTPS, p.WEBHOOK_ALLOW_PRIVATE_TARGETS)"
    )
    result = subprocess.run(  # noqa: S603 (this interpreter, fixed arguments)
        [sys.executable, "-c", code],
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.split() == ["True", "False"]
