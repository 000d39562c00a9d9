"""The host that last accepted a connection is tried first.

psycopg 3 tries the hosts of a multi-host DATABASE_URL (`host=a,b,c`) one after the other, in
the order written, and with `target_session_attrs=read-write` it opens a whole session on a
standby before it finds it read-only and goes on to the next host. After a failover the old
primary rejoins as a standby, often first in that order: every new connection would then be
opened and refused there first. `PrimaryFirstConnection` remembers, per host list and per
process, the host (and port) that accepted the last connection, and puts it first; after the
next failover that host refuses once, the next one accepts and is remembered. The order written
is kept for the others. libpq's `load_balance_hosts=random` would only spread the refusals.
"""

import psycopg

# (the host list as written, its ports as written) -> (host, port) of the last host that accepted
_accepted: dict[tuple[str, str], tuple[str, str]] = {}


def _split(value) -> list[str]:
    return [part.strip() for part in str(value or "").split(",")]


def _key(params: dict) -> tuple[str, str]:
    return str(params["host"]), str(params.get("port") or "")


def primary_first(params: dict) -> dict:
    """`params` (psycopg connection keywords) with the last host that accepted first."""
    hosts = _split(params.get("host"))
    if len(hosts) < 2 or params.get("hostaddr"):
        return params
    remembered = _accepted.get(_key(params))
    if remembered is None:
        return params
    ports = _split(params.get("port"))
    paired = len(ports) == len(hosts)  # else one port (or none) for every host
    host, port = remembered
    found = [
        index
        for index, name in enumerate(hosts)
        if name == host and (not paired or ports[index] == port)
    ]
    if not found or found[0] == 0:
        return params
    order = [found[0], *(index for index in range(len(hosts)) if index != found[0])]
    reordered = {**params, "host": ",".join(hosts[index] for index in order)}
    if paired:
        reordered["port"] = ",".join(ports[index] for index in order)
    return reordered


def remember(params: dict, connection) -> None:
    """Note the host (and port) of `connection`, opened with `params`, when it had a choice."""
    if len(_split(params.get("host"))) < 2:
        return
    _accepted[_key(params)] = (connection.info.host, str(connection.info.port))


class PrimaryFirstConnection(psycopg.Connection):
    """psycopg's connection, opened on the last host that accepted first (the pool's
    `connection_class`: settings, `OPTIONS["pool"]`)."""

    @classmethod
    def connect(cls, conninfo: str = "", **kwargs):
        connection = super().connect(conninfo, **primary_first(kwargs))
        remember(kwargs, connection)
        return connection
