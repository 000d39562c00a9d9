"""Two-phase transfers: a hold may be a pending transfer's (purpose `transfer`)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("accounts", "0014_metadata")]

    operations = [
        migrations.AlterField(
            model_name="hold",
            name="purpose",
            field=models.CharField(
                choices=[
                    ("hold", "Placed through /holds"),
                    ("card_authorization", "A card authorization's hold"),
                    ("transfer", "A two-phase transfer's hold"),
                ],
                default="hold",
                max_length=32,
            ),
        ),
    ]
