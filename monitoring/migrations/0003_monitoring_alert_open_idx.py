"""A partial index of the open alerts (the back office's work queue), built CONCURRENTLY: the
alerts table takes writes while a bank's existing rows are indexed."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ("monitoring", "0002_alter_monitoringalert_institution_and_more"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="monitoringalert",
            index=models.Index(
                condition=models.Q(("status", "open")),
                fields=["institution"],
                name="monitoring_alert_open_idx",
            ),
        ),
    ]
