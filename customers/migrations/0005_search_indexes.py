"""The back office's search (backoffice/search.py, docs/back-office.md "Search"), built
CONCURRENTLY: the table takes writes while a bank's existing rows are indexed."""

import django.db.models.functions.text
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ("customers", "0004_short_national_ids_keep_no_last4"),
        ("institutions", "0006_staff_roles_view_holidays"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="customer",
            index=models.Index(
                django.db.models.functions.text.Upper("last_name"), name="customer_last_name_idx"
            ),
        ),
        AddIndexConcurrently(
            model_name="customer",
            index=models.Index(
                django.db.models.functions.text.Upper("first_name"), name="customer_first_name_idx"
            ),
        ),
        AddIndexConcurrently(
            model_name="customer",
            index=models.Index(
                django.db.models.functions.text.Upper("email"), name="customer_email_idx"
            ),
        ),
        AddIndexConcurrently(
            model_name="customer",
            index=models.Index(fields=["phone"], name="customer_phone_idx"),
        ),
        AddIndexConcurrently(
            model_name="customer",
            index=models.Index(fields=["national_id_last4"], name="customer_national_id_last4_idx"),
        ),
    ]
