"""`GET /events`, `GET /events/{eventId}` and `emit()`: what happened, per institution."""

import re

import pytest
from django.db import transaction

from api.context import iso_millis
from customers.services import customer_create, customer_update
from events.models import Event
from events.services import emit
from institutions.models import Institution
from tests.conftest import error_of
from tests.customers.helpers import create, resource_of

EVENT_ID = re.compile(r"^evt_[0-9A-Z]{26}$")
UNKNOWN_ID = "evt_00000000000000000000000000"


def events_page(api, **params):
    response = api.get("/events", params)
    assert response.status_code == 200, response.content
    payload = response.json()
    assert set(payload) == {"data", "nextCursor", "hasMore", "meta"}
    assert payload["hasMore"] is (payload["nextCursor"] is not None)
    return payload


def event_dict(event_id, type, customer_id, data, api_key):
    return {
        "id": event_id,
        "type": type,
        "objectType": "customer",
        "objectId": customer_id,
        "data": data,
        "actor": {"type": "apiKey", "id": api_key.id},
        "createdAt": iso_millis(Event.objects.get(pk=event_id).created_at),
    }


def test_creating_and_patching_a_customer_lists_their_events_newest_first(api, key):
    customer_id = create(api)["customerId"]
    patched = api.patch(
        f"/customers/{customer_id}", {"lastName": "King", "email": "ada@example.com"}
    )
    assert patched.status_code == 200

    payload = events_page(api)

    events = payload["data"]
    assert [event["id"] for event in events] == [
        event.id for event in Event.objects.order_by("-created_at")
    ]
    assert all(EVENT_ID.match(event["id"]) for event in events)
    assert events == [
        event_dict(
            events[0]["id"],
            "customer.updated",
            customer_id,
            {"changedFields": ["email", "lastName"]},
            key[0],
        ),
        event_dict(events[1]["id"], "customer.created", customer_id, {}, key[0]),
    ]
    assert (payload["nextCursor"], payload["hasMore"]) == (None, False)


def test_a_patch_that_changes_nothing_emits_no_event(api):
    customer_id = create(api)["customerId"]

    assert api.patch(f"/customers/{customer_id}", {"firstName": "Ada"}).status_code == 200

    assert [event["type"] for event in events_page(api)["data"]] == ["customer.created"]


def test_filter_by_type_and_object_id(api):
    first = create(api)["customerId"]
    second = create(api)["customerId"]
    api.patch(f"/customers/{first}", {"firstName": "Augusta"})
    api.patch(f"/customers/{second}", {"firstName": "Grace"})

    def listed(**params):
        return [(e["type"], e["objectId"]) for e in events_page(api, **params)["data"]]

    assert listed(type="customer.updated") == [
        ("customer.updated", second),
        ("customer.updated", first),
    ]
    assert listed(type="customer.created") == [
        ("customer.created", second),
        ("customer.created", first),
    ]
    assert listed(objectId=first) == [("customer.updated", first), ("customer.created", first)]
    assert listed(objectId=first, type="customer.created") == [("customer.created", first)]
    assert listed(objectId="cus_00000000000000000000000000") == []


@pytest.mark.parametrize(
    ("params", "details"),
    [
        ({"type": "customer.deleted"}, {"type": '"customer.deleted" is not a valid choice.'}),
        ({"objectId": "x" * 41}, {"objectId": "Ensure this field has no more than 40 characters."}),
        ({"limit": "0"}, {"limit": "Must be an integer from 1 to 100."}),
        ({"cursor": "AA"}, {"cursor": "Not a valid cursor."}),
    ],
)
def test_invalid_query_is_a_validation_error(api, params, details):
    response = api.get("/events", params)

    assert response.status_code == 400
    assert error_of(response, api.version) == {
        "code": "validation_error",
        "message": "The request is not valid.",
        "details": details,
    }


def test_pages_walk_every_event_exactly_once(api, institution):
    for n in range(5):
        customer_create(
            institution=institution, first_name=f"C{n}", last_name="X", country_code="276"
        )
    all_ids = sorted(Event.objects.values_list("id", flat=True), reverse=True)

    seen, sizes, cursor = [], [], None
    while True:
        payload = events_page(api, limit=2, **({"cursor": cursor} if cursor else {}))
        seen.extend(event["id"] for event in payload["data"])
        sizes.append(len(payload["data"]))
        cursor = payload["nextCursor"]
        if not payload["hasMore"]:
            break

    assert sizes == [2, 2, 1]
    assert seen == all_ids


def test_cursor_combines_with_a_filter(api, institution):
    customers = [
        customer_create(
            institution=institution, first_name=f"C{n}", last_name="X", country_code="276"
        )
        for n in range(3)
    ]
    for customer in customers:
        customer_update(customer=customer, changes={"first_name": "Changed"})
    updated = sorted(
        Event.objects.filter(type="customer.updated").values_list("id", flat=True), reverse=True
    )

    first = events_page(api, type="customer.updated", limit=2)
    second = events_page(api, type="customer.updated", limit=2, cursor=first["nextCursor"])

    assert [e["id"] for e in first["data"] + second["data"]] == updated
    assert second["hasMore"] is False


def test_get_one_event(api, key):
    customer_id = create(api)["customerId"]
    listed = events_page(api)["data"][0]

    response = api.get(f"/events/{listed['id']}")

    assert response.status_code == 200
    assert set(response.json()["meta"]) == {"tranId", "timestamp"}
    assert resource_of(response, api.version) == listed
    assert listed == event_dict(listed["id"], "customer.created", customer_id, {}, key[0])


def test_another_institutions_events_are_not_found_and_never_listed(api, other_api):
    create(other_api)
    theirs = events_page(other_api)["data"][0]

    response = api.get(f"/events/{theirs['id']}")
    unknown = api.get(f"/events/{UNKNOWN_ID}")

    assert response.status_code == 404
    assert error_of(response, api.version) == {
        "code": "not_found",
        "message": "No event with this id.",
    }
    assert error_of(unknown, api.version) == error_of(response, api.version)
    assert events_page(api)["data"] == []
    assert events_page(api, objectId=theirs["objectId"])["data"] == []
    assert events_page(api, type="customer.created")["data"] == []


def test_event_id_with_a_nul_is_not_found(api):
    response = api.get("/events/%00")

    assert response.status_code == 404
    assert error_of(response, api.version)["code"] == "not_found"


def test_events_are_read_only(api):
    response = api.post("/events", {"type": "customer.created"})

    assert response.status_code == 405
    assert error_of(response, api.version)["code"] == "method_not_allowed"


# --- emit()
def test_emit_outside_a_transaction_raises():
    # No database here: emit() must refuse before it writes anything.
    with pytest.raises(RuntimeError, match="must be called inside the transaction"):
        emit(
            institution=Institution(id="fi_x", name="x"),
            type="customer.created",
            object_type="customer",
            object_id="cus_x",
        )


def test_emit_with_an_unknown_type_raises(institution):
    with (
        pytest.raises(ValueError, match="Unknown event type 'customer.deleted'"),
        transaction.atomic(),
    ):
        emit(
            institution=institution,
            type="customer.deleted",
            object_type="customer",
            object_id="cus_x",
        )

    assert not Event.objects.exists()


def test_emit_records_the_event_in_the_callers_transaction(institution):
    with transaction.atomic():
        event = emit(
            institution=institution,
            type="customer.updated",
            object_type="customer",
            object_id="cus_x",
            data={"changedFields": ["email"]},
        )

    stored = Event.objects.get(pk=event.id)
    assert (
        stored.institution_id,
        stored.type,
        stored.object_type,
        stored.object_id,
        stored.data,
    ) == (
        institution.id,
        "customer.updated",
        "customer",
        "cus_x",
        {"changedFields": ["email"]},
    )
    assert EVENT_ID.match(stored.id)
