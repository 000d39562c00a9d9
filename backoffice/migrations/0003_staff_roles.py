"""The staff roles (institutions/migrations/0003_staff_roles.py) on approval requests (four
eyes: docs/back-office.md): every role sees them; `compliance` decides them (the admin's
"Approve" and "Reject" require `change_approvalrequest`). Asking is an action on what the
request is about: `operations` asks for adjustments (an account action: `change_account`),
`compliance` for fee waivers (a fee action: `change_fee`). No role adds or deletes one."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

VIEW = ("view_approvalrequest",)
ROLES = {
    "support": VIEW,
    "operations": VIEW,
    "compliance": (*VIEW, "change_approvalrequest"),
}


def grant(apps, schema_editor):
    app_config = apps.get_app_config("backoffice")
    app_config.models_module = True
    create_permissions(app_config, verbosity=0, apps=apps)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, codenames in ROLES.items():
        permissions = Permission.objects.filter(
            content_type__app_label="backoffice", codename__in=codenames
        )
        for group in Group.objects.filter(name=name):
            group.permissions.add(*permissions)


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permissions = Permission.objects.filter(
        content_type__app_label="backoffice", codename__endswith="_approvalrequest"
    )
    for group in Group.objects.filter(name__in=ROLES):
        group.permissions.remove(*permissions)


class Migration(migrations.Migration):
    dependencies = [
        ("backoffice", "0002_approval_requests"),
        ("institutions", "0003_staff_roles"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
