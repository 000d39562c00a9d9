"""A journal without entries is refused at commit (accounts/sql/journal_has_entries.sql)."""

from pathlib import Path

from django.db import migrations

SQL = Path(__file__).resolve().parent.parent / "sql"


class Migration(migrations.Migration):
    dependencies = [("accounts", "0003_ledger_rules")]

    operations = [
        migrations.RunSQL(
            sql=(SQL / "journal_has_entries.sql").read_text(),
            reverse_sql=(
                "DROP TRIGGER IF EXISTS accounts_journal_has_entries ON accounts_journal; "
                "DROP FUNCTION IF EXISTS tx_check_journal_has_entries();"
            ),
        )
    ]
