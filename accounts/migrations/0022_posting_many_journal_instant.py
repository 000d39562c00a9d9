"""tx_post_many stamps each item's ledger entries with the item's journal's instant, as tx_post
does for a transfer posted alone (accounts/sql/posting_many.sql), not with the instant of the
call: a transfer's journal, entries, row, statement lines and event are one change at one
instant. The same function, applied again (CREATE OR REPLACE)."""

from pathlib import Path

from django.db import migrations

SQL = Path(__file__).resolve().parent.parent / "sql"


class Migration(migrations.Migration):
    dependencies = [("accounts", "0021_journal_balanced_generic_plan")]

    operations = [
        migrations.RunSQL(
            sql=(SQL / "posting_many.sql").read_text(),
            # The old text stamped entries a moment later, nothing else: nothing to restore.
            reverse_sql=migrations.RunSQL.noop,
        )
    ]
