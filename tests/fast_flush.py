"""A cheaper flush after each transactional test (`django_db(transaction=True)`).

Django's flush truncates every table, content types and permissions included, then emits
post_migrate, which writes every content type and permission again, one app at a time: about
three quarters of the flush's time, after every transactional test. Here the two tables are
left out of the TRUNCATE when the test left them exactly as it found them (same rows, same
values: a fingerprint taken before the test and compared after it); post_migrate is still
emitted, as Django's flush does, and finds them all in place. A test that changed either table
(a permission made by hand) gets Django's own flush.
And only the tables that hold a row are truncated (with CASCADE): a TRUNCATE costs per table.

The staff roles the migrations made (the groups and their permissions, institutions/0003 and
those after it) are kept the same way, and given back (`restore_roles`) after Django's own
flush: a test reading the roles does not depend on whether a transactional test ran before it
in its process (tests/backoffice/test_roles.py after tests/backoffice/test_upgrade.py failed).

Everything else is as `TransactionTestCase._fixture_teardown`: the same databases, every other
table emptied (sequences not reset), the same signal; tests with `available_apps` or
`serialized_rollback` get Django's own flush.
"""

from django.core.management.color import no_style
from django.core.management.sql import emit_post_migrate_signal
from django.db import connections
from django.test import TransactionTestCase

KEPT = ("django_content_type", "auth_permission", "auth_group", "auth_group_permissions")
# procrastinate's tables belong to no managed model, so no flush empties them: a job a
# transactional test deferred (a webhook's delivery, say) would be the next test's.
JOB_TABLES = (
    "procrastinate_jobs",
    "procrastinate_events",
    "procrastinate_periodic_defers",
    "procrastinate_workers",
)

_django_fixture_setup = TransactionTestCase._fixture_setup
_django_fixture_teardown = TransactionTestCase._fixture_teardown


def _fingerprint(connection) -> tuple[str, ...] | None:
    """An md5 of every row of the kept tables, in id order; None if it cannot be read."""
    try:
        with connection.cursor() as cursor:
            digests = []
            for table in KEPT:
                cursor.execute(
                    f"SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY t.id), '')) "  # noqa: S608 (fixed table names)
                    f"FROM {connection.ops.quote_name(table)} t"
                )
                digests.append(cursor.fetchone()[0])
            return tuple(digests)
    except Exception:  # noqa: BLE001 (no fingerprint: Django's own flush)
        return None


def _plain(cls) -> bool:
    return cls.available_apps is None and not cls.serialized_rollback


@classmethod
def _fixture_setup(cls):
    _django_fixture_setup.__func__(cls)
    cls._kept_fingerprints = (
        {name: _fingerprint(connections[name]) for name in cls._databases_names(False)}
        if _plain(cls)
        else {}
    )


def _fixture_teardown(self):
    _jobs_flush(self)
    before = getattr(self, "_kept_fingerprints", {})
    names = list(self._databases_names(include_mirrors=False))
    if not _plain(self) or any(
        before.get(name) is None or _fingerprint(connections[name]) != before[name]
        for name in names
    ):
        _django_fixture_teardown(self)
        if "default" in names:
            from tests.backoffice.helpers import restore_roles  # noqa: PLC0415 (it imports conftest)

            restore_roles()
        return
    for name in names:
        connection = connections[name]
        tables = [
            table
            for table in connection.introspection.django_table_names(
                only_existing=True, include_views=False
            )
            if table not in KEPT
        ]
        connection.ops.execute_sql_flush(
            connection.ops.sql_flush(
                no_style(),
                _with_rows(connection, tables),
                reset_sequences=False,
                allow_cascade=True,
            )
        )
        if tables:
            emit_post_migrate_signal(0, False, name)


def _with_rows(connection, tables: list[str]) -> list[str]:
    """The tables that hold a row: only those are truncated (CASCADE takes whatever refers to
    them, empty or not). One query; most tests write to a dozen of the hundred tables."""
    if not tables:
        return []
    query = " UNION ALL ".join(
        f"(SELECT %s::text WHERE EXISTS (SELECT 1 FROM {connection.ops.quote_name(table)}))"  # noqa: S608 (Django's own table names)
        for table in tables
    )
    with connection.cursor() as cursor:
        cursor.execute(query, tables)
        return [row[0] for row in cursor.fetchall()]


def install() -> None:
    TransactionTestCase._fixture_setup = _fixture_setup
    TransactionTestCase._fixture_teardown = _fixture_teardown


def _jobs_flush(test) -> None:
    """Empty procrastinate's tables that hold a row (CASCADE), in every database the test
    used, whichever flush follows."""
    for name in test._databases_names(include_mirrors=False):
        connection = connections[name]
        existing = set(connection.introspection.table_names())
        tables = _with_rows(connection, [table for table in JOB_TABLES if table in existing])
        if tables:
            connection.ops.execute_sql_flush(
                connection.ops.sql_flush(
                    no_style(), tables, reset_sequences=False, allow_cascade=True
                )
            )
