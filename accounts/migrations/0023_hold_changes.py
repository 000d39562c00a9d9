"""The steps of each account's pending balance (issue 29, docs/balances-at-an-instant.md): a
row per hold placed or closed with the pending balance after it, so that `balance_at` reads the
pending balance at an instant in one index lookup instead of summing the account's holds. The
table, its database rule (accounts/sql/hold_changes.sql: the trigger that writes it), then the
backfill of every existing hold: placed at its `created_at`, closed at its `closed_at` (never
before its `created_at`), the running sum per account in time order; each hold counts exactly
where the old sum counted it (`created_at <= T` and not `closed_at <= T`). The index of that
sum, `hold_account_created_idx`, goes."""

from pathlib import Path

import django.db.models.deletion
from django.db import migrations, models

SQL = Path(__file__).resolve().parent.parent / "sql"

# The trigger is created first: CREATE TRIGGER takes a lock that waits for the transactions
# writing holds and keeps new ones out until this migration commits, so the backfill reads
# every hold and none is written twice or missed.
BACKFILL = """
INSERT INTO accounts_holdchange (account_id, hold_id, at, amount, pending_after)
SELECT account_id, hold_id, at, amount,
       SUM(amount) OVER (PARTITION BY account_id ORDER BY at, closing, hold_id
                         ROWS UNBOUNDED PRECEDING)
  FROM (SELECT account_id, id AS hold_id, created_at AS at, amount, 0 AS closing
          FROM accounts_hold
        UNION ALL
        SELECT account_id, id, greatest(closed_at, created_at), -amount, 1
          FROM accounts_hold
         WHERE closed_at IS NOT NULL) AS changes
 ORDER BY account_id, at, closing, hold_id;
"""


class Migration(migrations.Migration):
    dependencies = [("accounts", "0022_posting_many_journal_instant")]

    operations = [
        migrations.CreateModel(
            name="HoldChange",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("at", models.DateTimeField()),
                ("amount", models.BigIntegerField()),
                ("pending_after", models.BigIntegerField()),
                (
                    "account",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="accounts.account",
                    ),
                ),
                (
                    "hold",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="accounts.hold",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(fields=["account", "at", "id"], name="holdchange_account_at_idx")
                ],
            },
        ),
        migrations.RunSQL(
            sql=(SQL / "hold_changes.sql").read_text(),
            reverse_sql=(SQL / "hold_changes_reverse.sql").read_text(),
        ),
        migrations.RunSQL(sql=BACKFILL, reverse_sql=migrations.RunSQL.noop),
        # It served the sum of the holds placed by an instant, which the steps replace: one
        # index less to write per hold placed.
        migrations.RemoveIndex(model_name="hold", name="hold_account_created_idx"),
    ]
