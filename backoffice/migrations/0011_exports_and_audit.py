"""Issue 48 items 5 and 6: the staff event of a list's CSV export (`staff.list_exported`,
backoffice.exports), and the audit page (`StaffActivity`, a proxy of the events whose actor is a
staff user: no table), which the compliance role views (docs/back-office.md, "Roles")."""

from django.contrib.auth.management import create_permissions
from django.db import migrations, models

AUDITORS = ("compliance",)


def grant(apps, schema_editor):
    app_config = apps.get_app_config("backoffice")
    app_config.models_module = True
    create_permissions(app_config, verbosity=0, apps=apps)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    view = Permission.objects.get(
        content_type__app_label="backoffice", codename="view_staffactivity"
    )
    for group in Group.objects.filter(name__in=AUDITORS):
        group.permissions.add(view)


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for permission in Permission.objects.filter(
        content_type__app_label="backoffice", codename="view_staffactivity"
    ):
        for group in Group.objects.filter(name__in=AUDITORS):
            group.permissions.remove(permission)


class Migration(migrations.Migration):
    dependencies = [
        ("backoffice", "0010_inbound_approvals"),
        ("events", "0004_event_institution_index_dropped"),
        ("institutions", "0003_staff_roles"),
    ]

    operations = [
        migrations.AlterField(
            model_name="staffevent",
            name="type",
            field=models.CharField(
                choices=[
                    ("staff.enrolment_token_issued", "enrolment token issued"),
                    ("staff.second_factor_enrolled", "second factor enrolled"),
                    ("staff.second_factor_reset", "second factor reset"),
                    ("staff.recovery_codes_renewed", "recovery codes renewed"),
                    ("security.pan_guessing_suspected", "card numbers guessed"),
                    ("staff.list_exported", "list exported"),
                ],
                max_length=64,
            ),
        ),
        migrations.CreateModel(
            name="StaffActivity",
            fields=[],
            options={
                "verbose_name": "staff action",
                "verbose_name_plural": "audit: staff actions and approvals",
                "proxy": True,
                "default_permissions": ("view",),
                "indexes": [],
                "constraints": [],
            },
            bases=("events.event",),
        ),
        migrations.RunPython(grant, revoke),
    ]
