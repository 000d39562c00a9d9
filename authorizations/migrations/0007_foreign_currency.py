"""Foreign currency on authorizations (issue 31 item 4, docs/card-transactions.md, "Foreign
currency"): the merchant's amount and currency as the network sends them, and the conversion
rate derived from them and the billing amount. Nullable columns (null for every authorization
so far, no rewrite of the table) and CHECKs: the pair together or not at all, the amount
positive, a rate only where the merchant's currency is not the billing one."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("authorizations", "0006_authorization_awaiting_idx"),
    ]

    operations = [
        migrations.AddField(
            model_name="authorization",
            name="merchant_amount",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="authorization",
            name="merchant_currency",
            field=models.CharField(blank=True, max_length=3, null=True),
        ),
        migrations.AddField(
            model_name="authorization",
            name="conversion_rate",
            field=models.DecimalField(blank=True, decimal_places=20, max_digits=40, null=True),
        ),
        migrations.AddConstraint(
            model_name="authorization",
            constraint=models.CheckConstraint(
                condition=models.Q(merchant_amount__isnull=True, merchant_currency__isnull=True)
                | models.Q(merchant_amount__isnull=False, merchant_currency__isnull=False),
                name="authorization_merchant_amount_pair",
            ),
        ),
        migrations.AddConstraint(
            model_name="authorization",
            constraint=models.CheckConstraint(
                condition=models.Q(merchant_amount__isnull=True) | models.Q(merchant_amount__gt=0),
                name="authorization_merchant_amount_positive",
            ),
        ),
        migrations.AddConstraint(
            model_name="authorization",
            constraint=models.CheckConstraint(
                condition=models.Q(conversion_rate__isnull=True)
                | (
                    models.Q(conversion_rate__gt=0, merchant_currency__isnull=False)
                    & ~models.Q(merchant_currency=models.F("currency"))
                ),
                name="authorization_conversion_rate_foreign",
            ),
        ),
    ]
