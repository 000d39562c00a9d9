"""Two-phase transfers: pending, posted, voided, expired (docs/two-phase-transfers.md)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("transfers", "0005_metadata"),
        ("accounts", "0015_two_phase_transfers"),
    ]

    operations = [
        migrations.AlterField(
            model_name="transfer",
            name="status",
            field=models.CharField(
                choices=[
                    ("posted", "Posted"),
                    ("reversed", "Reversed"),
                    ("pending", "Pending"),
                    ("voided", "Voided"),
                    ("expired", "Expired"),
                ],
                default="posted",
                max_length=16,
            ),
        ),
        migrations.AddField(
            model_name="transfer",
            name="posted_amount",
            field=models.BigIntegerField(default=0),
        ),
        # Every transfer so far was posted at once: all of it moved.
        migrations.RunSQL(
            "UPDATE transfers_transfer SET posted_amount = amount",
            reverse_sql=migrations.RunSQL.noop,
        ),
        migrations.AlterField(
            model_name="transfer",
            name="journal",
            field=models.OneToOneField(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="transfer",
                to="accounts.journal",
            ),
        ),
        migrations.AddField(
            model_name="transfer",
            name="hold",
            field=models.OneToOneField(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="transfer",
                to="accounts.hold",
            ),
        ),
        migrations.AddField(
            model_name="transfer",
            name="expires_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="transfer",
            name="spend_day",
            field=models.DateField(blank=True, null=True),
        ),
        migrations.AddConstraint(
            model_name="transfer",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("posted_amount__gte", 0), ("posted_amount__lte", models.F("amount"))
                ),
                name="transfer_posted_within_amount",
            ),
        ),
        migrations.AddConstraint(
            model_name="transfer",
            constraint=models.CheckConstraint(
                condition=models.Q(("reversed_amount__lte", models.F("posted_amount"))),
                name="transfer_reversed_within_posted",
            ),
        ),
        migrations.AddConstraint(
            model_name="transfer",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(
                        ("journal__isnull", False),
                        ("posted_amount__gt", 0),
                        ("status__in", ["posted", "reversed"]),
                    ),
                    models.Q(
                        ("expires_at__isnull", False),
                        ("hold__isnull", False),
                        ("journal__isnull", True),
                        ("posted_amount", 0),
                        ("status__in", ["pending", "voided", "expired"]),
                    ),
                    _connector="OR",
                ),
                name="transfer_state_consistent",
            ),
        ),
    ]
