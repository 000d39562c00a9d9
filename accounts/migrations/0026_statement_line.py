"""Statement lines have one name (issue 30): the model `Transaction` is `StatementLine`. Only
Django's state changes: the table keeps its name (`transactions_transaction`, `db_table`), no
foreign key points at it, and staff still read "transactions" in the admin (`verbose_name`). The
account's reverse accessor is `statement_lines`, as every other model's (no SQL either).

What follows the model's name outside the schema: its content type (`accounts.transaction` ->
`accounts.statementline`: admin history follows) and its permissions' codenames
(`view_transaction` -> `view_statementline`, ...), renamed in place so that every group and user
holding one (the staff roles, institutions/migrations/0003_staff_roles.py) holds the new one.
`migrate` renames the content type itself too (Django's `RenameContentType`, injected after
`RenameModel`); the step below does it when migrations run without that command.
"""

import django.db.models.deletion
from django.db import migrations, models

ACTIONS = ("add", "change", "delete", "view")
# (app label, old codename) -> (app label, new codename): what a list of permissions written
# before this migration (the staff roles') names now.
PERMISSIONS_RENAMED = {
    ("accounts", f"{action}_transaction"): ("accounts", f"{action}_statementline")
    for action in ACTIONS
}


def _rename(apps, old: str, new: str) -> None:
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    Group = apps.get_model("auth", "Group")
    User = apps.get_model("auth", "User")
    if not ContentType.objects.filter(app_label="accounts", model=new).exists():
        ContentType.objects.filter(app_label="accounts", model=old).update(model=new)
    content_type = ContentType.objects.filter(app_label="accounts", model=new).first()
    if content_type is None:
        return  # a database whose content types were never made: nothing refers to them
    for action in ACTIONS:
        was = Permission.objects.filter(content_type=content_type, codename=f"{action}_{old}")
        now = Permission.objects.filter(content_type=content_type, codename=f"{action}_{new}")
        old_permission, new_permission = was.first(), now.first()
        if old_permission is None:
            continue
        if new_permission is None:
            # The same row: its groups and users hold it under the new codename.
            was.update(codename=f"{action}_{new}")
            continue
        # Both exist (permissions made meanwhile): the holders of the old one move to the new.
        for group in Group.objects.filter(permissions=old_permission):
            group.permissions.add(new_permission)
        for user in User.objects.filter(user_permissions=old_permission):
            user.user_permissions.add(new_permission)
        old_permission.delete()


def names_follow(apps, schema_editor):
    _rename(apps, "transaction", "statementline")


def names_go_back(apps, schema_editor):
    _rename(apps, "statementline", "transaction")


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0025_balances_in_range"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        # The staff roles hold `view_transaction` before the rename.
        ("institutions", "0003_staff_roles"),
    ]

    operations = [
        migrations.RenameModel(old_name="Transaction", new_name="StatementLine"),
        migrations.AlterModelOptions(
            name="statementline",
            options={"ordering": ["-id"], "verbose_name": "transaction"},
        ),
        migrations.AlterField(
            model_name="statementline",
            name="account",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="statement_lines",
                to="accounts.account",
            ),
        ),
        migrations.RunPython(names_follow, names_go_back, elidable=False),
    ]
