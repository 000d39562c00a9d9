"""The staff roles (institutions/migrations/0003_staff_roles.py) view decisioning endpoints, as
they view webhook endpoints: which endpoint decides for which institution or card product, its
timeout, failure rule and mode (never a secret). View only: endpoints change through the API."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

ROLES = ("support", "operations", "compliance")


def grant_view(apps, schema_editor):
    app_config = apps.get_app_config("decisioning")
    app_config.models_module = True
    create_permissions(app_config, verbosity=0, apps=apps)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    view = Permission.objects.get(
        content_type__app_label="decisioning", codename="view_decisioningendpoint"
    )
    for group in Group.objects.filter(name__in=ROLES):
        group.permissions.add(view)


def revoke_view(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for permission in Permission.objects.filter(
        content_type__app_label="decisioning", codename="view_decisioningendpoint"
    ):
        for group in Group.objects.filter(name__in=ROLES):
            group.permissions.remove(permission)


class Migration(migrations.Migration):
    dependencies = [
        ("decisioning", "0001_initial"),
        ("institutions", "0003_staff_roles"),
    ]

    operations = [migrations.RunPython(grant_view, revoke_view)]
