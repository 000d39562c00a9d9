"""Client metadata on card authorizations over HTTP (docs/metadata.md): set on create only
(there is no PATCH), approved or declined; returned everywhere, carried on events; v2 only."""

from authorizations.models import Authorization
from events.models import Event
from events.payloads import event_payload
from tests.accounts.api.helpers import assert_validation_error, created, items_of, resource
from tests.authorizations.helpers import MERCHANT, START, funded, presented
from tests.conftest import error_of


def authorize(api, card_id: str, amount: int, **fields):
    body = {"cardId": card_id, "amount": amount, "currency": "EUR", "type": "Goods"}
    return api.post("/card-authorizations", {**body, "merchant": MERCHANT, **fields})


def data_of(object_id: str) -> list[tuple[str, dict]]:
    return [
        (event.type, event_payload(event)["data"])
        for event in Event.objects.filter(object_id=object_id).order_by("id")
    ]


def test_approved_authorization_carries_metadata_everywhere(api_v2):
    f = funded(api_v2)
    metadata = {"terminal": "T-1", "basket": "b-77"}

    body = created(authorize(api_v2, f.card_id, 1_000, metadata=metadata), "v2")

    authorization_id = body["authorizationId"]
    assert (body["approved"], body["metadata"]) == (True, metadata)
    shown = resource(api_v2.get(f"/card-authorizations/{authorization_id}"), "v2")
    assert shown["metadata"] == metadata
    [listed] = items_of(api_v2, "/card-authorizations", cardId=f.card_id)
    assert listed["metadata"] == metadata
    assert presented(api_v2, authorization_id)["metadata"] == metadata
    events = [(type_, data["metadata"]) for type_, data in data_of(authorization_id)]
    assert events == [("authorization.approved", metadata)]
    # Its hold is the authorization's, not the client's: no metadata of its own.
    assert resource(api_v2.get(f"/holds/{body['holdId']}"), "v2")["metadata"] == {}


def test_declined_authorization_keeps_its_metadata(api_v2):
    f = funded(api_v2)
    body = created(authorize(api_v2, f.card_id, START + 1, metadata={"terminal": "T-2"}), "v2")
    assert (body["approved"], body["metadata"]) == (False, {"terminal": "T-2"})
    [(type_, data)] = data_of(body["authorizationId"])
    assert (type_, data["metadata"]) == ("authorization.declined", {"terminal": "T-2"})


def test_invalid_metadata_decides_nothing(api_v2):
    f = funded(api_v2)
    assert_validation_error(
        authorize(api_v2, f.card_id, 1_000, metadata={"n": 1}),
        "v2",
        {"metadata": 'The value of "n" must be a string.'},
    )
    assert not Authorization.objects.exists()


def test_v1_neither_takes_nor_shows_metadata(api_v1, api_v2):
    f = funded(api_v2)
    authorization_id = created(authorize(api_v2, f.card_id, 1_000, metadata={"a": "b"}), "v2")[
        "authorizationId"
    ]
    shown = resource(api_v1.get(f"/card-authorizations/{authorization_id}"), "v1")
    assert "metadata" not in shown
    response = authorize(api_v1, f.card_id, 1_000, metadata={"a": "b"})
    assert error_of(response, "v1")["details"] == {"metadata": "Unknown field."}
