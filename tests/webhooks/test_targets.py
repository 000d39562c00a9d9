"""Where webhooks may go: the URL rules, and the address rules that keep deliveries out of the
bank's own network unless WEBHOOK_ALLOW_PRIVATE_TARGETS (development and tests) says so."""

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest

from webhooks import targets
from webhooks.targets import TargetRefused, check_url, parse_url, refusal


@pytest.fixture
def production(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
    settings.WEBHOOK_REQUIRE_HTTPS = True


@pytest.mark.parametrize(
    "address, reason",
    [
        ("127.0.0.1", "a loopback address"),
        ("127.8.9.10", "a loopback address"),
        ("::1", "a loopback address"),
        ("::ffff:127.0.0.1", "a loopback address"),
        ("0.0.0.0", "an unspecified address"),  # noqa: S104 (what is refused)
        ("::", "an unspecified address"),
        ("169.254.169.254", "a link-local address"),  # cloud metadata
        ("fe80::1%eth0", "a link-local address"),
        ("224.0.0.1", "a multicast address"),
        ("ff02::1", "a multicast address"),
        ("10.1.2.3", "a private or reserved address"),
        ("172.16.0.1", "a private or reserved address"),
        ("192.168.1.1", "a private or reserved address"),
        ("::ffff:10.0.0.1", "a private or reserved address"),
        ("100.64.0.1", "a private or reserved address"),  # carrier-grade NAT
        ("fc00::1", "a private or reserved address"),
        ("240.0.0.1", "a private or reserved address"),
        ("192.0.2.1", "a private or reserved address"),  # documentation
        ("93.184.216.34", None),
        ("2606:2800:220:1:248:1893:25c8:1946", None),
    ],
)
def test_which_addresses_are_refused(production, address, reason):
    assert refusal(address) == reason


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


def test_every_address_of_the_host_must_be_public(production, monkeypatch):
    answers = {
        "public.example.com": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
        "mixed.example.com": ["93.184.216.34", "10.0.0.5"],
        "internal.example.com": ["192.168.10.10"],
    }

    def resolve(host, port):
        if host not in answers:
            raise OSError("Name or service not known")
        return answers[host]

    monkeypatch.setattr(targets, "resolve", resolve)
    assert check_url("https://public.example.com/hooks").host == "public.example.com"
    for host in ("mixed", "internal"):
        with pytest.raises(TargetRefused) as refused:
            check_url(f"https://{host}.example.com/hooks")
        assert str(refused.value) == (
            "The URL's host resolves to a private or reserved address: webhooks are sent to "
            "public addresses only."
        )
    with pytest.raises(TargetRefused, match="could not be resolved"):
        check_url("https://nowhere.example.com/")


def test_loopback_names_and_literals_are_refused(production):
    for url in ("https://localhost/", "https://127.0.0.1:8443/", "https://[::1]/"):
        with pytest.raises(TargetRefused, match="a loopback address"):
            check_url(url)


def test_private_targets_are_not_even_resolved_when_allowed(settings, monkeypatch):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    monkeypatch.setattr(targets, "resolve", pytest.fail)
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
