"""tx_post (accounts/sql/posting.sql) with fewer statements of its own: the accounts locked and
read in one, a refusal raised only when there is one, and the operation's row inserted by a
static INSERT of its table (a plan PL/pgSQL keeps), not a dynamic EXECUTE planned at every
call. The same function, applied again (CREATE OR REPLACE)."""

from pathlib import Path

from django.db import migrations

SQL = Path(__file__).resolve().parent.parent / "sql"


class Migration(migrations.Migration):
    dependencies = [("accounts", "0019_entry_account_index_dropped")]

    operations = [
        migrations.RunSQL(
            sql=(SQL / "posting.sql").read_text(),
            # The old text behaved the same for these tables, only slower: nothing to restore.
            reverse_sql=migrations.RunSQL.noop,
        )
    ]
