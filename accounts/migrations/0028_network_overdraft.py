"""What the card network forced on a customer account (advices and force posts, never declined):
`network_overdraft`, the CHECK account_available_nonneg allowing that much below zero, the
trigger that lowers it as the account is paid back (accounts/sql/network_overdraft.sql), and
tx_post's `forced` check (accounts/sql/posting.sql, applied again: CREATE OR REPLACE). Existing
rows have none (0)."""

from pathlib import Path

import django.db.models.expressions
from django.db import migrations, models

SQL = Path(__file__).resolve().parent.parent / "sql"


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0027_statement_line_merchant_amount"),
        ("customers", "0004_short_national_ids_keep_no_last4"),
        ("institutions", "0004_existing_staff_keep_every_institution"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="account",
            name="account_available_nonneg",
        ),
        migrations.AddField(
            model_name="account",
            name="network_overdraft",
            field=models.BigIntegerField(db_default=0, default=0),
        ),
        migrations.AddConstraint(
            model_name="account",
            constraint=models.CheckConstraint(
                condition=models.Q(("network_overdraft__gte", 0)),
                name="account_network_overdraft_nonneg",
            ),
        ),
        migrations.AddConstraint(
            model_name="account",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("kind", "internal"),
                    (
                        "posted__gte",
                        django.db.models.expressions.CombinedExpression(
                            django.db.models.expressions.CombinedExpression(
                                models.F("pending"), "-", models.F("overdraft_limit")
                            ),
                            "-",
                            models.F("network_overdraft"),
                        ),
                    ),
                    _connector="OR",
                ),
                name="account_available_nonneg",
            ),
        ),
        migrations.RunSQL(
            sql=(SQL / "network_overdraft.sql").read_text() + (SQL / "posting.sql").read_text(),
            # tx_post's `forced` check stays (nothing calls it without the column's rows).
            reverse_sql="DROP TRIGGER IF EXISTS accounts_network_overdraft_repaid ON accounts_account;"
            "DROP FUNCTION IF EXISTS tx_network_overdraft_repaid();",
        ),
    ]
