"""tx_post_many reads each JSON row once (accounts/sql/posting_many.sql): the rows were expanded
with `(jsonb_populate_record(...)).*` in the select list, which PostgreSQL evaluates once per
column of the table. The same function, applied again (CREATE OR REPLACE)."""

from pathlib import Path

from django.db import migrations

SQL = Path(__file__).resolve().parent.parent / "sql"


class Migration(migrations.Migration):
    dependencies = [("accounts", "0017_fees")]

    operations = [
        migrations.RunSQL(
            sql=(SQL / "posting_many.sql").read_text(),
            # The old text behaved the same, only slower: nothing to restore going back.
            reverse_sql=migrations.RunSQL.noop,
        )
    ]
