"""Every staff role sees the institution's approval thresholds (docs/back-office.md, "Four
eyes": why a change waits for a second user); no role changes one: the bank's administrators
(superusers) set them."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

ROLES = ("support", "operations", "compliance")


def grant(apps, schema_editor):
    app_config = apps.get_app_config("backoffice")
    app_config.models_module = True
    create_permissions(app_config, verbosity=0, apps=apps)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permission = Permission.objects.get(
        content_type__app_label="backoffice", codename="view_approvalthreshold"
    )
    for group in Group.objects.filter(name__in=ROLES):
        group.permissions.add(permission)


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permissions = Permission.objects.filter(
        content_type__app_label="backoffice", codename__endswith="_approvalthreshold"
    )
    for group in Group.objects.filter(name__in=ROLES):
        group.permissions.remove(*permissions)


class Migration(migrations.Migration):
    dependencies = [("backoffice", "0004_approval_thresholds")]

    operations = [migrations.RunPython(grant, revoke)]
