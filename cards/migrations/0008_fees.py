"""Fee schedules of card products (issue 15, docs/fees.md)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("cards", "0007_metadata")]

    operations = [
        migrations.AddField(
            model_name="cardproduct",
            name="atm_fee",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="cardproduct",
            name="replacement_fee",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="cardproduct",
            name="foreign_transaction_fee_bps",
            field=models.IntegerField(default=0),
        ),
        migrations.AddConstraint(
            model_name="cardproduct",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("atm_fee__gte", 0),
                    ("foreign_transaction_fee_bps__gte", 0),
                    ("foreign_transaction_fee_bps__lte", 10000),
                    ("replacement_fee__gte", 0),
                ),
                name="card_product_fees_valid",
            ),
        ),
    ]
