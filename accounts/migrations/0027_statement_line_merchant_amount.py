"""A card payment's statement line shows what the merchant charged in its own currency (issue 31
item 4, docs/card-transactions.md, "Foreign currency"): two nullable columns (null for every line
so far, no rewrite of the table) and a CHECK that they come together, the amount positive."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0026_statement_line"),
    ]

    operations = [
        migrations.AddField(
            model_name="statementline",
            name="merchant_amount",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="statementline",
            name="merchant_currency",
            field=models.CharField(blank=True, max_length=3, null=True),
        ),
        migrations.AddConstraint(
            model_name="statementline",
            constraint=models.CheckConstraint(
                condition=models.Q(merchant_amount__isnull=True, merchant_currency__isnull=True)
                | models.Q(merchant_amount__gt=0, merchant_currency__isnull=False),
                name="transaction_merchant_amount_pair",
            ),
        ),
    ]
