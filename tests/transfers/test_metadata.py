"""Client metadata on transfers over HTTP (docs/metadata.md): set on create (single and every
batch item, through `tx_post` and `tx_post_many`), returned everywhere, carried on
`transfer.posted` (and `transfer.reversed`); v2 only."""

from events.models import Event
from tests.accounts.api.helpers import (
    assert_validation_error,
    created,
    events,
    funded_account,
    items_of,
    resource,
    transfer,
)
from tests.cards.api import helpers as cards
from tests.conftest import error_of
from transfers.models import Transfer


def test_create_get_list_reversal_and_events_carry_metadata(api_v2):
    source = funded_account(api_v2, 5_000)["accountId"]
    destination = funded_account(api_v2, 0)["accountId"]
    metadata = {"invoice": "INV-9", "costCenter": "42"}

    body = created(transfer(api_v2, source, destination, 1_000, metadata=metadata), "v2")

    transfer_id = body["transferId"]
    assert body["metadata"] == metadata
    assert resource(api_v2.get(f"/transfers/{transfer_id}"), "v2")["metadata"] == metadata
    [listed] = items_of(api_v2, "/transfers", accountId=destination)
    assert listed["metadata"] == metadata
    assert Transfer.objects.get(pk=transfer_id).metadata == metadata  # written by tx_post
    [posted] = events(api_v2, "transfer.posted", transfer_id)
    assert posted["data"]["metadata"] == metadata

    reversal = created(api_v2.post(f"/transfers/{transfer_id}/reversals", {}), "v2")
    assert reversal["transfer"]["metadata"] == metadata
    [reversed_] = events(api_v2, "transfer.reversed", transfer_id)
    assert reversed_["data"]["metadata"] == metadata


def test_an_invalid_transfer_moves_nothing(api_v2):
    source = funded_account(api_v2, 5_000)["accountId"]
    destination = funded_account(api_v2, 0)["accountId"]
    before = Event.objects.count()
    assert_validation_error(
        transfer(api_v2, source, destination, 1_000, metadata={"amount": 1_000}),
        "v2",
        {"metadata": 'The value of "amount" must be a string.'},
    )
    assert not Transfer.objects.exists()
    assert Event.objects.count() == before


def test_every_batch_item_carries_its_own_metadata(api_v2):
    a = funded_account(api_v2, 10_000)["accountId"]
    b = funded_account(api_v2, 0)["accountId"]
    ada = cards.customer(api_v2)
    card_account = cards.account(api_v2, ada)
    card_id = cards.issue(api_v2, card_account, ada, status="active")["cardId"]
    items = [
        # Two items posted together by tx_post_many, one alone through a card (tx_post).
        {
            "source": {"accountId": a},
            "destination": {"accountId": b},
            "amount": 100,
            "currency": "EUR",
            "metadata": {"employee": "E-1"},
        },
        {
            "source": {"accountId": a},
            "destination": {"accountId": b},
            "amount": 200,
            "currency": "EUR",
        },
        {
            "source": {"accountId": a},
            "destination": {"cardId": card_id},
            "amount": 300,
            "currency": "EUR",
            "metadata": {"employee": "E-3"},
        },
    ]

    document = created(
        api_v2.post("/transfer-batches", {"mode": "atomic", "transfers": items}), "v2"
    )

    ids = [result["transferId"] for result in document["results"]]
    expected = [{"employee": "E-1"}, {}, {"employee": "E-3"}]
    shown = [resource(api_v2.get(f"/transfers/{id_}"), "v2")["metadata"] for id_ in ids]
    assert shown == expected
    assert [Transfer.objects.get(pk=id_).metadata for id_ in ids] == expected
    posted = [events(api_v2, "transfer.posted", id_)[0]["data"] for id_ in ids]
    assert [data.get("metadata") for data in posted] == [
        {"employee": "E-1"},
        None,
        {"employee": "E-3"},
    ]


def test_a_batch_item_with_invalid_metadata_refuses_the_batch(api_v2):
    a = funded_account(api_v2, 10_000)["accountId"]
    b = funded_account(api_v2, 0)["accountId"]
    item = {
        "source": {"accountId": a},
        "destination": {"accountId": b},
        "amount": 100,
        "currency": "EUR",
    }
    response = api_v2.post(
        "/transfer-batches",
        {"mode": "independent", "transfers": [item, {**item, "metadata": {"k" * 41: "v"}}]},
    )
    assert_validation_error(
        response,
        "v2",
        {"transfers.1.metadata": f'Key "{"k" * 41}" is longer than 40 characters.'},
    )
    assert not Transfer.objects.exists()


def test_v1_neither_takes_nor_shows_metadata(api_v1, api_v2):
    source = funded_account(api_v2, 5_000)["accountId"]
    destination = funded_account(api_v2, 0)["accountId"]
    transfer_id = created(transfer(api_v2, source, destination, 100, metadata={"a": "b"}), "v2")[
        "transferId"
    ]
    assert "metadata" not in resource(api_v1.get(f"/transfers/{transfer_id}"), "v1")
    response = transfer(api_v1, source, destination, 100, metadata={"a": "b"})
    assert error_of(response, "v1")["details"] == {"metadata": "Unknown field."}


def test_patch_merges_metadata_into_any_transfer(api_v2):
    source = funded_account(api_v2, 5_000)["accountId"]
    destination = funded_account(api_v2, 0)["accountId"]
    transfer_id = created(
        transfer(api_v2, source, destination, 100, metadata={"a": "1", "b": "2"}), "v2"
    )["transferId"]

    body = resource(
        api_v2.patch(f"/transfers/{transfer_id}", {"metadata": {"b": None, "c": "3"}}), "v2"
    )

    assert (body["status"], body["metadata"]) == ("posted", {"a": "1", "c": "3"})
    [updated] = events(api_v2, "transfer.updated", transfer_id)
    assert updated["data"] == {"changedFields": ["metadata"], "metadata": {"a": "1", "c": "3"}}
    # The same merge again changes nothing and says nothing.
    resource(api_v2.patch(f"/transfers/{transfer_id}", {"metadata": {"c": "3"}}), "v2")
    assert len(events(api_v2, "transfer.updated", transfer_id)) == 1


def test_a_pending_transfer_resolves_and_takes_metadata_in_one_operation(api_v2):
    source = funded_account(api_v2, 5_000)["accountId"]
    destination = funded_account(api_v2, 0)["accountId"]
    transfer_id = created(transfer(api_v2, source, destination, 100, hold={}), "v2")["transferId"]

    # An invalid merge refuses the resolution too: still pending, nothing moved.
    refused = api_v2.patch(f"/transfers/{transfer_id}", {"status": "posted", "metadata": {"k": 1}})
    assert_validation_error(
        refused,
        "v2",
        {"metadata": 'The value of "k" must be a string (or null to remove the key).'},
    )
    assert Transfer.objects.get(pk=transfer_id).status == "pending"

    body = resource(
        api_v2.patch(f"/transfers/{transfer_id}", {"status": "posted", "metadata": {"k": "v"}}),
        "v2",
    )
    assert (body["status"], body["postedAmount"], body["metadata"]) == ("posted", 100, {"k": "v"})


def test_an_empty_patch_is_refused_and_v1_takes_no_metadata(api_v1, api_v2):
    source = funded_account(api_v2, 5_000)["accountId"]
    destination = funded_account(api_v2, 0)["accountId"]
    transfer_id = created(transfer(api_v2, source, destination, 100), "v2")["transferId"]
    assert_validation_error(
        api_v2.patch(f"/transfers/{transfer_id}", {}),
        "v2",
        {"status": "Give status, metadata or both."},
    )
    response = api_v1.patch(f"/transfers/{transfer_id}", {"metadata": {"a": "b"}})
    assert error_of(response, "v1")["details"]["metadata"] == "Unknown field."
    assert Transfer.objects.get(pk=transfer_id).metadata == {}
