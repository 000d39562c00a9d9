"""Client metadata on customers (core.metadata, docs/metadata.md)."""

import core.metadata
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("customers", "0002_alter_customer_institution")]

    # The column's CHECK (a JSON object) comes with the field (MetadataField.db_check).
    operations = [
        migrations.AddField(
            model_name="customer",
            name="metadata",
            field=core.metadata.MetadataField(),
        ),
    ]
