"""A database of the test's own, made at an old release by migrating forward from empty: what
a bank that installed that release has.

The migration tests used to take the test database back to the release before a migration:
that unapplies, and then applies again, every migration made since (each one dearer as the
schema grows: 38 s to take the test database back to accounts/0025 at 55dc457, against 4 s to
migrate an empty one forward to it). Here the default connection points at an empty database
beside the test database for the test (the migrations' code uses the default alias), and is
pointed back, the other dropped, after it.

`made_at(targets)` migrates forward and then does what `manage.py migrate` does after its
migrations: post_migrate with the historical models of that schema (the content types and
permissions of the models as they were then), so an upgrade's rows are the rows an upgraded
bank has. `migrate_to_latest()` ends the same way, with the cache table the settings use.
"""

import pytest
from django.apps import apps as global_apps
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.core.management.sql import emit_post_migrate_signal
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.models.signals import post_migrate

from tests import template_database


@pytest.fixture
def own_database(django_db_modify_db_settings, django_db_blocker):
    """The default connection on an empty database beside the test database, then back, the
    other dropped. It needs no test database: a test that asks only for it (no `django_db`
    mark) does not wait for the template (tests/template_database.py), so in a run of two
    workers the upgrade walk migrates on one core while the template is built on the other."""
    name = f"{connection.creation._get_test_db_name()}_own"
    with django_db_blocker.unblock():
        with template_database.server_of(connection) as server:
            server.execute(f'DROP DATABASE IF EXISTS "{name}"')
            server.execute(f'CREATE DATABASE "{name}"')
        try:
            with template_database.pointed_at(connection, name):
                yield
        finally:
            ContentType.objects.clear_cache()  # its ids were the other database's
            with template_database.server_of(connection) as server:
                server.execute(f'DROP DATABASE IF EXISTS "{name}"')


def migrate(targets):
    """The real migration executor to `targets`; returns the project state it reached."""
    executor = MigrationExecutor(connection)
    state = executor.migrate(targets)
    ContentType.objects.clear_cache()
    return state


def just_before(node: tuple[str, str]) -> list[tuple[str, str | None]]:
    """The targets of the release before `node`: per app, its latest migration that does not
    depend on `node` (None: the app had none)."""
    graph = MigrationExecutor(connection).loader.graph
    after = set(graph.backwards_plan(node))
    targets = []
    for app in sorted({app for app, _ in after}):
        first = min(name for label, name in after if label == app)
        parents = [p.key for p in graph.node_map[(app, first)].parents if p.key[0] == app]
        targets.append((app, parents[0][1] if parents else None))
    return targets + [leaf for leaf in graph.leaf_nodes() if leaf[0] not in {a for a, _ in after}]


def made_at(targets):
    """Migrate to `targets` as `manage.py migrate` of that release did; returns the historical
    models (a `StateApps`). post_migrate goes to every app of that schema, the apps whose
    models have since moved away included (they had models then)."""
    apps = migrate(targets).apps
    for app_config in apps.get_app_configs():
        try:
            sender = global_apps.get_app_config(app_config.label)
        except LookupError:
            sender = None
        if sender is None or sender.models_module is None:
            sender = _AppOfThen(app_config.label)
        post_migrate.send(
            sender=sender,
            app_config=sender,
            verbosity=0,
            interactive=False,
            using=connection.alias,
            apps=apps,
            plan=None,
        )
    return apps


class _AppOfThen:
    """post_migrate's sender for an app that had models then and has none now."""

    models_module = True

    def __init__(self, label: str):
        self.label = self.name = label


def migrate_to_latest() -> None:
    """Migrate to the latest migrations as `manage.py migrate` does, and make the cache table."""
    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
    emit_post_migrate_signal(0, False, connection.alias)
    ContentType.objects.clear_cache()
    call_command("createcachetable", verbosity=0)
