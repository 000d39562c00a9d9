"""The posting function (accounts/sql/posting.sql): the one path that changes balances."""

from pathlib import Path

from django.db import migrations

SQL = Path(__file__).resolve().parent.parent / "sql"


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0009_statement_line_indexes"),
        ("events", "0003_alter_event_institution"),
    ]

    operations = [
        migrations.RunSQL(
            sql=(SQL / "posting.sql").read_text(),
            reverse_sql=(SQL / "posting_reverse.sql").read_text(),
        )
    ]
