"""The circuit breaker of a decisioning endpoint (decisioning.breaker, issue 31 item 3)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("decisioning", "0002_staff_roles_view"),
    ]

    operations = [
        migrations.AddField(
            model_name="decisioningendpoint",
            name="consecutive_failures",
            field=models.IntegerField(default=0, db_default=0),
        ),
        migrations.AddField(
            model_name="decisioningendpoint",
            name="degraded_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="decisioningendpoint",
            name="next_probe_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
