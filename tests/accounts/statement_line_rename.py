"""The model `Transaction` became `StatementLine` (issue 30,
accounts/migrations/0026_statement_line.py): the table and its rows stay, and what carries the
model's name follows it. Its content type is the same row, renamed, and so are its
permissions: a staff role or a user that held `view_transaction` before the upgrade holds
`view_statementline` after it, and still sees the statement lines in the admin. Forth, back and
forth again, with the real migration executor: a part of the upgrade walk of
tests/test_migrations_forward.py (its database made at the release before, the migration to the
latest shared with the other upgrades)."""

from types import SimpleNamespace

from django.contrib import admin
from django.contrib.auth.models import Group, Permission, User
from django.contrib.contenttypes.models import ContentType

from accounts.models import StatementLine
from tests.backoffice.helpers import request_of
from tests.own_database import just_before, made_at, migrate

RENAME = ("accounts", "0026_statement_line")
ACTIONS = ("add", "change", "delete", "view")
ROLES = ["support", "operations", "compliance"]


def codenames_of(content_type_id: int) -> set[str]:
    return set(
        Permission.objects.filter(content_type_id=content_type_id).values_list(
            "codename", flat=True
        )
    )


def written_before_the_rename() -> SimpleNamespace:
    """The database taken to the release before the rename (as its `migrate` left it), its
    roles checked and a user given the old permission directly, as a bank's staff may have
    been."""
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
    auditor = old.get_model("auth", "User").objects.create(username="auditor", is_staff=True)
    auditor.user_permissions.add(view)
    return SimpleNamespace(before=before, view_id=view.pk, content_type_id=content_type.pk)


def renamed_forth_and_back(staff: SimpleNamespace) -> None:
    """The rename, and back: the same rows carry the new names, then the old ones again."""
    migrate([RENAME])
    assert codenames_of(staff.content_type_id) == {f"{a}_statementline" for a in ACTIONS}
    migrate(staff.before)
    assert ContentType.objects.get(pk=staff.content_type_id).model == "transaction"
    assert codenames_of(staff.content_type_id) == {f"{a}_transaction" for a in ACTIONS}


def checked_after(staff: SimpleNamespace) -> None:
    """At the latest migrations: the same content type and permissions, renamed; the roles and
    the user hold them."""
    content_type = ContentType.objects.get_for_model(StatementLine)
    assert (content_type.pk, content_type.app_label, content_type.model) == (
        staff.content_type_id,
        "accounts",
        "statementline",
    )
    assert codenames_of(content_type.pk) == {f"{action}_statementline" for action in ACTIONS}
    assert not Permission.objects.filter(codename__endswith="_transaction").exists()
    view = Permission.objects.get(pk=staff.view_id)
    assert view.codename == "view_statementline"
    assert view.name == "Can view transaction"  # what staff read is unchanged
    for name in ROLES:
        assert Group.objects.get(name=name).permissions.filter(pk=view.pk).exists()
    auditor = User.objects.get(username="auditor")
    assert auditor.has_perm("accounts.view_statementline")
    assert admin.site.get_model_admin(StatementLine).has_view_permission(request_of(auditor))
    assert StatementLine._meta.verbose_name_plural == "transactions"  # the admin's title
