"""Client metadata on transfers (core.metadata, docs/metadata.md)."""

import core.metadata
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("transfers", "0004_transfer_batches")]

    # The column's CHECK (a JSON object) comes with the field (MetadataField.db_check).
    operations = [
        migrations.AddField(
            model_name="transfer",
            name="metadata",
            field=core.metadata.MetadataField(),
        ),
    ]
