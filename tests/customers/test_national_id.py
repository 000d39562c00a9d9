"""`nationalId`: encrypted at rest, bound to its column, and never answered in full."""

import importlib

import pytest
from cryptography.exceptions import InvalidTag
from django.apps import apps as django_apps
from django.db import connection
from django.urls import reverse

from api.models import IdempotencyRecord
from core import crypto
from customers.models import NATIONAL_ID_CONTEXT, Customer
from tests.customers.helpers import SPEC_FIELDS, create, resource_of

NATIONAL_ID = "QX-5518-7734"
DISTINCTIVE = "5518"  # a piece of the id that the last four characters do not contain


def raw_national_id(customer_id):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT national_id_encrypted, national_id_last4 FROM customers_customer WHERE id = %s",
            [customer_id],
        )
        return cursor.fetchone()


def test_national_id_is_stored_encrypted_under_the_current_key(api):
    customer_id = create(api, dict(SPEC_FIELDS, nationalId=NATIONAL_ID))["customerId"]

    encrypted, last4 = raw_national_id(customer_id)

    assert encrypted.startswith("dev1:")
    assert NATIONAL_ID not in encrypted
    assert last4 == "7734"
    assert Customer.objects.get(pk=customer_id).national_id() == NATIONAL_ID


def test_the_same_national_id_encrypts_differently_each_time(api):
    first = create(api, dict(SPEC_FIELDS, nationalId=NATIONAL_ID))["customerId"]
    second = create(api, dict(SPEC_FIELDS, nationalId=NATIONAL_ID))["customerId"]

    assert raw_national_id(first)[0] != raw_national_id(second)[0]


def test_a_ciphertext_does_not_decrypt_in_another_context(api):
    customer_id = create(api, dict(SPEC_FIELDS, nationalId=NATIONAL_ID))["customerId"]
    encrypted, _ = raw_national_id(customer_id)

    context = f"{NATIONAL_ID_CONTEXT}:{customer_id}"
    assert crypto.decrypt(encrypted, context=context) == NATIONAL_ID
    with pytest.raises(InvalidTag):
        crypto.decrypt(encrypted, context="cards.Card.pan")
    with pytest.raises(InvalidTag):
        crypto.decrypt(encrypted, context=NATIONAL_ID_CONTEXT)


def test_a_ciphertext_copied_to_another_customer_does_not_decrypt(api):
    owner_id = create(api, dict(SPEC_FIELDS, nationalId=NATIONAL_ID))["customerId"]
    other_id = create(api, SPEC_FIELDS)["customerId"]
    encrypted, _ = raw_national_id(owner_id)
    Customer.objects.filter(id=other_id).update(national_id_encrypted=encrypted)

    assert Customer.objects.get(id=owner_id).national_id() == NATIONAL_ID
    with pytest.raises(InvalidTag):
        Customer.objects.get(id=other_id).national_id()


def test_a_tampered_ciphertext_does_not_decrypt():
    encrypted = crypto.encrypt(NATIONAL_ID, context=NATIONAL_ID_CONTEXT)
    kid, _, blob = encrypted.partition(":")
    flipped = blob[:-6] + ("A" if blob[-6] != "A" else "B") + blob[-5:]

    with pytest.raises(InvalidTag):
        crypto.decrypt(f"{kid}:{flipped}", context=NATIONAL_ID_CONTEXT)


def assert_hidden(response):
    text = response.content.decode()
    assert NATIONAL_ID not in text
    assert DISTINCTIVE not in text


def test_the_api_never_answers_the_full_national_id(api):
    created = api.post("/customers", dict(SPEC_FIELDS, nationalId=NATIONAL_ID))
    assert_hidden(created)
    customer_id = resource_of(created, api.version)["customerId"]
    assert resource_of(created, api.version)["nationalIdLast4"] == "7734"

    responses = [
        api.get(f"/customers/{customer_id}"),
        api.get("/customers"),
        api.patch(f"/customers/{customer_id}", {"firstName": "Changed"}),
        api.patch(f"/customers/{customer_id}", {"nationalId": "QX-5518-9901"}),
        api.post("/customers", dict(SPEC_FIELDS, nationalId=NATIONAL_ID, email="not-an-email")),
        api.get("/events"),
    ]
    events = responses[-1].json()["data"]
    responses += [api.get(f"/events/{event['id']}") for event in events]

    assert [response.status_code for response in responses[:4]] == [200, 200, 200, 200]
    assert responses[4].status_code == 400
    assert len(events) == 3
    for response in responses:
        assert_hidden(response)
    for response in responses[:1] + responses[2:4]:
        assert "nationalId" not in resource_of(response, api.version)
    assert "nationalId" not in responses[1].json()["data"][0]
    assert resource_of(responses[0], api.version)["nationalIdLast4"] == "7734"
    assert resource_of(responses[3], api.version)["nationalIdLast4"] == "9901"
    assert [event["data"] for event in events] == [
        {"changedFields": ["nationalId"]},
        {"changedFields": ["firstName"]},
        {},
    ]
    assert Customer.objects.get(pk=customer_id).national_id() == "QX-5518-9901"
    for record in IdempotencyRecord.objects.all():
        assert DISTINCTIVE.encode() not in bytes(record.response_body or b"")


# --- a short national id shows none of itself (docs/customers-and-products.md) -----------------

# Fewer than 8 letters and digits: the last four would be all or most of the id.
SHORT_IDS = ["q7a5", "AB123", "Q7A5-X9", "12-34-56", "A1/B2 C3 D"]


@pytest.mark.parametrize("national_id", SHORT_IDS)
def test_a_short_national_id_is_never_answered_in_part(api, national_id):
    created = api.post("/customers", dict(SPEC_FIELDS, nationalId=national_id))
    customer_id = resource_of(created, api.version)["customerId"]
    other = create(api)["customerId"]
    responses = [
        created,
        api.get(f"/customers/{customer_id}"),
        api.get("/customers"),
        api.patch(f"/customers/{other}", {"nationalId": national_id}),
        api.get("/events"),
    ]

    assert [response.status_code for response in responses[1:]] == [200, 200, 200, 200]
    for response in (created, responses[1], responses[3]):
        assert resource_of(response, api.version)["nationalIdLast4"] is None
    assert [row["nationalIdLast4"] for row in responses[2].json()["data"]] == [None, None]
    for response in responses:
        assert national_id[-4:] not in response.content.decode()
    assert raw_national_id(customer_id)[1] is None
    # Kept, encrypted, for the internal uses that need it.
    assert Customer.objects.get(pk=customer_id).national_id() == national_id
    assert Customer.objects.get(pk=other).national_id() == national_id


@pytest.mark.parametrize(
    ("national_id", "last4"),
    [("AB123456", "3456"), ("12-34-5678", "5678"), ("A1 B2 C3 D4", "3 D4")],
)
def test_an_id_of_8_letters_and_digits_or_more_shows_its_last_four(api, national_id, last4):
    created = create(api, dict(SPEC_FIELDS, nationalId=national_id))
    assert created["nationalIdLast4"] == last4
    # Cleared by a short one, and back with a long one.
    customer_id = created["customerId"]
    shortened = api.patch(f"/customers/{customer_id}", {"nationalId": "ZZ99"})
    assert resource_of(shortened, api.version)["nationalIdLast4"] is None
    restored = api.patch(f"/customers/{customer_id}", {"nationalId": national_id})
    assert resource_of(restored, api.version)["nationalIdLast4"] == last4


def test_the_admin_shows_none_of_a_short_national_id(admin_client, api_v2):
    short = create(api_v2, dict(SPEC_FIELDS, nationalId="Q7A5-X9"))["customerId"]
    absent = create(api_v2)["customerId"]
    long = create(api_v2, dict(SPEC_FIELDS, nationalId=NATIONAL_ID))["customerId"]

    def page(customer_id):
        response = admin_client.get(reverse("admin:customers_customer_change", args=[customer_id]))
        assert response.status_code == 200
        return response.content.decode()

    html = page(short)
    assert "A5-X9" not in html and "5-X9" not in html
    assert "•••• (too short to show any of it)" in html
    assert "•••• (too short to show any of it)" not in page(absent)
    assert "•••• 7734" in page(long)


def test_the_migration_clears_the_last_four_of_short_ids_stored_before_the_rule(api_v2):
    migration = importlib.import_module(
        "customers.migrations.0004_short_national_ids_keep_no_last4"
    )
    short = create(api_v2, dict(SPEC_FIELDS, nationalId="q7a5"))["customerId"]
    separated = create(api_v2, dict(SPEC_FIELDS, nationalId="12-34-56"))["customerId"]
    long = create(api_v2, dict(SPEC_FIELDS, nationalId=NATIONAL_ID))["customerId"]
    absent = create(api_v2)["customerId"]
    # As written before the rule: the last four of every id.
    Customer.objects.filter(pk=short).update(national_id_last4="q7a5")
    Customer.objects.filter(pk=separated).update(national_id_last4="4-56")

    migration.clear_short_last4(django_apps, None)

    assert {pk: raw_national_id(pk)[1] for pk in (short, separated, long, absent)} == {
        short: None,
        separated: None,
        long: "7734",
        absent: None,
    }
    assert Customer.objects.get(pk=short).national_id() == "q7a5"
