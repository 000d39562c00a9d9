"""The posting functions refuse a posting that would take an account's `posted`, `pending` or
`available` past the range of their bigint columns: 422 `balance_out_of_range`
(`tx_range_refusal`, accounts/sql/posting.sql), where the write failed with
numeric_value_out_of_range and every later posting to the account answered 500. tx_post checks
each account; tx_post_many each item on running balances (an independent batch's item is
refused alone). Both files applied again (CREATE OR REPLACE)."""

from pathlib import Path

from django.db import migrations

SQL = Path(__file__).resolve().parent.parent / "sql"


class Migration(migrations.Migration):
    dependencies = [("accounts", "0024_hold_card_auth_status_idx")]

    operations = [
        migrations.RunSQL(
            sql=(SQL / "posting.sql").read_text() + (SQL / "posting_many.sql").read_text(),
            # The old text wrote past the range and failed there: nothing to restore.
            reverse_sql=migrations.RunSQL.noop,
        )
    ]
