"""The staff roles on the breaks' work (docs/reconciliation.md, "Breaks"): `operations` works
the breaks (notes, assignment, the resolutions: `change_reconciliationbreak`, which the actions
require); the others view them (0006_staff_roles_matching.py)."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

ROLES = ("operations",)
CHANGE = ("change_reconciliationbreak",)


def grant(apps, schema_editor):
    app_config = apps.get_app_config("reconciliation")
    app_config.models_module = True
    create_permissions(app_config, verbosity=0, apps=apps)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permissions = Permission.objects.filter(
        content_type__app_label="reconciliation", codename__in=CHANGE
    )
    for group in Group.objects.filter(name__in=ROLES):
        group.permissions.add(*permissions)


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permissions = Permission.objects.filter(
        content_type__app_label="reconciliation", codename__in=CHANGE
    )
    for group in Group.objects.filter(name__in=ROLES):
        group.permissions.remove(*permissions)


class Migration(migrations.Migration):
    dependencies = [("reconciliation", "0010_match_booked")]

    operations = [migrations.RunPython(grant, revoke)]
