"""`nationalId`: encrypted at rest, bound to its column, and never answered in full."""

import pytest
from cryptography.exceptions import InvalidTag
from django.db import connection

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
