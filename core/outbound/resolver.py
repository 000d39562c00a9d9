"""Name resolution of outbound calls (webhook deliveries, decisioning endpoints; issue 46, H6):
on the caller's own thread, within the caller's time left, with a cache of each name's
addresses.

**Why not the system resolver.** `getaddrinfo` has no timeout (the system resolver's own retries
take tens of seconds), so a caller that must not wait longer than its deadline had to resolve on
another thread and stop waiting for it. The lookup went on there: one pool of 4 such threads per
process served every tenant, and a tenant whose endpoint's name sits in a slow DNS zone kept
them busy while every other tenant's lookups waited in the pool's queue and timed out (review
C, H6). Here dnspython asks the nameservers of /etc/resolv.conf itself, with a `lifetime` that
is the caller's time left: the lookup ends when its caller stops waiting, on the caller's
thread, and nothing outlives it. A slow zone costs only the calls to that name, each within its
own deadline, on threads its institution's bounds already count (decisioning.calls, the
webhooks' delivery slots). There is nothing shared left to bound per institution.

**What a name resolves to**, in the system's `hosts: files dns` order:

1. an IP literal is its own address, nothing resolved: an IPv6 address (a zone id kept), or what
   `inet_aton` reads as IPv4 (`127.0.0.1`, and `2130706433`, `0x7f000001`, `127.1`, as
   getaddrinfo reads them too);
2. a name of /etc/hosts: the addresses written there (the file read again when it changes);
3. `localhost` and names under `.localhost`: loopback (RFC 6761, 6.3), never asked of DNS;
4. otherwise DNS: A, then AAAA (A only where the caller wants IPv4), the search list and
   `ndots` of resolv.conf applied as the system resolver applies them. IPv4 addresses come
   first.

**The cache** (per process, at most CACHE_SIZE names, the least recently used dropped first):
a name's DNS addresses are kept for their TTL (the shortest along the answer's CNAME chain),
at least MIN_TTL and at most MAX_TTL seconds; a name that has no address (NXDOMAIN, no A or
AAAA record) is remembered for NEGATIVE_TTL seconds. A timeout or a failing nameserver is not
cached: it is the caller's deadline that ended, and a caller with more time may get the answer.
The cache takes nothing from the address rules: a connection's peer address is judged when it
connects (`core.outbound.transport`), whatever the lookup said.

Errors: `socket.gaierror` when the name has no address (or is not a valid name), TimeoutError
when the time ran out, the errors OSError covers: what `getaddrinfo` and its callers raised.
"""

import ipaddress
import os
import re
import socket
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import dns.exception
import dns.name
import dns.nameserver
import dns.rdatatype
import dns.resolver

MIN_TTL = 5.0
MAX_TTL = 300.0
NEGATIVE_TTL = 5.0
CACHE_SIZE = 4096
HOSTS = Path("/etc/hosts")

# Characters of an IPv4 address in any form inet_aton reads (decimal, octal, hex; 1 to 4 parts).
_INET_ATON = re.compile(r"[0-9a-fA-FxX.]+")
_LOOPBACK = {socket.AF_INET: ["127.0.0.1"], socket.AF_INET6: ["::1"]}


def _literal(host: str) -> str | None:
    """The address `host` is when it is an IP literal, else None."""
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    if _INET_ATON.fullmatch(host):
        try:
            return socket.inet_ntoa(socket.inet_aton(host))
        except OSError:
            return None
    return None


def _family(address: str) -> int:
    return socket.AF_INET6 if ":" in address else socket.AF_INET


def _wanted(addresses, family: int) -> list[str]:
    return [a for a in addresses if family == socket.AF_UNSPEC or _family(a) == family]


def _no_address(host: str) -> socket.gaierror:
    return socket.gaierror(socket.EAI_NONAME, f"{host!r} has no address")


@dataclass(frozen=True)
class _Entry:
    addresses: tuple[str, ...]  # empty: the name has no address
    expires: float  # the resolver's clock


class _HostsFile:
    """/etc/hosts as a table of names, read again when its modification time or size changes
    (one stat per lookup of a name that is not a literal)."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        self._stamp: tuple | None = None
        self._names: dict[str, list[str]] = {}

    def get(self, name: str) -> list[str] | None:
        try:
            stat = os.stat(self.path)
            stamp = (stat.st_mtime_ns, stat.st_size)
        except OSError:
            return None
        with self._lock:
            if stamp != self._stamp:
                self._names = self._read()
                self._stamp = stamp
            return self._names.get(name)

    def _read(self) -> dict[str, list[str]]:
        names: dict[str, list[str]] = {}
        try:
            text = self.path.read_text(errors="replace")
        except OSError:
            return names
        for line in text.splitlines():
            fields = line.split("#", 1)[0].split()
            if len(fields) < 2:
                continue
            try:
                address = str(ipaddress.ip_address(fields[0]))
            except ValueError:
                continue
            for name in fields[1:]:
                addresses = names.setdefault(name.lower().rstrip("."), [])
                if address not in addresses:
                    addresses.append(address)
        return names


class Resolver:
    """One process's resolver (module docstring). `nameservers`: (address, port) pairs to ask
    instead of those of /etc/resolv.conf (and then no search list: names are asked as they
    are); `clock`: what the cache's times are read from."""

    def __init__(
        self,
        *,
        nameservers: list[tuple[str, int]] | None = None,
        hosts: Path = HOSTS,
        clock=time.monotonic,
        cache_size: int = CACHE_SIZE,
    ):
        if nameservers is None:
            self._dns = dns.resolver.Resolver()
        else:
            self._dns = dns.resolver.Resolver(configure=False)
            self._dns.domain, self._dns.search = dns.name.root, []
            self._dns.nameservers = [
                dns.nameserver.Do53Nameserver(address, port) for address, port in nameservers
            ]
        self._dns.cache = None  # ours, below: TTLs bounded, failures kept briefly
        self._hosts = _HostsFile(hosts)
        self._clock = clock
        self._size = cache_size
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, int], _Entry] = OrderedDict()
        self.pid = os.getpid()

    def addresses(self, host: str, *, timeout: float, family: int = socket.AF_UNSPEC) -> list[str]:
        """The addresses `host` resolves to (of `family`: AF_INET, AF_INET6 or AF_UNSPEC),
        within `timeout` seconds. Raises socket.gaierror (no address), TimeoutError."""
        literal = _literal(host)
        if literal is not None:
            if not _wanted([literal], family):
                raise _no_address(host)
            return [literal]
        name = host.lower().rstrip(".")
        written = self._hosts.get(name)
        if written is None and (name == "localhost" or name.endswith(".localhost")):
            written = _LOOPBACK[socket.AF_INET] + _LOOPBACK[socket.AF_INET6]
        if written is not None:
            found = _wanted(written, family)
            if not found:
                raise _no_address(host)
            return found
        key = (name, family)
        now = self._clock()
        with self._lock:
            entry = self._cache.get(key)
            if entry is not None and entry.expires > now:
                self._cache.move_to_end(key)
                if not entry.addresses:
                    raise _no_address(host)
                return list(entry.addresses)
        if timeout <= 0:
            raise TimeoutError("no time left to resolve the host")
        addresses, ttl = self._ask(name, family, deadline=time.monotonic() + timeout)
        if ttl is not None:
            self._keep(key, _Entry(tuple(addresses), self._clock() + ttl))
        if not addresses:
            raise _no_address(host)
        return addresses

    def _ask(self, name: str, family: int, *, deadline: float) -> tuple[list[str], float | None]:
        """DNS's addresses of `name`, and how long to keep them (None: not to be kept)."""
        kinds = {
            socket.AF_INET: [dns.rdatatype.A],
            socket.AF_INET6: [dns.rdatatype.AAAA],
        }.get(family, [dns.rdatatype.A, dns.rdatatype.AAAA])
        addresses: list[str] = []
        ttls: list[float] = []
        for kind in kinds:
            left = deadline - time.monotonic()
            if left <= 0:
                if addresses:  # what came in time; not kept, the other family is missing
                    return addresses, None
                raise TimeoutError("no time left to resolve the host")
            try:
                answer = self._dns.resolve(name, kind, search=True, lifetime=left)
            except dns.resolver.NXDOMAIN:
                return [], NEGATIVE_TTL  # no such name: none of the other kind either
            except dns.resolver.NoAnswer:
                continue
            except dns.exception.Timeout:
                if addresses:
                    return addresses, None
                raise TimeoutError("the host did not resolve in time") from None
            except dns.resolver.NoNameservers as error:
                # Every nameserver failed (SERVFAIL, refused): transient, not kept.
                if addresses:
                    return addresses, None
                raise socket.gaierror(socket.EAI_AGAIN, "no nameserver answered") from error
            except (dns.exception.DNSException, ValueError, UnicodeError) as error:
                # Not a valid name (an empty label, too long, bad IDNA): it has no address.
                raise _no_address(name) from error
            addresses += [rdata.address for rdata in answer]
            ttls.append(answer.expiration - time.time())
        if not addresses:
            return [], NEGATIVE_TTL
        return addresses, min(MAX_TTL, max(MIN_TTL, min(ttls)))

    def _keep(self, key: tuple[str, int], entry: _Entry) -> None:
        with self._lock:
            self._cache[key] = entry
            self._cache.move_to_end(key)
            while len(self._cache) > self._size:
                self._cache.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()


_default: Resolver | None = None
_default_lock = threading.Lock()


def default() -> Resolver:
    """This process's resolver (made again in a forked child: a cache is per process)."""
    global _default
    with _default_lock:
        if _default is None or _default.pid != os.getpid():
            _default = Resolver()
        return _default


def addresses(host: str, *, timeout: float, family: int = socket.AF_UNSPEC) -> list[str]:
    """`Resolver.addresses` of this process's resolver."""
    return default().addresses(host, timeout=timeout, family=family)
