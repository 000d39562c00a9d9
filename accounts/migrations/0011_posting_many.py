"""The batch form of the posting function (accounts/sql/posting_many.sql)."""

from pathlib import Path

from django.db import migrations

SQL = Path(__file__).resolve().parent.parent / "sql"


class Migration(migrations.Migration):
    dependencies = [("accounts", "0010_posting_function")]

    operations = [
        migrations.RunSQL(
            sql=(SQL / "posting_many.sql").read_text(),
            reverse_sql=(SQL / "posting_many_reverse.sql").read_text(),
        )
    ]
