"""Writes on customers. Each runs in one transaction with the event it emits."""

from datetime import date

from django.db import transaction
from django.utils import timezone

from events.services import emit
from institutions.models import Institution

from .models import Customer

# Domain field -> the field name the API and events use.
_API_NAMES = {
    "first_name": "firstName",
    "last_name": "lastName",
    "country_code": "countryId",
    "email": "email",
    "phone": "phone",
    "date_of_birth": "dateOfBirth",
    "national_id": "nationalId",
    "address": "address",
}


def customer_create(
    *,
    institution: Institution,
    first_name: str,
    last_name: str,
    country_code: str,
    email: str | None = None,
    phone: str | None = None,
    date_of_birth: date | None = None,
    national_id: str | None = None,
    address: dict | None = None,
) -> Customer:
    """Create a customer of `institution` and emit `customer.created`.

    Input is validated by the caller's serializer (ISO codes, formats); this records it.
    """
    now = timezone.now()  # one instant: a new customer's updatedAt is its createdAt
    customer = Customer(
        institution=institution,
        created_at=now,
        updated_at=now,
        first_name=first_name,
        last_name=last_name,
        country_code=country_code,
        email=email,
        phone=phone,
        date_of_birth=date_of_birth,
    )
    customer.set_national_id(national_id)
    customer.set_address(address)
    with transaction.atomic(savepoint=False):
        customer.save(force_insert=True)
        emit(
            institution=institution,
            type="customer.created",
            object_type="customer",
            object_id=customer.id,
        )
    return customer


def customer_update(*, customer: Customer, changes: dict) -> Customer:
    """Apply `changes` (domain field names; `address` replaces the whole address, None clears an
    optional field) and emit `customer.updated` with the names of the fields that changed.
    A change that changes nothing emits nothing."""
    unknown = set(changes) - set(_API_NAMES)
    if unknown:
        raise ValueError(f"Not updatable: {sorted(unknown)}")
    with transaction.atomic(savepoint=False):
        customer = Customer.objects.select_for_update().get(pk=customer.pk)
        changed = []
        for field, value in changes.items():
            if field == "address":
                if customer.address != (_full_address(value) if value else None):
                    customer.set_address(value)
                    changed.append(field)
            elif field == "national_id":
                if value != customer.national_id():
                    customer.set_national_id(value)
                    changed.append(field)
            elif getattr(customer, field) != value:
                setattr(customer, field, value)
                changed.append(field)
        if changed:
            customer.updated_at = timezone.now()
            customer.save()
            emit(
                institution=customer.institution,
                type="customer.updated",
                object_type="customer",
                object_id=customer.id,
                data={"changedFields": sorted(_API_NAMES[field] for field in changed)},
            )
    return customer


def _full_address(address: dict) -> dict:
    return {
        key: address.get(key) for key in ("line1", "line2", "city", "postal_code", "country_code")
    }
