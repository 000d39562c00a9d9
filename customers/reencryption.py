"""Customers' national ids under key rotation (`core.reencryption`; registered by
CustomersConfig)."""

from django.db.models import QuerySet

from core.reencryption import EncryptedRows, decrypting
from customers.models import Customer


def _stale(key_id: str) -> QuerySet:
    return Customer.objects.filter(national_id_encrypted__isnull=False).exclude(
        national_id_encrypted__startswith=f"{key_id}:"
    )


def _reseal(customer: Customer) -> None:
    customer.set_national_id(decrypting(customer, customer.national_id))
    customer.save(update_fields=["national_id_encrypted"])


CUSTOMERS = EncryptedRows(
    name="customers", describe="{n} customer national id(s)", stale=_stale, reseal=_reseal
)
