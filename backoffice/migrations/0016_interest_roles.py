"""Every staff role views the account products' interest terms and the accounts' daily
accruals (docs/back-office.md, "Roles"; docs/interest.md, "The back office"); none adds,
changes or deletes one: terms are written by the API, accruals by the accrual job."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

ROLES = ("support", "operations", "compliance")
VIEW = ("view_interestterms", "view_interestaccrual")


def grant(apps, schema_editor):
    app_config = apps.get_app_config("interest")
    app_config.models_module = True
    create_permissions(app_config, verbosity=0, apps=apps)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permissions = Permission.objects.filter(content_type__app_label="interest", codename__in=VIEW)
    for group in Group.objects.filter(name__in=ROLES):
        group.permissions.add(*permissions)


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permissions = Permission.objects.filter(content_type__app_label="interest", codename__in=VIEW)
    for group in Group.objects.filter(name__in=ROLES):
        group.permissions.remove(*permissions)


class Migration(migrations.Migration):
    dependencies = [
        ("backoffice", "0015_break_place"),
        ("interest", "0005_terms_plain_names"),
        ("institutions", "0003_staff_roles"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
