"""An idempotency record names the object of a request that answers after its first commit."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("api", "0009_idempotency_body_scopes"),
    ]

    operations = [
        migrations.AddField(
            model_name="idempotencyrecord",
            name="resource_id",
            field=models.CharField(blank=True, db_default="", max_length=40),
        ),
    ]
