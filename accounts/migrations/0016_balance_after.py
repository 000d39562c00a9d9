"""Each ledger entry stores the account's posted balance after it (issue 15,
docs/balances-at-an-instant.md): the column, backfilled as the running sum of the account's
entries in id order (their created_at made non-decreasing in that order, the rule the instant
lookup relies on), then NOT NULL; the indexes of the instant lookups; the database rule
(accounts/sql/balance_after.sql) and the posting functions that write the column (posting.sql,
posting_many.sql applied again)."""

from pathlib import Path

from django.db import migrations, models

SQL = Path(__file__).resolve().parent.parent / "sql"

# Entries are append-only (ledger_rules.sql): the backfill lifts that trigger for its UPDATE.
BACKFILL = """
ALTER TABLE accounts_entry DISABLE TRIGGER accounts_entry_append_only;
UPDATE accounts_entry e
   SET balance_after = r.balance_after, created_at = r.created_at
  FROM (SELECT id,
               SUM(CASE direction WHEN 'credit' THEN amount ELSE -amount END)
                   OVER (PARTITION BY account_id ORDER BY id ROWS UNBOUNDED PRECEDING)
                   AS balance_after,
               MAX(created_at)
                   OVER (PARTITION BY account_id ORDER BY id ROWS UNBOUNDED PRECEDING)
                   AS created_at
          FROM accounts_entry) r
 WHERE e.id = r.id;
ALTER TABLE accounts_entry ENABLE TRIGGER accounts_entry_append_only;
"""


class Migration(migrations.Migration):
    dependencies = [("accounts", "0015_two_phase_transfers")]

    operations = [
        migrations.AddField(
            model_name="entry",
            name="balance_after",
            field=models.BigIntegerField(null=True),
        ),
        migrations.RunSQL(sql=BACKFILL, reverse_sql=migrations.RunSQL.noop),
        migrations.AlterField(
            model_name="entry",
            name="balance_after",
            field=models.BigIntegerField(),
        ),
        migrations.AddIndex(
            model_name="entry",
            index=models.Index(fields=["account", "created_at", "id"], name="entry_account_at_idx"),
        ),
        migrations.AddIndex(
            model_name="hold",
            index=models.Index(fields=["account", "created_at"], name="hold_account_created_idx"),
        ),
        migrations.RunSQL(
            sql=(SQL / "balance_after.sql").read_text()
            + (SQL / "posting.sql").read_text()
            + (SQL / "posting_many.sql").read_text(),
            # Going back drops the rule only: the posting functions keep writing balance_after
            # (the column is dropped by the reversed AddField), so migrate forward again.
            reverse_sql=(SQL / "balance_after_reverse.sql").read_text(),
        ),
    ]
