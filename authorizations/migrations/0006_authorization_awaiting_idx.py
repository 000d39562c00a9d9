"""The recovery job's scan of authorizations awaiting their program: a partial index, built
CONCURRENTLY (the table takes writes while it is built)."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ("authorizations", "0005_decision_record"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="authorization",
            index=models.Index(
                condition=models.Q(("decision", "awaiting_program")),
                fields=["created_at"],
                name="authorization_awaiting_idx",
            ),
        ),
    ]
