"""Client metadata on accounts and holds over HTTP (docs/metadata.md)."""

from accounts.models import Account, Hold
from events.models import Event
from events.payloads import event_payload
from tests.accounts.api.helpers import (
    assert_validation_error,
    create_customer,
    created,
    funded_account,
    items_of,
    open_account,
    product_rid,
    resource,
)
from tests.conftest import error_of


def events_of(object_id: str) -> list[tuple[str, dict]]:
    return [
        (event.type, event_payload(event)["data"])
        for event in Event.objects.filter(object_id=object_id).order_by("id")
    ]


# --- accounts
def test_account_round_trip_merge_and_events(api_v2):
    account = open_account(api_v2, metadata={"ledgerRef": "L-1", "branch": "north"})
    account_id = account["accountId"]
    assert account["metadata"] == {"ledgerRef": "L-1", "branch": "north"}
    assert resource(api_v2.get(f"/accounts/{account_id}"), "v2")["metadata"] == account["metadata"]
    [listed] = items_of(api_v2, "/accounts")
    assert listed["metadata"] == account["metadata"]
    [(opened, data)] = events_of(account_id)
    assert opened == "account.opened"
    assert data["metadata"] == {"ledgerRef": "L-1", "branch": "north"}

    response = api_v2.patch(f"/accounts/{account_id}", {"metadata": {"branch": None, "x": "y"}})

    assert resource(response, "v2")["metadata"] == {"ledgerRef": "L-1", "x": "y"}
    assert Account.objects.get(pk=account_id).metadata == {"ledgerRef": "L-1", "x": "y"}
    assert events_of(account_id)[-1] == (
        "account.updated",
        {"changedFields": ["metadata"], "metadata": {"ledgerRef": "L-1", "x": "y"}},
    )


def test_account_status_and_metadata_change_together(api_v2):
    account_id = open_account(api_v2)["accountId"]
    response = api_v2.patch(f"/accounts/{account_id}", {"status": "frozen", "metadata": {"a": "b"}})
    body = resource(response, "v2")
    assert (body["status"], body["metadata"]) == ("frozen", {"a": "b"})
    assert [type_ for type_, _ in events_of(account_id)] == [
        "account.opened",
        "account.status_changed",
        "account.updated",
    ]


def test_account_refusals_change_nothing(api_v2):
    account_id = open_account(api_v2, metadata={"a": "1"})["accountId"]
    before = events_of(account_id)
    # A valid status with invalid metadata: neither changes.
    assert_validation_error(
        api_v2.patch(f"/accounts/{account_id}", {"status": "frozen", "metadata": {"a": 1}}),
        "v2",
        {"metadata": 'The value of "a" must be a string (or null to remove the key).'},
    )
    account = Account.objects.get(pk=account_id)
    assert (account.status, account.metadata) == ("active", {"a": "1"})
    assert events_of(account_id) == before

    customer_id = create_customer(api_v2)
    count = Account.objects.count()
    response = api_v2.post(
        "/accounts",
        {
            "customerId": customer_id,
            "productRid": product_rid(api_v2),
            "metadata": {f"k{i}": "v" for i in range(51)},
        },
    )
    assert_validation_error(response, "v2", {"metadata": "At most 50 keys (got 51)."})
    assert Account.objects.count() == count


def test_account_v1_neither_takes_nor_shows_metadata(api_v1, api_v2):
    account_id = open_account(api_v2, metadata={"a": "b"})["accountId"]
    assert "metadata" not in resource(api_v1.get(f"/accounts/{account_id}"), "v1")
    response = api_v1.patch(f"/accounts/{account_id}", {"metadata": {"a": None}})
    assert error_of(response, "v1")["details"] == {"metadata": "Unknown field."}


# --- holds
def place(api, account_id: str, **fields):
    return api.post("/holds", {"accountId": account_id, "amount": 300, "currency": "EUR", **fields})


def test_hold_round_trip_merge_release_and_events(api_v2):
    account_id = funded_account(api_v2, 1_000)["accountId"]
    hold = created(place(api_v2, account_id, metadata={"bookingId": "B-7"}), "v2")
    hold_id = hold["holdId"]
    assert hold["metadata"] == {"bookingId": "B-7"}
    assert resource(api_v2.get(f"/holds/{hold_id}"), "v2")["metadata"] == {"bookingId": "B-7"}
    [listed] = items_of(api_v2, "/holds", accountId=account_id)
    assert listed["metadata"] == {"bookingId": "B-7"}
    [(created_type, data)] = events_of(hold_id)
    assert (created_type, data["metadata"]) == ("hold.created", {"bookingId": "B-7"})

    # Merge only: the hold stays active.
    response = api_v2.patch(f"/holds/{hold_id}", {"metadata": {"room": "12"}})
    body = resource(response, "v2")
    assert (body["status"], body["metadata"]) == ("active", {"bookingId": "B-7", "room": "12"})
    assert events_of(hold_id)[-1] == (
        "hold.updated",
        {"changedFields": ["metadata"], "metadata": {"bookingId": "B-7", "room": "12"}},
    )

    # Release and merge in one PATCH: the release's event carries the merged metadata.
    response = api_v2.patch(
        f"/holds/{hold_id}", {"status": "released", "metadata": {"bookingId": None}}
    )
    body = resource(response, "v2")
    assert (body["status"], body["metadata"]) == ("released", {"room": "12"})
    released = [data for type_, data in events_of(hold_id) if type_ == "hold.released"]
    assert [data["metadata"] for data in released] == [{"room": "12"}]

    # A closed hold's metadata can still be changed.
    response = api_v2.patch(f"/holds/{hold_id}", {"metadata": {"note": "refunded"}})
    assert resource(response, "v2")["metadata"] == {"room": "12", "note": "refunded"}


def test_hold_refusals_change_nothing(api_v2):
    account_id = funded_account(api_v2, 1_000)["accountId"]
    hold_id = created(place(api_v2, account_id, metadata={"a": "1"}), "v2")["holdId"]
    before = events_of(hold_id)
    assert_validation_error(
        api_v2.patch(f"/holds/{hold_id}", {"status": "released", "metadata": {"b": "x" * 501}}),
        "v2",
        {"metadata": 'The value of "b" is longer than 500 characters.'},
    )
    hold = Hold.objects.get(pk=hold_id)
    assert (hold.status, hold.metadata) == ("active", {"a": "1"})
    assert events_of(hold_id) == before

    count = Hold.objects.count()
    assert_validation_error(
        place(api_v2, account_id, metadata={"k" * 41: "v"}),
        "v2",
        {"metadata": f'Key "{"k" * 41}" is longer than 40 characters.'},
    )
    assert Hold.objects.count() == count


def test_hold_v1_neither_takes_nor_shows_metadata(api_v1, api_v2):
    account_id = funded_account(api_v2, 1_000)["accountId"]
    hold_id = created(place(api_v2, account_id, metadata={"a": "b"}), "v2")["holdId"]
    assert "metadata" not in resource(api_v1.get(f"/holds/{hold_id}"), "v1")
    response = place(api_v1, account_id, metadata={"a": "b"})
    assert error_of(response, "v1")["details"] == {"metadata": "Unknown field."}
