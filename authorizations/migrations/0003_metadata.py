"""Client metadata on card authorizations (core.metadata, docs/metadata.md)."""

import core.metadata
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("authorizations", "0002_alter_authorization_created_by_api_key_and_more")]

    # The column's CHECK (a JSON object) comes with the field (MetadataField.db_check).
    operations = [
        migrations.AddField(
            model_name="authorization",
            name="metadata",
            field=core.metadata.MetadataField(),
        ),
    ]
