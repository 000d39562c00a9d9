"""The staff roles (institutions/migrations/0003_staff_roles.py) view authorization increments,
as they view the authorizations they raise. View only: increments come from the network's API."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

ROLES = ("support", "operations", "compliance")
CODENAME = "view_authorizationincrement"


def grant_view(apps, schema_editor):
    app_config = apps.get_app_config("authorizations")
    app_config.models_module = True
    create_permissions(app_config, verbosity=0, apps=apps)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    view = Permission.objects.get(content_type__app_label="authorizations", codename=CODENAME)
    for group in Group.objects.filter(name__in=ROLES):
        group.permissions.add(view)


def revoke_view(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for permission in Permission.objects.filter(
        content_type__app_label="authorizations", codename=CODENAME
    ):
        for group in Group.objects.filter(name__in=ROLES):
            group.permissions.remove(permission)


class Migration(migrations.Migration):
    dependencies = [
        ("authorizations", "0008_network_messages"),
        ("institutions", "0003_staff_roles"),
    ]

    operations = [migrations.RunPython(grant_view, revoke_view)]
