"""Just-in-time funding (docs/decisioning.md): the program's funding account (an internal
account that may not go below zero but by its overdraft_limit, a CHECK no existing row meets:
none has the code), the journals that move its money, and the posting functions' debit check
asked of it too (accounts/sql/posting.sql and posting_many.sql applied again: tx_debit_refusal
checks the funds of an account whose funds count, `tx_funds_count`: a customer's, and now the
program's funding account; its `kind` parameter becomes that boolean). Backwards, the
functions stay as they are: no program funding account exists before this migration."""

from pathlib import Path

import django.db.models.expressions
from django.db import migrations, models

SQL = Path(__file__).resolve().parent.parent / "sql"


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0033_hold_indexes_trimmed"),
        ("customers", "0005_search_indexes"),
        ("institutions", "0006_staff_roles_view_holidays"),
    ]

    operations = [
        migrations.AlterField(
            model_name="account",
            name="internal_code",
            field=models.CharField(
                blank=True,
                choices=[
                    ("funding", "Funding (loads and unloads)"),
                    ("settlement", "Settlement (captured holds)"),
                    ("card_clearing", "Card network clearing"),
                    ("fees", "Fees"),
                    ("dispute_clearing", "Dispute clearing"),
                    ("dispute_losses", "Dispute losses (written off)"),
                    ("program_funding", "Program funding (just-in-time)"),
                ],
                max_length=32,
                null=True,
            ),
        ),
        migrations.AlterField(
            model_name="journal",
            name="kind",
            field=models.CharField(
                choices=[
                    ("adjustment", "Adjustment"),
                    ("transfer", "Transfer"),
                    ("transfer_reversal", "Transfer Reversal"),
                    ("hold_capture", "Hold Capture"),
                    ("card_return", "Card Return"),
                    ("fee", "Fee"),
                    ("fee_waiver", "Fee Waiver"),
                    ("dispute", "Dispute"),
                    ("program_funding", "Program Funding"),
                ],
                max_length=32,
            ),
        ),
        migrations.AddConstraint(
            model_name="account",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("internal_code", "program_funding"), _negated=True),
                    (
                        "posted__gte",
                        django.db.models.expressions.CombinedExpression(
                            models.F("pending"), "-", models.F("overdraft_limit")
                        ),
                    ),
                    _connector="OR",
                ),
                name="account_program_funding_nonneg",
            ),
        ),
        migrations.RunSQL(
            sql="DROP FUNCTION IF EXISTS tx_debit_refusal(text, text, text, bigint, bigint);"
            + (SQL / "posting.sql").read_text()
            + (SQL / "posting_many.sql").read_text(),
            reverse_sql=migrations.RunSQL.noop,
        ),
    ]
