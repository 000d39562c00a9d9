"""The idempotency claim as one function (api/sql/idempotency.sql), so that it is one statement
the driver can prepare (server-side binding refuses several commands in one execute)."""

from pathlib import Path

from django.db import migrations

SQL = Path(__file__).resolve().parent.parent / "sql"


class Migration(migrations.Migration):
    dependencies = [("api", "0006_institutions_moved_out")]

    operations = [
        migrations.RunSQL(
            sql=(SQL / "idempotency.sql").read_text(),
            reverse_sql="DROP FUNCTION tx_idempotency_claim(text, text, uuid, text, text, text, integer);",
        )
    ]
