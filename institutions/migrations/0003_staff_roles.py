"""The back office's staff roles as groups with exact model permissions (docs/back-office.md).

Permissions are made here first (Django makes them only after `migrate` ends, with the
post_migrate signal), so a fresh database gets its groups in the same run. Each role's list is
written out: what a role may do is decided here, not derived from whatever admins exist later.
Running it again resets the three groups to these lists.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

# What every role views: the customers, their money and cards, and what watches them.
VIEWED = [
    ("institutions", "institution"),
    ("events", "event"),
    ("customers", "customer"),
    ("accounts", "accountproduct"),
    ("accounts", "account"),
    ("accounts", "hold"),
    ("accounts", "journal"),
    ("accounts", "entry"),
    ("accounts", "adjustment"),
    ("accounts", "fee"),
    ("accounts", "transaction"),
    ("cards", "cardproduct"),
    ("cards", "card"),
    ("cards", "sensitivedetailsaccess"),
    ("cards", "pinunblock"),
    ("cards", "panresolutionfailure"),
    ("monitoring", "monitoringrule"),
    ("monitoring", "monitoringalert"),
    ("transfers", "transfer"),
    ("transfers", "transferbatch"),
    ("authorizations", "authorization"),
    ("authorizations", "cardreturn"),
    ("webhooks", "webhookendpoint"),
    ("webhooks", "webhookdelivery"),
]
VIEW = [(app_label, f"view_{model}") for app_label, model in VIEWED]

ROLES = {
    # Looks, changes nothing.
    "support": VIEW,
    # The card actions (activate, suspend, close, unblock PIN) and the account actions
    # (freeze, unfreeze, close, release a hold): each requires its model's change permission.
    "operations": [
        *VIEW,
        ("cards", "change_card"),
        ("accounts", "change_account"),
        ("accounts", "change_hold"),
    ],
    # Resolve monitoring alerts, waive fees.
    "compliance": [
        *VIEW,
        ("monitoring", "change_monitoringalert"),
        ("accounts", "change_fee"),
    ],
}


def create_roles(apps, schema_editor):
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, verbosity=0, apps=apps)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, permissions in ROLES.items():
        chosen = [
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
            for app_label, codename in permissions
        ]
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.set(chosen)


def remove_roles(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=ROLES).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("institutions", "0002_institution_access"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("accounts", "0017_fees"),
        ("api", "0007_idempotency_claim_function"),
        ("authorizations", "0003_metadata"),
        ("cards", "0008_fees"),
        ("customers", "0003_metadata"),
        ("events", "0003_alter_event_institution"),
        ("monitoring", "0002_alter_monitoringalert_institution_and_more"),
        ("transactions", "0007_statement_lines_moved_out"),
        ("transfers", "0006_two_phase"),
        ("webhooks", "0002_alter_webhookendpoint_institution"),
    ]

    operations = [migrations.RunPython(create_roles, remove_roles)]
