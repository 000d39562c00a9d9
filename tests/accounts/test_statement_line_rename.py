"""The model `Transaction` became `StatementLine` (issue 30,
accounts/migrations/0026_statement_line.py): the table and its rows stay, and what carries the
model's name follows it. Its content type is the same row, renamed, and so are its
permissions: a staff role or a user that held `view_transaction` before the upgrade holds
`view_statementline` after it, and still sees the statement lines in the admin. Forth, back and
forth again, with the real migration executor, in a database made at the release before
(tests/own_database.py)."""

import pytest
from django.contrib import admin
from django.contrib.auth.models import Group, Permission, User
from django.contrib.contenttypes.models import ContentType

from accounts.models import StatementLine
from tests.backoffice.helpers import request_of
from tests.own_database import just_before, made_at, migrate, migrate_to_latest

RENAME = ("accounts", "0026_statement_line")
ACTIONS = ("add", "change", "delete", "view")
ROLES = ["support", "operations", "compliance"]


def codenames_of(content_type_id: int) -> set[str]:
    return set(
        Permission.objects.filter(content_type_id=content_type_id).values_list(
            "codename", flat=True
        )
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("own_database")
def test_the_staff_keep_their_permissions_through_the_rename():
    before = just_before(RENAME)
    assert ("accounts", "0025_balances_in_range") in before
    old = made_at(before)
    OldPermission = old.get_model("auth", "Permission")
    view = OldPermission.objects.get(codename="view_transaction")
    content_type = view.content_type
    assert (content_type.app_label, content_type.model) == ("accounts", "transaction")
    assert codenames_of(content_type.pk) == {f"{action}_transaction" for action in ACTIONS}
    OldGroup = old.get_model("auth", "Group")
    for name in ROLES:  # the roles of institutions/0003 hold it
        assert OldGroup.objects.get(name=name).permissions.filter(pk=view.pk).exists()
    # A user given the old permission directly, as a bank's staff may have been.
    auditor = old.get_model("auth", "User").objects.create(username="auditor", is_staff=True)
    auditor.user_permissions.add(view)

    # The rename, and back: the same rows carry the new names, then the old ones again.
    migrate([RENAME])
    assert codenames_of(content_type.pk) == {f"{action}_statementline" for action in ACTIONS}
    migrate(before)
    assert ContentType.objects.get(pk=content_type.pk).model == "transaction"
    assert codenames_of(content_type.pk) == {f"{action}_transaction" for action in ACTIONS}

    migrate_to_latest()
    content_type = ContentType.objects.get_for_model(StatementLine)
    assert (content_type.pk, content_type.app_label, content_type.model) == (
        view.content_type_id,
        "accounts",
        "statementline",
    )
    assert codenames_of(content_type.pk) == {f"{action}_statementline" for action in ACTIONS}
    assert not Permission.objects.filter(codename__endswith="_transaction").exists()
    view = Permission.objects.get(pk=view.pk)
    assert view.codename == "view_statementline"
    assert view.name == "Can view transaction"  # what staff read is unchanged
    for name in ROLES:
        assert Group.objects.get(name=name).permissions.filter(pk=view.pk).exists()
    auditor = User.objects.get(username="auditor")
    assert auditor.has_perm("accounts.view_statementline")
    assert admin.site.get_model_admin(StatementLine).has_view_permission(request_of(auditor))
    assert StatementLine._meta.verbose_name_plural == "transactions"  # the admin's title
