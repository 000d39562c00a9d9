"""Every staff role views the accounts' interest postings and the adjustments of back-valued
money to their accruals (docs/back-office.md, "Roles"; docs/interest.md, "The back office"), as
they view the terms and accruals (0016_interest_roles.py); none adds, changes or deletes one:
the accrual job writes the adjustments, the posting job and a close's settlement the
postings."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

ROLES = ("support", "operations", "compliance")
VIEW = ("view_interestposting", "view_interestadjustment")


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
        ("backoffice", "0017_sepa_register_and_recall_roles"),
        ("interest", "0006_interest_postings"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
