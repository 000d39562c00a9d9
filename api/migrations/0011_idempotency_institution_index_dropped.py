"""The idempotency records' `institution_id` index goes: the unique (institution_id, key)
begins with it and serves every lookup by institution (and the foreign key's checks), and every
write request inserted an entry into both. Dropped CONCURRENTLY: the table takes every write
request, and a plain DROP INDEX would hold its lock until the running ones end."""

from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("api", "0010_idempotency_resource_id"),
        ("institutions", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="idempotencyrecord",
                    name="institution",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=models.deletion.CASCADE,
                        to="institutions.institution",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    "DROP INDEX CONCURRENTLY IF EXISTS api_idempotencyrecord_institution_id_2ef3a019",
                    reverse_sql="CREATE INDEX CONCURRENTLY IF NOT EXISTS "
                    "api_idempotencyrecord_institution_id_2ef3a019 "
                    "ON api_idempotencyrecord (institution_id)",
                ),
            ],
        ),
    ]
