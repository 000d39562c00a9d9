"""A partial index of the staff_changes alerts by account (the customer page's panel), built
CONCURRENTLY: the alerts table takes writes while it is built."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ("monitoring", "0005_staff_changes_alerts"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name='monitoringalert',
            index=models.Index(condition=models.Q(('account__isnull', False)), fields=['account', '-id'], name='monitoring_alert_account_idx'),
        ),
    ]
