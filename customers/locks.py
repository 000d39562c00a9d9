"""The row locks of customers (docs/design.md section 2; the order: docs/money.md, "Locking")."""

from .models import Customer


def lock_customer(customer_id: str) -> Customer:
    """The customer, its row locked until the transaction ends (an update reads and writes it
    under the lock)."""
    return Customer.objects.select_for_update().get(pk=customer_id)
