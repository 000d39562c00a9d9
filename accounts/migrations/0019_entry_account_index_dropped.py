"""An entry's account loses the index Django made for it: entry_account_idx (account_id, id) starts
with the same column and serves every lookup by it; one index entry fewer per ledger entry.

A drop only, not Django's drop and re-validation of each foreign key over the whole table."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0018_posting_many_rows_once"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="entry",
                    name="account",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="entries",
                        to="accounts.account",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    "DROP INDEX IF EXISTS accounts_entry_account_id_8460c2c7;",
                    reverse_sql=(
                        "CREATE INDEX IF NOT EXISTS accounts_entry_account_id_8460c2c7 ON accounts_entry (account_id);"
                    ),
                ),
            ],
        ),
    ]
