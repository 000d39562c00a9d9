"""Is a commit on the primary also on a standby before TX answers? Said once per process,
loudly when not (docs/deployment.md, "When the primary goes away").

With asynchronous replication a failover loses the commits the new primary had not received:
the issue 34 drill lost 478 of 5,431 acknowledged transfers with a 2-second lag, and
`verify_ledger` still passed. So each production process, at its first connection to the
primary, reads how the server replicates and logs an ERROR when standbys stream from it
without commits waiting for one. Not a readiness check: a primary whose synchronous standby
went away (Patroni then turns synchronous replication off, unless `synchronous_mode_strict`)
would take every app node out of its load balancer at once.

- "synchronous": `synchronous_standby_names` names standbys and `synchronous_commit` waits for
  them (on, remote_write, remote_apply);
- "asynchronous": standbys stream (`pg_stat_replication` has rows, visible to every role) and
  commits do not wait for them;
- "none": no standby at all (a single node): nothing to lose to a failover, nothing said.
"""

import logging

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError

logger = logging.getLogger("tx.database")

WAITING_COMMITS = {"on", "remote_write", "remote_apply"}

_SQL = (
    "SELECT current_setting('synchronous_standby_names'), current_setting('synchronous_commit'),"
    " (SELECT count(*) FROM pg_stat_replication)"
)

_checked = False


def replication_mode(standby_names: str, synchronous_commit: str, standbys: int) -> str:
    if standby_names.strip() and synchronous_commit in WAITING_COMMITS:
        return "synchronous"
    return "asynchronous" if standbys else "none"


def replication_read(connection) -> dict:
    with connection.cursor() as cursor:
        cursor.execute(_SQL)
        standby_names, synchronous_commit, standbys = cursor.fetchone()
    return {
        "mode": replication_mode(standby_names, synchronous_commit, standbys),
        "synchronous_standby_names": standby_names,
        "synchronous_commit": synchronous_commit,
        "standbys": standbys,
    }


def replication_check(sender, connection, **kwargs) -> None:
    """`connection_created` receiver (core.apps): the first connection of the process to the
    primary, with DATABASE_REPLICATION_CHECK on (production)."""
    global _checked
    if _checked or connection.alias != DEFAULT_DB_ALIAS or not settings.DATABASE_REPLICATION_CHECK:
        return
    _checked = True
    try:
        found = replication_read(connection)
    except DatabaseError:  # e.g. no permission to read a setting: the request goes on
        logger.warning("replication mode unknown: the check failed", exc_info=True)
        return
    if found["mode"] == "asynchronous":
        logger.error(
            "asynchronous replication: a failover loses the transfers its standbys had not "
            "received, acknowledged or not; make replication synchronous "
            "(docs/deployment.md, 'When the primary goes away')",
            extra={"replication": found},
        )
    else:
        logger.info("replication: %s", found["mode"], extra={"replication": found})
