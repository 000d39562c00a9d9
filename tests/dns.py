"""A DNS server on loopback, for the tests of name resolution (`core.outbound.resolver`): UDP on
127.0.0.1, a port the system picks, answering from `records` in a thread of its own. No test
asks the machine's own nameservers: `use(monkeypatch)` makes this process's resolver ask this
server only (with a cache of its own, empty).

- `records[name]`: the addresses of `name` and their TTL (A and AAAA answered from them; a name
  without an address of the family asked is answered with no record, NOERROR);
- a name not in `records` is NXDOMAIN;
- a name in `silent` is never answered (a slow zone): the resolver waits out its lifetime;
- `queries`: every question received, `(name, type)`, in order.
"""

import contextlib
import socket
import threading
from dataclasses import dataclass, field

import dns.message
import dns.rcode
import dns.rdatatype
import dns.rrset

from core.outbound import resolver


@dataclass
class Records:
    addresses: list[str]
    ttl: int = 300


@dataclass
class DNSServer:
    records: dict[str, Records] = field(default_factory=dict)
    silent: set[str] = field(default_factory=set)
    queries: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self):
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        self._stopped = threading.Event()
        self._asked = threading.Condition()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        self._socket.settimeout(0.1)
        while not self._stopped.is_set():
            try:
                wire, client = self._socket.recvfrom(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            query = dns.message.from_wire(wire)
            question = query.question[0]
            name = question.name.to_text(omit_final_dot=True).lower()
            kind = dns.rdatatype.to_text(question.rdtype)
            with self._asked:
                self.queries.append((name, kind))
                self._asked.notify_all()
            if name in self.silent:
                continue
            response = dns.message.make_response(query)
            records = self.records.get(name)
            if records is None:
                response.set_rcode(dns.rcode.NXDOMAIN)
            else:
                family = ":" if kind == "AAAA" else "."
                found = [a for a in records.addresses if family in a]
                if found:
                    response.answer.append(
                        dns.rrset.from_text_list(question.name, records.ttl, "IN", kind, found)
                    )
            self._socket.sendto(response.to_wire(), client)

    def resolver(self, **options) -> resolver.Resolver:
        """A resolver that asks this server only (`options`: the Resolver's others)."""
        return resolver.Resolver(nameservers=[("127.0.0.1", self.port)], **options)

    def questions(self, name: str) -> int:
        return sum(1 for asked, _ in self.queries if asked == name)

    def wait_for(self, name: str, count: int, timeout: float = 10) -> None:
        """Return once `name` has been asked `count` times."""
        with self._asked:
            assert self._asked.wait_for(lambda: self.questions(name) >= count, timeout)

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(5)
        self._socket.close()


@contextlib.contextmanager
def serving():
    server = DNSServer()
    try:
        yield server
    finally:
        server.stop()


def use(monkeypatch, server: DNSServer, **options) -> resolver.Resolver:
    """This process's resolver (`core.outbound.resolver.default`) asks `server`, from an empty
    cache, for the rest of the test."""
    installed = server.resolver(**options)
    monkeypatch.setattr(resolver, "_default", installed)
    return installed
