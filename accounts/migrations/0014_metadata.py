"""Client metadata on accounts and holds (core.metadata, docs/metadata.md)."""

import core.metadata
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("accounts", "0013_products_by_bank")]

    # The column's CHECK (a JSON object) comes with the field (MetadataField.db_check).
    operations = [
        migrations.AddField(
            model_name="account",
            name="metadata",
            field=core.metadata.MetadataField(),
        ),
        migrations.AddField(
            model_name="hold",
            name="metadata",
            field=core.metadata.MetadataField(),
        ),
    ]
