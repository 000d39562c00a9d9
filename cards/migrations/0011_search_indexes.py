"""The back office's search (backoffice/search.py, docs/back-office.md "Search"), built
CONCURRENTLY: the table takes writes while a bank's existing rows are indexed."""

import django.db.models.functions.text
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ("accounts", "0031_search_indexes"),
        ("cards", "0010_dispute_provisional_credit"),
        ("customers", "0004_short_national_ids_keep_no_last4"),
        ("institutions", "0006_staff_roles_view_holidays"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="card",
            index=models.Index(fields=["pan_last4"], name="card_pan_last4_idx"),
        ),
        AddIndexConcurrently(
            model_name="card",
            index=models.Index(
                django.db.models.functions.text.Upper("embossed_name"),
                name="card_embossed_name_idx",
            ),
        ),
    ]
