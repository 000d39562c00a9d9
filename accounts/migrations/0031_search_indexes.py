"""The back office's search (backoffice/search.py, docs/back-office.md "Search"), built
CONCURRENTLY: the table takes writes while a bank's existing rows are indexed."""

import django.db.models.functions.text
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ("accounts", "0030_value_dates"),
        ("customers", "0004_short_national_ids_keep_no_last4"),
        ("institutions", "0006_staff_roles_view_holidays"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="account",
            index=models.Index(
                django.db.models.functions.text.Right("account_number", 4),
                name="account_number_last4_idx",
            ),
        ),
    ]
