"""Writes on customers. Each runs in one transaction with the event it emits.

The customer rules are here, for every caller (the API, the admin, commands): names not blank,
a real e-mail address, an E.164 phone number, a date of birth in the past (after 1900), a
national id of 4 to 32 letters, digits, spaces, '-' or '/'. A write that breaks one is 400
`validation_error` with `details` keyed by the domain's field names (the API renders them in
its own: `api.names`). The API's serializers parse the body's shape and types; they apply these
same rules (`customer_field_error`, `PHONE_RE`, `NATIONAL_ID_RE`) field by field, so that one
answer lists every problem of a body, and the OpenAPI schema shows the patterns.
"""

import re
from datetime import date

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone

from core.exceptions import ValidationFailed
from core.metadata import metadata_check, metadata_merge
from events.services import emit_for
from institutions.models import Institution

from .locks import lock_customer
from .models import Customer

PHONE_RE = re.compile(r"\A\+[1-9][0-9]{6,14}\Z")  # not \d: it also matches non-ASCII digits
NATIONAL_ID_RE = re.compile(r"\A[A-Za-z0-9\-/ ]{4,32}\Z")
NAME_BLANK = "This field may not be blank."
NAME_NULL = "This field may not be null."
EMAIL_INVALID = "Enter a valid email address."
PHONE_INVALID = "Must be an E.164 number, e.g. +4915112345678."
DATE_OF_BIRTH_INVALID = "Must be a past date after 1900-01-01."
NATIONAL_ID_INVALID = "Must be 4 to 32 letters, digits, spaces, '-' or '/'."
EARLIEST_BIRTH = date(1900, 1, 1)

# What a customer's change may name (the API's names of these: `api.names`).
UPDATABLE = frozenset(
    {
        "first_name",
        "last_name",
        "country_code",
        "email",
        "phone",
        "date_of_birth",
        "national_id",
        "address",
        "metadata",
    }
)


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
    metadata: dict | None = None,
) -> Customer:
    """Create a customer of `institution` and emit `customer.created`.

    400 `validation_error` when a field breaks a customer rule (`customer_field_error`) or
    `metadata` the metadata rule (`core.metadata`). The caller has checked the ISO country
    codes and the address's shape (the API's serializers).
    """
    _check(
        {
            "first_name": first_name,
            "last_name": last_name,
            "email": email,
            "phone": phone,
            "date_of_birth": date_of_birth,
            "national_id": national_id,
        }
    )
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
    customer.metadata = metadata_check(metadata or {})
    with transaction.atomic(savepoint=False):
        customer.save(force_insert=True)
        emit_for(customer, "customer.created")
    return customer


def customer_update(*, customer: Customer, changes: dict) -> Customer:
    """Apply `changes` (domain field names; `address` replaces the whole address, None clears an
    optional field; `metadata` is merged into the stored metadata, `core.metadata_merge`) and
    emit `customer.updated` with the names of the fields that changed. A change that changes
    nothing emits nothing. 400 `validation_error` when a field breaks a customer rule
    (`customer_field_error`) or the metadata rule."""
    unknown = set(changes) - UPDATABLE
    if unknown:
        raise ValueError(f"Not updatable: {sorted(unknown)}")
    _check(changes)
    with transaction.atomic(savepoint=False):
        customer = lock_customer(customer.pk)
        changed = []
        for field, value in changes.items():
            if field == "address":
                if customer.address != (_full_address(value) if value else None):
                    customer.set_address(value)
                    changed.append(field)
            elif field == "metadata":
                merged = metadata_merge(customer.metadata, value)
                if merged != customer.metadata:
                    customer.metadata = merged
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
            emit_for(
                customer,
                "customer.updated",
                data={"changed_fields": sorted(changed)},
            )
    return customer


def customer_field_error(field: str, value) -> str | None:
    """What is wrong with `value` as the customer's `field` (a domain name), or None. None clears
    an optional field: never wrong there."""
    if field in ("first_name", "last_name"):
        if value is None:
            return NAME_NULL
        return NAME_BLANK if not value.strip() else None
    if value is None:
        return None
    if field == "email":
        try:
            validate_email(value)
        except ValidationError:
            return EMAIL_INVALID
    elif field == "phone":
        return None if PHONE_RE.match(value) else PHONE_INVALID
    elif field == "date_of_birth":
        today = date.today()  # noqa: DTZ011 (the server's day, as the API has always counted it)
        return None if EARLIEST_BIRTH <= value <= today else DATE_OF_BIRTH_INVALID
    elif field == "national_id":
        return None if NATIONAL_ID_RE.match(value) else NATIONAL_ID_INVALID
    return None


def _check(fields: dict) -> None:
    errors = {}
    for field, value in fields.items():
        message = customer_field_error(field, value)
        if message is not None:
            errors[field] = message
    if errors:
        raise ValidationFailed(details=errors)


def _full_address(address: dict) -> dict:
    return {
        key: address.get(key) for key in ("line1", "line2", "city", "postal_code", "country_code")
    }
