"""Customers whose national id is too short to show its last four (fewer than 8 letters and
digits, `customers.models.national_id_last4`) lose the last four stored before the rule: the
id is decrypted (`core.crypto`, the column's associated data) and its length checked. Only
rows that have a last four are read; a value that does not decrypt stops the migration (its key
must be in FIELD_ENCRYPTION_KEYS, as for `reencrypt_sensitive_data`)."""

from django.db import migrations

# Frozen here: the rule and the associated data as they were when this migration was written.
CONTEXT = "customers.Customer.national_id"
MIN_LENGTH = 8


def clear_short_last4(apps, schema_editor):
    from core import crypto

    Customer = apps.get_model("customers", "Customer")
    short = []
    rows = Customer.objects.filter(national_id_last4__isnull=False).values_list(
        "id", "national_id_encrypted"
    )
    for customer_id, encrypted in rows.iterator(chunk_size=2000):
        national_id = crypto.decrypt(encrypted, context=f"{CONTEXT}:{customer_id}")
        if sum(character.isalnum() for character in national_id) < MIN_LENGTH:
            short.append(customer_id)
    for start in range(0, len(short), 2000):
        Customer.objects.filter(id__in=short[start : start + 2000]).update(national_id_last4=None)


class Migration(migrations.Migration):
    dependencies = [("customers", "0003_metadata")]

    operations = [migrations.RunPython(clear_short_last4, migrations.RunPython.noop)]
