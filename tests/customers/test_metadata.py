"""Client metadata on customers over HTTP (docs/metadata.md): set on create, returned by every
representation, merged on PATCH with null removing a key, limits at their edge and one past,
refusals change nothing, events carry it; v2 only."""

import pytest

from customers.models import Customer
from events.models import Event
from events.payloads import event_payload
from tests.conftest import error_of
from tests.customers.helpers import SPEC_FIELDS, create, resource_of


def keys(n: int, prefix: str = "k") -> dict:
    return {f"{prefix}{i}": f"value {i}" for i in range(n)}


def customer_events(customer_id: str) -> list[tuple[str, dict]]:
    return [
        (event.type, event_payload(event)["data"])
        for event in Event.objects.filter(object_id=customer_id).order_by("id")
    ]


def assert_refused(response, message: str) -> None:
    assert response.status_code == 400, response.content
    error = error_of(response, "v2")
    assert error["code"] == "validation_error"
    assert error["details"] == {"metadata": message}


def test_set_on_create_and_returned_by_create_get_and_list(api_v2):
    metadata = {"crmId": "c-123", "segment": "gold"}
    response = api_v2.post("/customers", {**SPEC_FIELDS, "metadata": metadata})
    assert response.status_code == 201, response.content
    created = resource_of(response, "v2")
    assert created["metadata"] == metadata

    customer_id = created["customerId"]
    assert resource_of(api_v2.get(f"/customers/{customer_id}"), "v2")["metadata"] == metadata
    [listed] = api_v2.get("/customers").json()["data"]
    assert listed["metadata"] == metadata
    assert Customer.objects.get(pk=customer_id).metadata == metadata
    assert customer_events(customer_id) == [("customer.created", {"metadata": metadata})]


def test_without_metadata_a_customer_has_an_empty_object(api_v2):
    created = create(api_v2)
    assert created["metadata"] == {}
    assert customer_events(created["customerId"]) == [("customer.created", {})]


def test_patch_merges_and_null_removes_a_key(api_v2):
    customer_id = create(api_v2, {**SPEC_FIELDS, "metadata": {"a": "1", "b": "2"}})["customerId"]

    response = api_v2.patch(
        f"/customers/{customer_id}", {"metadata": {"b": None, "c": "3", "a": "one"}}
    )

    assert response.status_code == 200, response.content
    assert resource_of(response, "v2")["metadata"] == {"a": "one", "c": "3"}
    shown = resource_of(api_v2.get(f"/customers/{customer_id}"), "v2")
    assert shown["metadata"] == {"a": "one", "c": "3"}
    assert customer_events(customer_id)[-1] == (
        "customer.updated",
        {"changedFields": ["metadata"], "metadata": {"a": "one", "c": "3"}},
    )


def test_removing_the_last_key_says_so_in_the_event(api_v2):
    customer_id = create(api_v2, {**SPEC_FIELDS, "metadata": {"a": "1"}})["customerId"]
    response = api_v2.patch(f"/customers/{customer_id}", {"metadata": {"a": None}})
    assert resource_of(response, "v2")["metadata"] == {}
    assert customer_events(customer_id)[-1] == (
        "customer.updated",
        {"changedFields": ["metadata"], "metadata": {}},
    )


def test_a_patch_that_changes_nothing_emits_nothing(api_v2):
    customer_id = create(api_v2, {**SPEC_FIELDS, "metadata": {"a": "1"}})["customerId"]
    before = customer_events(customer_id)
    for patch in ({"a": "1"}, {"absent": None}, {}):
        response = api_v2.patch(f"/customers/{customer_id}", {"metadata": patch})
        assert response.status_code == 200, response.content
        assert resource_of(response, "v2")["metadata"] == {"a": "1"}
    assert customer_events(customer_id) == before


def test_metadata_with_other_fields_is_one_change(api_v2):
    customer_id = create(api_v2)["customerId"]
    api_v2.patch(f"/customers/{customer_id}", {"lastName": "Byron", "metadata": {"x": "y"}})
    assert customer_events(customer_id)[-1] == (
        "customer.updated",
        {"changedFields": ["lastName", "metadata"], "metadata": {"x": "y"}},
    )


@pytest.mark.parametrize(
    "metadata",
    [keys(50), {"k" * 40: "v"}, {"k": "v" * 500}],
    ids=["50 keys", "40-char key", "500-char value"],
)
def test_limits_at_their_edge_are_accepted(api_v2, metadata):
    created = create(api_v2, {**SPEC_FIELDS, "metadata": metadata})
    shown = resource_of(api_v2.get(f"/customers/{created['customerId']}"), "v2")
    assert shown["metadata"] == metadata


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        (keys(51), "At most 50 keys (got 51)."),
        ({"k" * 41: "v"}, f'Key "{"k" * 41}" is longer than 40 characters.'),
        ({"k": "v" * 501}, 'The value of "k" is longer than 500 characters.'),
        ({"orderCount": 3}, 'The value of "orderCount" must be a string.'),
        ({"vip": True}, 'The value of "vip" must be a string.'),
        ({"nested": {"a": "b"}}, 'The value of "nested" must be a string.'),
        ({"gone": None}, 'The value of "gone" must be a string.'),
        ({"": "v"}, "Keys must be non-empty strings."),
        (["a", "b"], "Must be a JSON object of string keys and string values."),
        ("a=b", "Must be a JSON object of string keys and string values."),
        (None, "This field may not be null."),
    ],
    ids=[
        "51 keys",
        "41-char key",
        "501-char value",
        "number",
        "boolean",
        "object",
        "null value",
        "empty key",
        "list",
        "string",
        "null",
    ],
)
def test_limits_one_past_and_wrong_types_are_refused_and_create_nothing(api_v2, metadata, message):
    assert_refused(api_v2.post("/customers", {**SPEC_FIELDS, "metadata": metadata}), message)
    assert not Customer.objects.exists()
    assert not Event.objects.exists()


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (
            keys(2, prefix="n"),
            "At most 50 keys: this update would leave 51. Remove keys by setting them to null.",
        ),
        ({"k0": 7}, 'The value of "k0" must be a string (or null to remove the key).'),
        ({"k" * 41: None}, f'Key "{"k" * 41}" is longer than 40 characters.'),
        ({"k0": "v" * 501}, 'The value of "k0" is longer than 500 characters.'),
        (None, "This field may not be null."),
    ],
    ids=["51 after the merge", "number", "41-char key", "501-char value", "null"],
)
def test_a_refused_patch_changes_nothing(api_v2, patch, message):
    customer_id = create(api_v2, {**SPEC_FIELDS, "metadata": keys(49)})["customerId"]
    before = (Customer.objects.get(pk=customer_id).metadata, customer_events(customer_id))

    assert_refused(
        api_v2.patch(f"/customers/{customer_id}", {"lastName": "Byron", "metadata": patch}),
        message,
    )

    customer = Customer.objects.get(pk=customer_id)
    assert (customer.metadata, customer_events(customer_id)) == before
    assert customer.last_name == "Lovelace"


def test_v1_neither_takes_nor_shows_metadata(api_v1, api_v2):
    response = api_v1.post("/customers", {**SPEC_FIELDS, "metadata": {"a": "b"}})
    assert response.status_code == 400
    assert error_of(response, "v1")["details"] == {"metadata": "Unknown field."}

    customer_id = create(api_v2, {**SPEC_FIELDS, "metadata": {"a": "b"}})["customerId"]
    assert "metadata" not in resource_of(api_v1.get(f"/customers/{customer_id}"), "v1")
    response = api_v1.patch(f"/customers/{customer_id}", {"metadata": {"a": None}})
    assert error_of(response, "v1")["details"] == {"metadata": "Unknown field."}
    assert Customer.objects.get(pk=customer_id).metadata == {"a": "b"}
