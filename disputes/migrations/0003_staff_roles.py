"""The staff roles (institutions/migrations/0003_staff_roles.py) on disputes: every role views a
dispute whole (its steps and deadlines too); `operations` moves them (the admin's actions
require `change_dispute`: submit, deny, withdraw, accept a loss). No role adds or deletes one:
disputes are filed through the API."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

VIEW = ("view_dispute", "view_disputestep", "view_disputedeadline")
ROLES = {
    "support": VIEW,
    "operations": (*VIEW, "change_dispute"),
    "compliance": VIEW,
}


def grant(apps, schema_editor):
    app_config = apps.get_app_config("disputes")
    app_config.models_module = True
    create_permissions(app_config, verbosity=0, apps=apps)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, codenames in ROLES.items():
        permissions = Permission.objects.filter(
            content_type__app_label="disputes", codename__in=codenames
        )
        for group in Group.objects.filter(name=name):
            group.permissions.add(*permissions)


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permissions = Permission.objects.filter(content_type__app_label="disputes")
    for group in Group.objects.filter(name__in=ROLES):
        group.permissions.remove(*permissions)


class Migration(migrations.Migration):
    dependencies = [
        ("disputes", "0002_deadlines"),
        ("institutions", "0003_staff_roles"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
