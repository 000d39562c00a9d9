"""A batch's institution loses the index Django made for its foreign key: batch_institution_idx
(institution_id, id DESC) starts with the same column and serves every lookup by it, the
foreign key's own check on deleting an institution included (the pattern of 0007).

Dropped CONCURRENTLY: every batch request writes this table, and a plain DROP INDEX would hold
its lock until the running ones end."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False  # DROP INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ("institutions", "0001_initial"),
        ("transfers", "0009_partial_user_and_hold_indexes"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="transferbatch",
                    name="institution",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="institutions.institution",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    "DROP INDEX CONCURRENTLY IF EXISTS"
                    " transfers_transferbatch_institution_id_ff9f8c87",
                    reverse_sql="CREATE INDEX CONCURRENTLY"
                    " transfers_transferbatch_institution_id_ff9f8c87"
                    " ON transfers_transferbatch (institution_id)",
                ),
            ],
        ),
    ]
