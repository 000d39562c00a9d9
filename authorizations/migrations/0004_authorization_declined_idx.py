"""GET /card-authorizations?status=declined newest first: a partial index of the declined ones,
built CONCURRENTLY (the table takes writes while a bank's existing rows are indexed)."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ("authorizations", "0003_metadata"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="authorization",
            index=models.Index(
                condition=models.Q(("decision", "declined")),
                fields=["institution", "-id"],
                name="authorization_declined_idx",
            ),
        ),
    ]
