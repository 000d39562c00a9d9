"""`customer_create` / `customer_update`: the write and its event commit together, or neither."""

from datetime import date

import pytest
from django.db import transaction

from customers.models import Customer
from customers.services import customer_create, customer_update
from events.models import Event

ADDRESS = {
    "line1": "Unter den Linden 1",
    "line2": None,
    "city": "Berlin",
    "postal_code": "10117",
    "country_code": "276",
}


class Boom(Exception):
    pass


def new_customer(institution, **fields):
    return customer_create(
        institution=institution,
        **{"first_name": "Ada", "last_name": "Lovelace", "country_code": "826", **fields},
    )


def test_create_emits_one_customer_created_event(institution):
    customer = new_customer(institution, national_id="AB123456", address=ADDRESS)

    events = list(Event.objects.all())
    assert [(e.institution_id, e.type, e.object_type, e.object_id, e.data) for e in events] == [
        (institution.id, "customer.created", "customer", customer.id, {})
    ]
    assert Customer.objects.get(pk=customer.id).address == ADDRESS


def test_create_rolls_back_with_its_event(institution):
    with pytest.raises(Boom), transaction.atomic():
        new_customer(institution)
        assert Event.objects.count() == 1  # emitted, then undone with the customer
        raise Boom

    assert not Customer.objects.exists()
    assert not Event.objects.exists()


def test_update_emits_one_event_with_the_sorted_api_names_of_the_changed_fields(institution):
    customer = new_customer(institution, phone="+4915112345678", national_id="AB123456")

    updated = customer_update(
        customer=customer,
        changes={
            "phone": "+4915199999999",
            "last_name": "Lovelace",  # unchanged: not listed
            "first_name": "Augusta",
            "address": ADDRESS,
            "national_id": "AB999999",
            "country_code": "276",
            "date_of_birth": date(1815, 12, 10),
            "email": None,  # already None: not listed
        },
    )

    event = Event.objects.get(type="customer.updated")
    assert (event.institution_id, event.object_type, event.object_id) == (
        institution.id,
        "customer",
        customer.id,
    )
    assert event.data == {
        "changedFields": [
            "address",
            "countryId",
            "dateOfBirth",
            "firstName",
            "nationalId",
            "phone",
        ]
    }
    stored = Customer.objects.get(pk=customer.id)
    assert (stored.first_name, stored.phone, stored.country_code) == (
        "Augusta",
        "+4915199999999",
        "276",
    )
    assert stored.national_id() == "AB999999"
    assert stored.national_id_last4 == "9999"
    assert stored.updated_at > customer.updated_at
    assert updated.updated_at == stored.updated_at


def test_update_without_an_actual_change_emits_nothing(institution):
    customer = new_customer(
        institution, email="ada@example.com", national_id="AB123456", address=ADDRESS
    )
    before = Customer.objects.get(pk=customer.id)

    customer_update(
        customer=customer,
        changes={
            "first_name": "Ada",
            "email": "ada@example.com",
            "national_id": "AB123456",
            # the same address, with line2 left out instead of None
            "address": {key: value for key, value in ADDRESS.items() if key != "line2"},
            "phone": None,
        },
    )
    customer_update(customer=customer, changes={})

    assert list(Event.objects.values_list("type", flat=True)) == ["customer.created"]
    after = Customer.objects.get(pk=customer.id)
    assert after.updated_at == before.updated_at
    assert after.national_id_encrypted == before.national_id_encrypted


def test_update_of_the_address_counts_one_changed_field(institution):
    customer = new_customer(institution, address=ADDRESS)

    customer_update(customer=customer, changes={"address": dict(ADDRESS, city="Potsdam")})
    customer_update(customer=customer, changes={"address": None})

    assert [
        event.data for event in Event.objects.filter(type="customer.updated").order_by("id")
    ] == [{"changedFields": ["address"]}, {"changedFields": ["address"]}]
    assert Customer.objects.get(pk=customer.id).address is None


def test_update_rolls_back_with_its_event(institution):
    customer = new_customer(institution)

    with pytest.raises(Boom), transaction.atomic():
        customer_update(customer=customer, changes={"first_name": "Augusta"})
        assert Event.objects.filter(type="customer.updated").count() == 1
        raise Boom

    assert Customer.objects.get(pk=customer.id).first_name == "Ada"
    assert not Event.objects.filter(type="customer.updated").exists()


def test_update_refuses_a_field_that_is_not_updatable(institution):
    customer = new_customer(institution)

    with pytest.raises(ValueError, match="Not updatable: \\['institution'\\]"):
        customer_update(customer=customer, changes={"institution": None, "first_name": "X"})

    assert Customer.objects.get(pk=customer.id).first_name == "Ada"
    assert not Event.objects.filter(type="customer.updated").exists()
