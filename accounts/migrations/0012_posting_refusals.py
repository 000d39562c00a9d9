"""The posting functions' refusals spelled once (accounts/sql/posting.sql), for tx_post and
tx_post_many: both files applied again (CREATE OR REPLACE), the old tx_refuse dropped."""

from pathlib import Path

from django.db import migrations

SQL = Path(__file__).resolve().parent.parent / "sql"


class Migration(migrations.Migration):
    dependencies = [("accounts", "0011_posting_many")]

    operations = [
        migrations.RunSQL(
            sql="DROP FUNCTION IF EXISTS tx_refuse(text, text, jsonb);\n"
            + (SQL / "posting.sql").read_text()
            + (SQL / "posting_many.sql").read_text(),
            # Going back leaves the shared refusals in place: 0010's reverse drops them.
            reverse_sql=migrations.RunSQL.noop,
        )
    ]
