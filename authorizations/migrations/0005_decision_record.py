"""How an authorization was decided (issue 31, docs/decisioning.md): who decided
(`decided_by`, `tx` for every authorization so far: the database default), the program's call,
a partial approval's requested amount, and the decision `awaiting_program` while the program is
asked. The decision CHECK now lets a declined authorization keep its (released) hold: the
program declines after TX held."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("authorizations", "0004_authorization_declined_idx"),
        ("decisioning", "0003_breaker"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="authorization",
            name="authorization_decision_consistent",
        ),
        migrations.AddField(
            model_name="authorization",
            name="decided_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="authorization",
            name="decided_by",
            field=models.CharField(
                choices=[
                    ("tx", "Tx"),
                    ("program", "Program"),
                    ("standin", "Standin"),
                    ("network", "Network"),
                ],
                default="tx",
                db_default="tx",
                max_length=16,
            ),
        ),
        migrations.AddField(
            model_name="authorization",
            name="decisioning_endpoint",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="decisioning.decisioningendpoint",
            ),
        ),
        migrations.AddField(
            model_name="authorization",
            name="program_answer",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="authorization",
            name="program_error",
            field=models.CharField(blank=True, max_length=300),
        ),
        migrations.AddField(
            model_name="authorization",
            name="program_latency_ms",
            field=models.IntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="authorization",
            name="program_mode",
            field=models.CharField(blank=True, max_length=16),
        ),
        migrations.AddField(
            model_name="authorization",
            name="program_status",
            field=models.IntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="authorization",
            name="requested_amount",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="authorization",
            name="decision",
            field=models.CharField(
                choices=[
                    ("approved", "Approved"),
                    ("declined", "Declined"),
                    ("awaiting_program", "Awaiting Program"),
                ],
                max_length=16,
            ),
        ),
        migrations.AddConstraint(
            model_name="authorization",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(
                        ("decision__in", ["approved", "awaiting_program"]),
                        ("hold__isnull", False),
                        ("decline_code", ""),
                    ),
                    models.Q(
                        ("decision", "declined"), models.Q(("decline_code", ""), _negated=True)
                    ),
                    _connector="OR",
                ),
                name="authorization_decision_consistent_v2",
            ),
        ),
        migrations.AddConstraint(
            model_name="authorization",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("requested_amount__isnull", True),
                    ("requested_amount__gt", models.F("amount")),
                    _connector="OR",
                ),
                name="authorization_partial_below_requested",
            ),
        ),
    ]
