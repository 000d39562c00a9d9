"""Client metadata on cards (core.metadata, docs/metadata.md)."""

import core.metadata
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("cards", "0006_products_by_bank")]

    # The column's CHECK (a JSON object) comes with the field (MetadataField.db_check).
    operations = [
        migrations.AddField(
            model_name="card",
            name="metadata",
            field=core.metadata.MetadataField(),
        ),
    ]
