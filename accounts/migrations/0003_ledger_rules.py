"""The ledger's database rules (accounts/sql/ledger_rules.sql): balanced journals at commit,
entries in their account's currency, append-only journals and entries."""

from pathlib import Path

from django.db import migrations

SQL = Path(__file__).resolve().parent.parent / "sql"


class Migration(migrations.Migration):
    dependencies = [("accounts", "0002_accounts_ledger_holds")]

    operations = [
        migrations.RunSQL(
            sql=(SQL / "ledger_rules.sql").read_text(),
            reverse_sql=(SQL / "ledger_rules_reverse.sql").read_text(),
        )
    ]
