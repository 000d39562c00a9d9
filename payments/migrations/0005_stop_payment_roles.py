"""The staff roles (payments/migrations/0003_staff_roles.py) on stop payments: every role views
them; none adds, changes or deletes one (a customer's stop is made and cancelled through the
API)."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

ROLES = ("support", "operations", "compliance")


def grant(apps, schema_editor):
    app_config = apps.get_app_config("payments")
    app_config.models_module = True
    create_permissions(app_config, verbosity=0, apps=apps)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permission = Permission.objects.get(
        content_type__app_label="payments", codename="view_stoppayment"
    )
    for group in Group.objects.filter(name__in=ROLES):
        group.permissions.add(permission)


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permissions = Permission.objects.filter(
        content_type__app_label="payments", codename="view_stoppayment"
    )
    for group in Group.objects.filter(name__in=ROLES):
        group.permissions.remove(*permissions)


class Migration(migrations.Migration):
    dependencies = [("payments", "0004_stop_payments")]

    operations = [migrations.RunPython(grant, revoke)]
