"""Fee schedules of account products; statement line categories (issue 15, docs/fees.md)."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

import accounts.models.fees


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0016_balance_after"),
        ("authorizations", "0003_metadata"),
        ("cards", "0008_fees"),
        ("institutions", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="accountproduct",
            name="monthly_fee",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddConstraint(
            model_name="accountproduct",
            constraint=models.CheckConstraint(
                condition=models.Q(("monthly_fee__gte", 0)),
                name="account_product_monthly_fee_nonneg",
            ),
        ),
        migrations.AlterField(
            model_name="journal",
            name="kind",
            field=models.CharField(
                choices=[
                    ("adjustment", "Adjustment"),
                    ("transfer", "Transfer"),
                    ("transfer_reversal", "Transfer Reversal"),
                    ("hold_capture", "Hold Capture"),
                    ("card_return", "Card Return"),
                    ("fee", "Fee"),
                    ("fee_waiver", "Fee Waiver"),
                ],
                max_length=32,
            ),
        ),
        migrations.CreateModel(
            name="Fee",
            fields=[
                (
                    "id",
                    models.CharField(
                        default=accounts.models.fees._fee_id,
                        editable=False,
                        max_length=40,
                        primary_key=True,
                        serialize=False,
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("monthly", "Monthly"),
                            ("atm", "Atm"),
                            ("replacement", "Replacement"),
                            ("foreign_transaction", "Foreign Transaction"),
                        ],
                        max_length=32,
                    ),
                ),
                ("amount", models.BigIntegerField()),
                ("currency", models.CharField(max_length=3)),
                ("period", models.CharField(blank=True, default="", max_length=7)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("charged", "Charged"),
                            ("waived", "Waived"),
                            ("declined", "Declined"),
                        ],
                        max_length=16,
                    ),
                ),
                ("decline_reason", models.CharField(blank=True, default="", max_length=64)),
                ("waiver_reason", models.CharField(blank=True, default="", max_length=500)),
                ("waived_at", models.DateTimeField(blank=True, null=True)),
                (
                    "created_at",
                    models.DateTimeField(default=django.utils.timezone.now, editable=False),
                ),
                (
                    "updated_at",
                    models.DateTimeField(default=django.utils.timezone.now, editable=False),
                ),
                (
                    "account",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="fees",
                        to="accounts.account",
                    ),
                ),
                (
                    "authorization",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="fees",
                        to="authorizations.authorization",
                    ),
                ),
                (
                    "card",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="fees",
                        to="cards.card",
                    ),
                ),
                (
                    "institution",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="institutions.institution",
                    ),
                ),
                (
                    "journal",
                    models.OneToOneField(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="fee",
                        to="accounts.journal",
                    ),
                ),
                (
                    "waived_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "waiver_journal",
                    models.OneToOneField(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="waived_fee",
                        to="accounts.journal",
                    ),
                ),
            ],
            options={
                "ordering": ["-id"],
                "indexes": [models.Index(fields=["account", "-id"], name="fee_account_idx")],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("amount__gt", 0)), name="fee_amount_positive"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("status__in", ["charged", "waived", "declined"])),
                        name="fee_status_valid",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            models.Q(("journal__isnull", True), ("status", "declined")),
                            models.Q(
                                models.Q(("status", "declined"), _negated=True),
                                ("journal__isnull", False),
                            ),
                            _connector="OR",
                        ),
                        name="fee_journal_iff_not_declined",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            models.Q(("status", "waived"), ("waiver_journal__isnull", False)),
                            models.Q(
                                models.Q(("status", "waived"), _negated=True),
                                ("waiver_journal__isnull", True),
                            ),
                            _connector="OR",
                        ),
                        name="fee_waiver_journal_iff_waived",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            models.Q(("kind", "monthly"), _negated=True),
                            ("period__regex", "^[0-9]{4}-[0-9]{2}$"),
                            _connector="OR",
                        ),
                        name="fee_monthly_has_period",
                    ),
                    models.UniqueConstraint(
                        condition=models.Q(("kind", "monthly")),
                        fields=("account", "period"),
                        name="fee_monthly_once_per_period",
                    ),
                    models.UniqueConstraint(
                        condition=models.Q(("authorization__isnull", False)),
                        fields=("authorization", "kind"),
                        name="fee_once_per_authorization",
                    ),
                    models.UniqueConstraint(
                        condition=models.Q(("kind", "replacement")),
                        fields=("card",),
                        name="fee_replacement_once_per_card",
                    ),
                ],
            },
        ),
        migrations.AddField(
            model_name="transaction",
            name="fee",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="statement_lines",
                to="accounts.fee",
            ),
        ),
        migrations.AddField(
            model_name="transaction",
            name="category",
            field=models.CharField(blank=True, choices=[("fee", "Fee")], max_length=16, null=True),
        ),
        migrations.AddIndex(
            model_name="transaction",
            index=models.Index(
                condition=models.Q(("fee__isnull", False)), fields=["fee"], name="txn_fee_idx"
            ),
        ),
    ]
