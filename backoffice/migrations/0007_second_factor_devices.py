"""The staff's second factor in the back office's own tables (backoffice.models): authenticator
apps with encrypted keys, recovery codes as salted keyed hashes, one-time enrolment tokens as
hashes. The rows django-otp's own devices held are moved by the next migration."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

DEVICE_FIELDS = [
    ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
    ("name", models.CharField(help_text="The human-readable name of this device.", max_length=64)),
    ("confirmed", models.BooleanField(default=True, help_text="Is this device ready for use?")),
    (
        "throttling_failure_timestamp",
        models.DateTimeField(
            blank=True,
            default=None,
            help_text="A timestamp of the last failed verification attempt. Null if last attempt succeeded.",
            null=True,
        ),
    ),
    (
        "throttling_failure_count",
        models.PositiveIntegerField(default=0, help_text="Number of successive failed attempts."),
    ),
    (
        "created_at",
        models.DateTimeField(
            auto_now_add=True,
            help_text="The date and time when this device was initially created in the system.",
            null=True,
        ),
    ),
    (
        "last_used_at",
        models.DateTimeField(blank=True, help_text="The most recent date and time this device was used.", null=True),
    ),
]


def _user():
    return models.ForeignKey(
        help_text="The user that this device belongs to.",
        on_delete=django.db.models.deletion.CASCADE,
        to=settings.AUTH_USER_MODEL,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("backoffice", "0006_staff_events"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="AppDevice",
            fields=[
                *DEVICE_FIELDS,
                ("key_encrypted", models.TextField(editable=False)),
                ("drift", models.SmallIntegerField(default=0)),
                ("last_t", models.BigIntegerField(default=-1)),
                ("user", _user()),
            ],
            options={
                "verbose_name": "authenticator app",
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("confirmed", True)),
                        fields=("user",),
                        name="app_device_one_confirmed",
                    ),
                    models.UniqueConstraint(
                        condition=models.Q(("confirmed", False)),
                        fields=("user",),
                        name="app_device_one_pending",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="RecoveryCodeDevice",
            fields=[*DEVICE_FIELDS, ("user", _user())],
            options={
                "verbose_name": "recovery codes",
                "verbose_name_plural": "recovery codes",
                "constraints": [
                    models.UniqueConstraint(fields=("user",), name="recovery_codes_one"),
                ],
            },
        ),
        migrations.CreateModel(
            name="RecoveryCode",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("salt", models.CharField(max_length=32)),
                ("digest", models.CharField(max_length=64)),
                (
                    "device",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="codes",
                        to="backoffice.recoverycodedevice",
                    ),
                ),
            ],
            options={"verbose_name": "recovery code"},
        ),
        migrations.CreateModel(
            name="EnrolmentToken",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("digest", models.CharField(max_length=64)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("expires_at", models.DateTimeField()),
                ("used_at", models.DateTimeField(blank=True, null=True)),
                ("voided_at", models.DateTimeField(blank=True, null=True)),
                (
                    "issued_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "verbose_name": "enrolment token",
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("used_at__isnull", True), ("voided_at__isnull", True)),
                        fields=("user",),
                        name="enrolment_token_one_open",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("used_at__isnull", True), ("voided_at__isnull", True), _connector="OR"),
                        name="enrolment_token_used_or_voided",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("expires_at__gt", models.F("created_at"))),
                        name="enrolment_token_expires_after_issue",
                    ),
                ],
            },
        ),
    ]
