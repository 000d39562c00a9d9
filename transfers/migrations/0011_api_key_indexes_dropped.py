"""A transfer's, a batch's and a reversal's API key lose the index Django made for the foreign
key: no read looks them up by key (the events' actor index answers what a key did), and a key is
never deleted (`core.models.api_key_unindexed`), so the index served only the check of a
deletion that does not happen, and took an entry for every transfer the API made (36 -> 35).

Dropped CONCURRENTLY: every transfer request writes these tables, and a plain DROP INDEX would
hold its lock until the running ones end."""

import django.db.models.deletion
from django.db import migrations, models

INDEXES = {
    "transfer": ("transfers_transfer", "transfers_transfer_created_by_api_key_id_6344633f"),
    "transferbatch": (
        "transfers_transferbatch",
        "transfers_transferbatch_created_by_api_key_id_7961cd17",
    ),
    "transferreversal": (
        "transfers_transferreversal",
        "transfers_transferreversal_created_by_api_key_id_b7bab248",
    ),
}


class Migration(migrations.Migration):
    atomic = False  # DROP INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ("institutions", "0006_staff_roles_view_holidays"),
        ("transfers", "0010_batch_institution_index_dropped"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name=model,
                    name="created_by_api_key",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="institutions.apikey",
                    ),
                )
                for model in INDEXES
            ],
            database_operations=[
                migrations.RunSQL(
                    f"DROP INDEX CONCURRENTLY IF EXISTS {index}",
                    reverse_sql=f"CREATE INDEX CONCURRENTLY {index} ON {table}"
                    " (created_by_api_key_id)",
                )
                for table, index in INDEXES.values()
            ],
        ),
    ]
