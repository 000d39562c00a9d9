"""The staff's events, newest first, for the back office's audit page: a partial index (the
staff's events are a small share of all), built CONCURRENTLY since every request writes
events and a plain CREATE INDEX would block them until it ends."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ("events", "0004_event_institution_index_dropped"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="event",
            index=models.Index(
                condition=models.Q(("actor_type", "staff")),
                fields=["-id"],
                name="event_staff_idx",
            ),
        ),
    ]
