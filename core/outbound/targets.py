"""Where outbound requests (webhook deliveries, calls of decisioning endpoints) may be sent:
the URL rules and the address rules (no server-side request forgery into the bank's own
network).

A URL is `http` or `https` (`https` only where WEBHOOK_REQUIRE_HTTPS is set, as in production),
has a host, and carries no credentials (`user:password@`). Unless WEBHOOK_ALLOW_PRIVATE_TARGETS
is set (development and tests only), every address the host resolves to must be public: every
block of IANA's special-purpose registries, IPv4 and IPv6, is refused (loopback, private, shared,
link-local, site-local, unique-local, documentation, 6to4, Teredo, ...: `SPECIAL_NETWORKS`), and
an IPv4 address written as IPv4-mapped or NAT64 IPv6 is judged as the IPv4 address it is. Names
resolve within WEBHOOK_RESOLVE_TIMEOUT_SECONDS (`core.outbound.resolver`: on the caller's
thread, cached), and every refusal has one message (`REFUSED`).

The addresses are checked twice: when the endpoint is created or changed (a clear 400 for the
client), and when a delivery connects (DNS may have changed since). At delivery the check is on
the address the socket actually connected to (`core.outbound.transport`), so a name that resolves to
a public address for the check and to a private one for the connection is refused too.
"""

import ipaddress
import logging
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from django.conf import settings

from . import resolver

logger = logging.getLogger(__name__)

# The longest URL accepted (webhook endpoints and decisioning endpoints store it in a column of
# this length).
MAX_URL_LENGTH = 2048


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


# Every block of IANA's special-purpose address registries (IPv4 and IPv6, as of 2025), plus the
# multicast ranges and the deprecated blocks Python's `ipaddress` calls global (site-local
# `fec0::/10`, IPv4-compatible `::/96`). None of them is an ordinary host a webhook receiver
# lives on, so each is refused whole, whatever the registry says of its global reachability
# (AS112, anycast relays and the like are not receivers either). Python's own flags are not
# enough on their own: 3.11.7 calls 6to4 and site-local addresses global.
_SPECIAL_V4 = [
    "0.0.0.0/8",  # this network
    "10.0.0.0/8",  # private
    "100.64.0.0/10",  # shared address space (CGNAT)
    "127.0.0.0/8",  # loopback
    "169.254.0.0/16",  # link-local (cloud metadata services)
    "172.16.0.0/12",  # private
    "192.0.0.0/24",  # IETF protocol assignments (DS-Lite, NAT64 discovery, anycast)
    "192.0.2.0/24",  # documentation
    "192.31.196.0/24",  # AS112
    "192.52.193.0/24",  # AMT
    "192.88.99.0/24",  # 6to4 relay anycast (deprecated)
    "192.168.0.0/16",  # private
    "192.175.48.0/24",  # AS112 direct delegation
    "198.18.0.0/15",  # benchmarking
    "198.51.100.0/24",  # documentation
    "203.0.113.0/24",  # documentation
    "224.0.0.0/4",  # multicast
    "240.0.0.0/4",  # reserved, and the limited broadcast address
]
_SPECIAL_V6 = [
    "::/96",  # unspecified, loopback and IPv4-compatible (deprecated)
    "64:ff9b:1::/48",  # local-use IPv4/IPv6 translation
    "100::/64",  # discard-only
    "100:0:0:1::/64",  # dummy prefix
    "2001::/23",  # IETF protocol assignments: Teredo, benchmarking, AMT, AS112, ORCHID, ...
    "2001:db8::/32",  # documentation
    "2002::/16",  # 6to4
    "2620:4f:8000::/48",  # AS112 direct delegation
    "3fff::/20",  # documentation
    "5f00::/16",  # segment routing (SRv6) SIDs
    "fc00::/7",  # unique-local
    "fe80::/10",  # link-local
    "fec0::/10",  # site-local (deprecated, yet "global" to Python)
    "ff00::/8",  # multicast
]
SPECIAL_NETWORKS = [ipaddress.ip_network(block) for block in _SPECIAL_V4 + _SPECIAL_V6]
# IPv6 forms that carry an IPv4 address a connection reaches: IPv4-mapped (`::ffff:a.b.c.d`, a
# dual-stack socket) and NAT64's well-known prefix (`64:ff9b::a.b.c.d`, what DNS64 answers on an
# IPv6-only network). The IPv4 address they carry is what is judged. 6to4 and Teredo carry one
# too, but are refused whole above: deprecated tunnels no receiver needs.
_NAT64 = ipaddress.ip_network("64:ff9b::/96")

# One answer for every refusal, whether the host did not resolve, resolved too slowly, or
# resolved to an address of the table above: telling them apart would let a client map the
# bank's internal DNS through the error message.
REFUSED = (
    "The URL's host must resolve to public addresses only: webhooks are not sent to loopback, "
    "private or special-purpose networks."
)


def _judged(ip: ipaddress.IPv4Address | ipaddress.IPv6Address):
    """The IPv4 address an IPv4-mapped or NAT64 address carries, else the address itself."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return ip.ipv4_mapped
        if ip in _NAT64:
            return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip


def refusal(address: str) -> str | None:
    """Why a connection to `address` is not allowed (a few words, for the operators' log), or
    None when it is."""
    if settings.WEBHOOK_ALLOW_PRIVATE_TARGETS:
        return None
    try:
        ip = _judged(ipaddress.ip_address(address.split("%", 1)[0]))  # drop an IPv6 zone id
    except ValueError:
        return "not an IP address"
    for network in SPECIAL_NETWORKS:
        if ip.version == network.version and ip in network:
            return f"in the special-purpose block {network}"
    if not ip.is_global:
        return "not a global address"
    return None


def resolve(host: str) -> list[str]:
    """The addresses `host` resolves to (`core.outbound.resolver`: on this thread, cached),
    within WEBHOOK_RESOLVE_TIMEOUT_SECONDS, sorted. Raises OSError."""
    addresses = resolver.addresses(host, timeout=settings.WEBHOOK_RESOLVE_TIMEOUT_SECONDS)
    return sorted(set(addresses))


def check_addresses(target: Target) -> list[str]:
    """Resolve the target's host and check every address it has. Returns the addresses;
    raises TargetRefused (one message, REFUSED) when the host does not resolve in time or one
    address is not allowed (a name with one public and one private address is refused: the
    connection may take either)."""
    try:
        addresses = resolve(target.host)
    except (OSError, UnicodeError) as exc:
        logger.info("Webhook target refused: the host did not resolve (%s)", type(exc).__name__)
        raise TargetRefused(REFUSED) from None
    reasons = [reason for reason in map(refusal, addresses) if reason is not None]
    if not addresses or reasons:
        logger.info("Webhook target refused: %s", reasons[0] if reasons else "no address")
        raise TargetRefused(REFUSED)
    return addresses


def check_url(url) -> Target:
    """The URL rules, then (unless private targets are allowed) the address rules."""
    target = parse_url(url)
    if not settings.WEBHOOK_ALLOW_PRIVATE_TARGETS:
        check_addresses(target)
    return target
