"""The staff roles (institutions/migrations/0003_staff_roles.py) view the institutions' holidays.
View only, as products: holidays are added and removed through the API or by a superuser or a
group an administrator makes for it (docs/calendar.md, docs/back-office.md)."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

ROLES = ("support", "operations", "compliance")


def grant_view(apps, schema_editor):
    app_config = apps.get_app_config("institutions")
    app_config.models_module = True
    create_permissions(app_config, verbosity=0, apps=apps)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    view = Permission.objects.get(content_type__app_label="institutions", codename="view_holiday")
    for group in Group.objects.filter(name__in=ROLES):
        group.permissions.add(view)


def revoke_view(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for permission in Permission.objects.filter(
        content_type__app_label="institutions", codename="view_holiday"
    ):
        for group in Group.objects.filter(name__in=ROLES):
            group.permissions.remove(permission)


class Migration(migrations.Migration):
    dependencies = [("institutions", "0005_calendar")]

    operations = [migrations.RunPython(grant_view, revoke_view)]
