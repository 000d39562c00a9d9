"""Client metadata on cards over HTTP (docs/metadata.md): set on issue, returned everywhere,
merged on PATCH (any status), carried to a renewed or replaced card, carried on events."""

from cards.models import Card
from events.models import Event
from events.payloads import event_payload
from tests.accounts.api.helpers import assert_validation_error, created, items_of
from tests.cards.api.helpers import account, card_of, customer, issue, issue_response, set_status
from tests.conftest import error_of


def events_of(card_id: str) -> list[tuple[str, dict]]:
    return [
        (event.type, event_payload(event)["data"])
        for event in Event.objects.filter(object_id=card_id).order_by("id")
    ]


def holder(api):
    ada = customer(api)
    return ada, account(api, ada)


def test_issue_get_list_and_event_carry_metadata(api_v2):
    ada, acc = holder(api_v2)
    card = issue(api_v2, acc, ada, metadata={"employeeId": "E-42"})
    assert card["metadata"] == {"employeeId": "E-42"}
    assert card_of(api_v2, card["cardId"])["metadata"] == {"employeeId": "E-42"}
    [listed] = items_of(api_v2, "/cards", accountId=acc)
    assert listed["metadata"] == {"employeeId": "E-42"}
    [(issued, data)] = events_of(card["cardId"])
    assert (issued, data["metadata"]) == ("card.issued", {"employeeId": "E-42"})


def test_patch_merges_with_risk_level_in_one_event_and_on_a_closed_card(api_v2):
    ada, acc = holder(api_v2)
    card_id = issue(api_v2, acc, ada, metadata={"a": "1", "b": "2"})["cardId"]

    response = api_v2.patch(
        f"/cards/{card_id}", {"riskLevel": "high", "metadata": {"a": None, "c": "3"}}
    )

    assert response.status_code == 200, response.content
    assert card_of(api_v2, card_id)["metadata"] == {"b": "2", "c": "3"}
    assert events_of(card_id)[-1] == (
        "card.updated",
        {
            "changedFields": ["metadata", "riskLevel"],
            "riskLevel": "high",
            "metadata": {"b": "2", "c": "3"},
        },
    )

    set_status(api_v2, card_id, "closed")
    response = api_v2.patch(f"/cards/{card_id}", {"metadata": {"closedBy": "ops"}})
    assert response.status_code == 200, response.content
    assert card_of(api_v2, card_id)["metadata"] == {"b": "2", "c": "3", "closedBy": "ops"}


def test_a_refused_patch_changes_nothing(api_v2):
    ada, acc = holder(api_v2)
    card_id = issue(api_v2, acc, ada, metadata={"a": "1"})["cardId"]
    before = events_of(card_id)
    assert_validation_error(
        api_v2.patch(f"/cards/{card_id}", {"status": "active", "metadata": {"n": 5}}),
        "v2",
        {"metadata": 'The value of "n" must be a string (or null to remove the key).'},
    )
    card = Card.objects.get(pk=card_id)
    assert (card.status, card.metadata) == ("inactive", {"a": "1"})
    assert events_of(card_id) == before


def test_an_invalid_issue_creates_no_card(api_v2):
    ada, acc = holder(api_v2)
    assert_validation_error(
        issue_response(api_v2, acc, ada, metadata={"k": "v" * 501}),
        "v2",
        {"metadata": 'The value of "k" is longer than 500 characters.'},
    )
    assert not Card.objects.exists()


def test_a_renewed_card_keeps_the_metadata(api_v2):
    ada, acc = holder(api_v2)
    card = issue(api_v2, acc, ada, status="active", metadata={"employeeId": "E-42"})
    renewed = created(api_v2.post(f"/cards/{card['cardId']}/renewals", {}), "v2")
    assert renewed["metadata"] == {"employeeId": "E-42"}
    [(_, data)] = events_of(renewed["cardId"])
    assert data["metadata"] == {"employeeId": "E-42"}


def test_v1_neither_takes_nor_shows_metadata(api_v1, api_v2):
    ada, acc = holder(api_v2)
    card_id = issue(api_v2, acc, ada, metadata={"a": "b"})["cardId"]
    assert "metadata" not in card_of(api_v1, card_id)
    response = api_v1.patch(f"/cards/{card_id}", {"metadata": {"a": None}})
    assert error_of(response, "v1")["details"] == {"metadata": "Unknown field."}
