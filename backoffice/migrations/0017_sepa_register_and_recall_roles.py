"""Every staff role views the debtor register of SEPA direct debits (the mandates customers gave
other banks' creditors, the creditors they block) and the SEPA recalls, TX's of its transfers and
other banks' of the credits TX received (docs/back-office.md, "Roles"; docs/payments.md, "The
back office"), as they view the other payments pages (payments/migrations/0003_staff_roles.py,
0009_sepa_staff_roles.py); none adds, changes or deletes one: the API writes them, and the
payments job sends and expires recalls."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

ROLES = ("support", "operations", "compliance")
VIEW = ("view_debtormandate", "view_blockedcreditor", "view_recall", "view_inboundrecall")


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
    dependencies = [
        ("backoffice", "0016_interest_roles"),
        ("payments", "0016_inbound_recall_plural"),
        ("institutions", "0003_staff_roles"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
