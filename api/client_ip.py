"""The client address an allowlist is checked against (docs/design.md section 3).

The socket peer (REMOTE_ADDR), unless that peer is one of TRUSTED_PROXIES: only then is
X-Forwarded-For read, and its right-most entry (the address our proxy saw) is taken, through
django-ipware. A forged header from an untrusted peer changes nothing, and the left-most entries
of a header that passed through a trusted proxy (which a client can write) are never used.
"""

import ipaddress
from functools import lru_cache

from django.conf import settings
from ipware import get_client_ip


@lru_cache(maxsize=4096)
def _network(cidr: str):
    return ipaddress.ip_network(cidr, strict=False)


def address_in(address, cidrs) -> bool:
    """Whether `address` (an `ipaddress` object, or None: never) lies in one of `cidrs`
    (addresses or CIDRs as strings, each parsed once per process): the check of every
    allowlist (API keys, /metrics) and of TRUSTED_PROXIES."""
    return address is not None and any(
        address in network for network in map(_network, cidrs) if network.version == address.version
    )


class _Hops:
    """A request-like object holding one X-Forwarded-For value, for ipware's parser."""

    def __init__(self, header: str):
        self.META = {"HTTP_X_FORWARDED_FOR": header}


def client_address(request):
    """The client's address as an `ipaddress` object, or None when there is none."""
    try:
        peer = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return None
    if getattr(peer, "ipv4_mapped", None):
        peer = peer.ipv4_mapped
    if not address_in(peer, settings.TRUSTED_PROXIES):
        return peer
    header = request.META.get("HTTP_X_FORWARDED_FOR", "").strip()
    if not header:
        return peer
    # Only the right-most hop, the one our proxy wrote: ipware would skip an unparsable last hop
    # ("1.2.3.4, unknown") and take the client-written one before it.
    last_hop = _Hops(header.rsplit(",", 1)[-1])
    forwarded, _ = get_client_ip(
        last_hop, request_header_order=["HTTP_X_FORWARDED_FOR"], proxy_count=0, strict=False
    )
    if forwarded is None:
        return None
    address = ipaddress.ip_address(forwarded)
    return getattr(address, "ipv4_mapped", None) or address
