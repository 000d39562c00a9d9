"""The staff roles on matching (docs/reconciliation.md, "The back office"): every role views the
expected payments, the reconciliation rules and the breaks; none adds, changes or deletes one
(the API and the runs write them)."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

ROLES = ("support", "operations", "compliance")
VIEW = ("view_expectedpayment", "view_reconciliationrule", "view_reconciliationbreak")


def grant(apps, schema_editor):
    app_config = apps.get_app_config("reconciliation")
    app_config.models_module = True
    create_permissions(app_config, verbosity=0, apps=apps)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permissions = Permission.objects.filter(
        content_type__app_label="reconciliation", codename__in=VIEW
    )
    for group in Group.objects.filter(name__in=ROLES):
        group.permissions.add(*permissions)


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permissions = Permission.objects.filter(
        content_type__app_label="reconciliation", codename__in=VIEW
    )
    for group in Group.objects.filter(name__in=ROLES):
        group.permissions.remove(*permissions)


class Migration(migrations.Migration):
    dependencies = [("reconciliation", "0005_matching")]

    operations = [migrations.RunPython(grant, revoke)]
