"""The protective card actions of the back office (freeze, unfreeze, block lost or stolen:
docs/back-office.md, "Roles"): a permission of their own, `cards.protect_card`, which every staff
role gets, `support` included. They move no money and ask no second person; the other card
actions keep requiring `change_card` (`operations`)."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

ROLES = ("support", "operations", "compliance")
CODENAME = "protect_card"


def grant(apps, schema_editor):
    app_config = apps.get_app_config("cards")
    app_config.models_module = True
    create_permissions(app_config, verbosity=0, apps=apps)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permission = Permission.objects.get(content_type__app_label="cards", codename=CODENAME)
    for group in Group.objects.filter(name__in=ROLES):
        group.permissions.add(permission)


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permissions = Permission.objects.filter(content_type__app_label="cards", codename=CODENAME)
    for group in Group.objects.filter(name__in=ROLES):
        group.permissions.remove(*permissions)


class Migration(migrations.Migration):
    dependencies = [
        ("cards", "0013_pan_failures_of_staff"),
        ("institutions", "0003_staff_roles"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="card",
            options={
                "ordering": ["-id"],
                "permissions": [
                    ("protect_card", "Can freeze, unfreeze and block cards (lost, stolen)")
                ],
            },
        ),
        migrations.RunPython(grant, revoke),
    ]
