"""An event's institution loses the index Django made for it: event_institution_idx
(institution_id, id DESC) starts with the same column and serves every lookup by it.

A drop only, not Django's drop and re-validation of each foreign key over the whole table."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("events", "0003_alter_event_institution"),
        ("institutions", "0004_existing_staff_keep_every_institution"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="event",
                    name="institution",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="events",
                        to="institutions.institution",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    "DROP INDEX IF EXISTS events_event_institution_id_2d5321e9;",
                    reverse_sql=(
                        "CREATE INDEX IF NOT EXISTS events_event_institution_id_2d5321e9 ON events_event (institution_id);"
                    ),
                ),
            ],
        ),
    ]
