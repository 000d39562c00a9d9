"""The staff roles (institutions/migrations/0003_staff_roles.py) on payments: every role views
orders, external accounts, files, notices, inbound entries, their journals and the ACH profiles;
`operations` approves and cancels orders, verifies external accounts and asks for an inbound
credit in suspense to be applied or returned (the admin's actions require the model's change
permission; another staff user approves those under "Approvals"). No role adds or deletes
anything: payments are made through the API and the files."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

VIEW = (
    "view_paymentorder",
    "view_externalaccount",
    "view_railfile",
    "view_railnotice",
    "view_inboundentry",
    "view_railjournal",
    "view_achprofile",
)
ROLES = {
    "support": VIEW,
    "operations": (
        *VIEW,
        "change_paymentorder",
        "change_externalaccount",
        "change_inboundentry",
    ),
    "compliance": VIEW,
}


def grant(apps, schema_editor):
    app_config = apps.get_app_config("payments")
    app_config.models_module = True
    create_permissions(app_config, verbosity=0, apps=apps)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, codenames in ROLES.items():
        permissions = Permission.objects.filter(
            content_type__app_label="payments", codename__in=codenames
        )
        for group in Group.objects.filter(name=name):
            group.permissions.add(*permissions)


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permissions = Permission.objects.filter(content_type__app_label="payments")
    for group in Group.objects.filter(name__in=ROLES):
        group.permissions.remove(*permissions)


class Migration(migrations.Migration):
    dependencies = [
        ("payments", "0002_inbound_entries"),
        ("institutions", "0003_staff_roles"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
