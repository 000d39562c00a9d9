"""The staff roles (payments/migrations/0003_staff_roles.py) on SEPA's standing arrangements:
every role views the SEPA profiles and the mandates; none adds, changes or deletes one (a profile
is the operators' command's, a mandate the API's)."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

ROLES = ("support", "operations", "compliance")
VIEW = ("view_sepaprofile", "view_mandate")


def grant(apps, schema_editor):
    app_config = apps.get_app_config("payments")
    app_config.models_module = True
    create_permissions(app_config, verbosity=0, apps=apps)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permissions = Permission.objects.filter(content_type__app_label="payments", codename__in=VIEW)
    for group in Group.objects.filter(name__in=ROLES):
        group.permissions.add(*permissions)


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permissions = Permission.objects.filter(content_type__app_label="payments", codename__in=VIEW)
    for group in Group.objects.filter(name__in=ROLES):
        group.permissions.remove(*permissions)


class Migration(migrations.Migration):
    dependencies = [("payments", "0008_mandates")]

    operations = [migrations.RunPython(grant, revoke)]
