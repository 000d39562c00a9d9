"""A transfer's institution and accounts lose the indexes Django made for them:
transfer_institution_idx, transfer_source_idx and transfer_destination_idx start with the same
columns and serve every lookup by them; three index entries fewer per transfer.

A drop only, not Django's drop and re-validation of each foreign key over the whole table."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0019_entry_account_index_dropped"),
        ("institutions", "0004_existing_staff_keep_every_institution"),
        ("transfers", "0006_two_phase"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="transfer",
                    name="destination_account",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="accounts.account",
                    ),
                ),
                migrations.AlterField(
                    model_name="transfer",
                    name="institution",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="institutions.institution",
                    ),
                ),
                migrations.AlterField(
                    model_name="transfer",
                    name="source_account",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="accounts.account",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    "DROP INDEX IF EXISTS transfers_transfer_destination_account_id_6a546d9b, transfers_transfer_institution_id_1d04115c, transfers_transfer_source_account_id_468c96db;",
                    reverse_sql=(
                        "CREATE INDEX IF NOT EXISTS transfers_transfer_destination_account_id_6a546d9b ON transfers_transfer (destination_account_id);"
                        "CREATE INDEX IF NOT EXISTS transfers_transfer_institution_id_1d04115c ON transfers_transfer (institution_id);"
                        "CREATE INDEX IF NOT EXISTS transfers_transfer_source_account_id_468c96db ON transfers_transfer (source_account_id);"
                    ),
                ),
            ],
        ),
    ]
