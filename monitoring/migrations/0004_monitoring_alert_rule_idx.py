"""GET /monitoring-alerts?ruleId= newest first: an index on (rule, -id), built CONCURRENTLY (the
alerts table takes writes while a bank's existing rows are indexed); the foreign key's own index
on rule alone is dropped after it, since the new one leads with the same column."""

import django.db.models.deletion
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ("monitoring", "0003_monitoring_alert_open_idx"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="monitoringalert",
            index=models.Index(fields=["rule", "-id"], name="monitoring_alert_rule_idx"),
        ),
        migrations.AlterField(
            model_name="monitoringalert",
            name="rule",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="alerts",
                to="monitoring.monitoringrule",
            ),
        ),
    ]
