"""`customer_create` / `customer_update`: the write and its event commit together, or neither."""

from datetime import date, timedelta

import pytest
from django.db import transaction

from api.names import api_details
from core.exceptions import ValidationFailed
from customers.models import Customer
from customers.services import customer_create, customer_update
from events.models import Event
from events.payloads import event_payload
from tests.conftest import error_of

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
    assert [
        (e.institution_id, e.type, e.object_type, e.object_id, event_payload(e)["data"])
        for e in events
    ] == [(institution.id, "customer.created", "customer", customer.id, {})]
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
            "date_of_birth": date(1915, 12, 10),  # after 1900: a customer rule
            "email": None,  # already None: not listed
        },
    )

    event = Event.objects.get(type="customer.updated")
    assert (event.institution_id, event.object_type, event.object_id) == (
        institution.id,
        "customer",
        customer.id,
    )
    assert event_payload(event)["data"] == {
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
        event_payload(event)["data"]
        for event in Event.objects.filter(type="customer.updated").order_by("id")
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


# --- the customer rules, whoever calls (the API's answers: tests/customers/test_api.py)
TOMORROW = date.today() + timedelta(days=1)  # noqa: DTZ011 (the rule counts the server's day)
BROKEN_RULES = [
    pytest.param("first_name", "   ", "This field may not be blank.", "firstName", id="blank-name"),
    pytest.param("last_name", "", "This field may not be blank.", "lastName", id="empty-name"),
    pytest.param("email", "ada.example.com", "Enter a valid email address.", "email", id="email"),
    pytest.param(
        "phone",
        "0151 1234567",
        "Must be an E.164 number, e.g. +4915112345678.",
        "phone",
        id="phone",
    ),
    pytest.param(
        "phone",
        "+4٩١٥١١٢٣٤٥٦٧٨",
        "Must be an E.164 number, e.g. +4915112345678.",
        "phone",
        id="phone-non-ascii-digits",
    ),
    pytest.param(
        "date_of_birth",
        TOMORROW,
        "Must be a past date after 1900-01-01.",
        "dateOfBirth",
        id="born-tomorrow",
    ),
    pytest.param(
        "date_of_birth",
        date(1899, 12, 31),
        "Must be a past date after 1900-01-01.",
        "dateOfBirth",
        id="born-before-1900",
    ),
    pytest.param(
        "national_id",
        "12",
        "Must be 4 to 32 letters, digits, spaces, '-' or '/'.",
        "nationalId",
        id="national-id-short",
    ),
    pytest.param(
        "national_id",
        "1234;DROP",
        "Must be 4 to 32 letters, digits, spaces, '-' or '/'.",
        "nationalId",
        id="national-id-characters",
    ),
]


@pytest.mark.parametrize(("field", "value", "message", "api_name"), BROKEN_RULES)
def test_create_refuses_a_broken_rule_in_the_domains_names(
    institution, field, value, message, api_name
):
    with pytest.raises(ValidationFailed) as excinfo:
        new_customer(institution, **{field: value})

    assert (excinfo.value.status, excinfo.value.code) == (400, "validation_error")
    assert excinfo.value.details == {field: message}
    assert not Customer.objects.exists()
    assert not Event.objects.exists()


@pytest.mark.parametrize(("field", "value", "message", "api_name"), BROKEN_RULES)
def test_update_refuses_a_broken_rule_and_changes_nothing(
    institution, field, value, message, api_name
):
    customer = new_customer(institution)
    before = Customer.objects.filter(pk=customer.pk).values().get()

    with pytest.raises(ValidationFailed) as excinfo:
        customer_update(customer=customer, changes={"phone": "+4915112345678", field: value})

    assert excinfo.value.details == {field: message}
    assert Customer.objects.filter(pk=customer.pk).values().get() == before
    assert list(Event.objects.values_list("type", flat=True)) == ["customer.created"]


def test_every_broken_rule_is_reported_at_once_in_field_order(institution):
    with pytest.raises(ValidationFailed) as excinfo:
        new_customer(
            institution,
            first_name=" ",
            email="nope",
            phone="12",
            date_of_birth=TOMORROW,
            national_id="x",
        )

    assert list(excinfo.value.details) == [
        "first_name",
        "email",
        "phone",
        "date_of_birth",
        "national_id",
    ]


def test_null_clears_an_optional_field_but_never_a_name(institution):
    customer = new_customer(institution, email="ada@example.com", date_of_birth=date(1990, 1, 1))

    customer_update(
        customer=customer,
        changes={"email": None, "phone": None, "date_of_birth": None, "national_id": None},
    )
    with pytest.raises(ValidationFailed) as excinfo:
        customer_update(customer=customer, changes={"last_name": None})

    assert excinfo.value.details == {"last_name": "This field may not be null."}
    assert Customer.objects.get(pk=customer.pk).last_name == "Lovelace"


def test_the_edges_of_the_rules_are_allowed(institution):
    customer = new_customer(
        institution,
        date_of_birth=date(1900, 1, 1),
        national_id="AB/1 2-3",
        phone="+1234567",
    )
    today = date.today()  # noqa: DTZ011
    customer_update(customer=customer, changes={"date_of_birth": today})

    stored = Customer.objects.get(pk=customer.pk)
    assert (stored.date_of_birth, stored.national_id(), stored.phone) == (
        today,
        "AB/1 2-3",
        "+1234567",
    )


@pytest.mark.parametrize(("field", "value", "message", "api_name"), BROKEN_RULES)
def test_the_services_refusal_renders_as_the_apis_answer(api, field, value, message, api_name):
    """The API refuses a broken rule as it always has (its serializer reports it with the body's
    other errors); the service's own refusal, rendered for the version, says the same."""
    body = {"firstName": "Ada", "lastName": "Lovelace", "countryId": "826"}
    body[api_name] = value.isoformat() if isinstance(value, date) else value
    response = api.post("/customers", body)

    assert response.status_code == 400
    answered = error_of(response, api.version)["details"]
    assert answered == {api_name: message}
    assert api_details({field: message}, api.version) == answered
