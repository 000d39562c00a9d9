"""The model `Transaction` became `StatementLine` (issue 30,
accounts/migrations/0026_statement_line.py): the table and its rows stay, and what carries the
model's name follows it. Its content type is the same row, renamed, and so are its
permissions: a staff role or a user that held `view_transaction` before the upgrade holds
`view_statementline` after it, and still sees the statement lines in the admin. Back and
forth, with the real migration executor."""

import pytest
from django.contrib import admin
from django.contrib.auth.models import Group, Permission, User
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from accounts.models import StatementLine
from tests.backoffice.helpers import request_of, restore_roles

BEFORE = [("accounts", "0025_balances_in_range")]
ACTIONS = ("add", "change", "delete", "view")


def migrate(targets):
    executor = MigrationExecutor(connection)
    state = executor.migrate(targets)
    ContentType.objects.clear_cache()
    return state


def migrate_to_latest():
    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def codenames_of(content_type_id: int) -> set[str]:
    return set(
        Permission.objects.filter(content_type_id=content_type_id).values_list(
            "codename", flat=True
        )
    )


@pytest.mark.django_db(transaction=True)
def test_the_staff_keep_their_permissions_through_the_rename():
    restore_roles()  # an earlier transactional test may have emptied the tables
    content_type = ContentType.objects.get_for_model(StatementLine)
    assert (content_type.app_label, content_type.model) == ("accounts", "statementline")
    view = Permission.objects.get(content_type=content_type, codename="view_statementline")
    assert view.name == "Can view transaction"  # what staff read is unchanged
    roles = ["support", "operations", "compliance"]
    for name in roles:
        assert Group.objects.get(name=name).permissions.filter(pk=view.pk).exists()

    try:
        old = migrate(BEFORE).apps
        OldContentType = old.get_model("contenttypes", "ContentType")
        OldPermission = old.get_model("auth", "Permission")
        # Going back, the same rows carry the old names.
        assert OldContentType.objects.get(pk=content_type.pk).model == "transaction"
        assert OldPermission.objects.get(pk=view.pk).codename == "view_transaction"
        assert codenames_of(content_type.pk) == {f"{action}_transaction" for action in ACTIONS}
        # A user given the old permission directly, as a bank's staff may have been.
        auditor = old.get_model("auth", "User").objects.create(username="auditor", is_staff=True)
        auditor.user_permissions.add(OldPermission.objects.get(codename="view_transaction"))
    finally:
        migrate_to_latest()

    content_type = ContentType.objects.get_for_model(StatementLine)
    assert content_type.model == "statementline"
    assert codenames_of(content_type.pk) == {f"{action}_statementline" for action in ACTIONS}
    assert not Permission.objects.filter(codename__endswith="_transaction").exists()
    for name in roles:
        assert Group.objects.get(name=name).permissions.filter(pk=view.pk).exists()
    auditor = User.objects.get(username="auditor")
    assert auditor.has_perm("accounts.view_statementline")
    assert admin.site.get_model_admin(StatementLine).has_view_permission(request_of(auditor))
    assert StatementLine._meta.verbose_name_plural == "transactions"  # the admin's title
