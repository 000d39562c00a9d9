"""Where webhooks may be sent: the URL rules and the address rules (no server-side request
forgery into the bank's own network).

A URL is `http` or `https` (`https` only where WEBHOOK_REQUIRE_HTTPS is set, as in production),
has a host, and carries no credentials (`user:password@`). Unless WEBHOOK_ALLOW_PRIVATE_TARGETS
is set (development and tests only), every address the host resolves to must be public: loopback,
private, link-local, shared (CGNAT), multicast, reserved and unspecified addresses are refused,
also when they are written as IPv4-mapped IPv6.

The addresses are checked twice: when the endpoint is created or changed (a clear 400 for the
client), and when a delivery connects (DNS may have changed since). At delivery the check is on
the address the socket actually connected to (`webhooks.transport`), so a name that resolves to
a public address for the check and to a private one for the connection is refused too.
"""

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from django.conf import settings

from .models import MAX_URL_LENGTH


class TargetRefused(Exception):
    """The URL or its addresses are not allowed; the message says why (never an address)."""


@dataclass(frozen=True)
class Target:
    url: str
    scheme: str
    host: str
    port: int


def parse_url(url) -> Target:
    """The URL's parts after the URL rules (not the address rules). Raises TargetRefused."""
    if not isinstance(url, str) or not url:
        raise TargetRefused("Must be a URL.")
    if len(url) > MAX_URL_LENGTH:
        raise TargetRefused(f"At most {MAX_URL_LENGTH} characters.")
    if any(char.isspace() or ord(char) < 32 or ord(char) == 127 for char in url):
        raise TargetRefused("A URL has no spaces or control characters.")
    try:
        parts: SplitResult = urlsplit(url)
        port = parts.port
    except ValueError:
        raise TargetRefused("Not a valid URL.") from None
    scheme = parts.scheme.lower()
    allowed = ("https",) if settings.WEBHOOK_REQUIRE_HTTPS else ("http", "https")
    if scheme not in allowed:
        raise TargetRefused(f"The scheme must be {' or '.join(allowed)}.")
    if parts.username is not None or parts.password is not None:
        raise TargetRefused(
            "A URL with credentials (user:password@) is not accepted: authenticate webhooks "
            "by their signature."
        )
    host = parts.hostname
    if not host:
        raise TargetRefused("The URL has no host.")
    return Target(
        url=url, scheme=scheme, host=host, port=port or (443 if scheme == "https" else 80)
    )


def refusal(address: str) -> str | None:
    """Why a connection to `address` is not allowed, or None when it is."""
    if settings.WEBHOOK_ALLOW_PRIVATE_TARGETS:
        return None
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])  # drop an IPv6 zone id
    except ValueError:
        return "not an IP address"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_unspecified:
        return "an unspecified address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_private or ip.is_reserved or not ip.is_global:
        return "a private or reserved address"
    return None


def resolve(host: str, port: int) -> list[str]:
    """The addresses `host` resolves to (the system's resolver). Raises OSError."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return sorted({info[4][0] for info in infos})


def check_addresses(target: Target) -> list[str]:
    """Resolve the target's host and check every address it has. Returns the addresses;
    raises TargetRefused when the host does not resolve or one address is not allowed (a
    name with one public and one private address is refused: the connection may take
    either)."""
    try:
        addresses = resolve(target.host, target.port)
    except (OSError, UnicodeError):
        raise TargetRefused("The URL's host could not be resolved.") from None
    if not addresses:
        raise TargetRefused("The URL's host could not be resolved.")
    for address in addresses:
        reason = refusal(address)
        if reason is not None:
            raise TargetRefused(
                f"The URL's host resolves to {reason}: webhooks are sent to public addresses only."
            )
    return addresses


def check_url(url) -> Target:
    """The URL rules, then (unless private targets are allowed) the address rules."""
    target = parse_url(url)
    if not settings.WEBHOOK_ALLOW_PRIVATE_TARGETS:
        check_addresses(target)
    return target
