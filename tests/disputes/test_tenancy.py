"""Another institution's ids (issue 32 item 7; docs/disputes.md): a dispute of one institution
is, to another institution's key, the same 404 `not_found` as an unknown id, on every path
(read, change, the issuer's moves, the network's messages), and another institution's payment
cannot be disputed. Lists show an institution its own disputes only, and the refused requests
change nothing (the dispute read back with its own key)."""

import pytest

from authorizations.models import Authorization
from disputes.models import Dispute
from tests.accounts.api.helpers import assert_error, items_of
from tests.conftest import Api
from tests.factories import issue_key

from .helpers import PAID, dispute_of, file, filed, move, moved, network, payment

pytestmark = pytest.mark.django_db

NOT_FOUND = "No dispute with this id."


@pytest.fixture
def other_v2(other_institution):
    return Api("v2", issue_key(other_institution)[1])


@pytest.fixture
def submitted(api_v2):
    """A submitted dispute of half a payment of the institution's."""
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id, PAID // 2)["disputeId"]
    moved(api_v2, dispute_id, "submitted")
    return p, dispute_id


REQUESTS = [
    ("get", "", None),
    ("patch", "", {"metadata": {"case": "X-1"}}),
    ("post", "/transitions", {"to": "closed", "outcome": "withdrawn"}),
    ("post", "/network-messages", {"type": "chargeback_accepted"}),
]


@pytest.mark.parametrize(("method", "suffix", "body"), REQUESTS)
def test_another_institutions_dispute_is_not_found(
    api_v2, other_v2, submitted, method, suffix, body
):
    p, dispute_id = submitted
    before = dispute_of(api_v2, dispute_id)
    path = f"/disputes/{dispute_id}{suffix}"

    response = other_v2.get(path) if method == "get" else getattr(other_v2, method)(path, body)

    assert_error(response, "v2", 404, "not_found", message=NOT_FOUND)
    assert dispute_of(api_v2, dispute_id) == before
    # The same request with the institution's own key is not refused: the 404 is the tenancy.
    own = api_v2.get(path) if method == "get" else getattr(api_v2, method)(path, body)
    assert own.status_code == (200 if method in ("get", "patch") else 201), own.content


@pytest.mark.parametrize(("method", "suffix", "body"), REQUESTS)
def test_an_unknown_dispute_is_the_same_404(other_v2, method, suffix, body):
    path = f"/disputes/dsp_00000000000000000000000000{suffix}"

    response = other_v2.get(path) if method == "get" else getattr(other_v2, method)(path, body)

    assert_error(response, "v2", 404, "not_found", message=NOT_FOUND)


def test_another_institutions_payment_cannot_be_disputed(api_v2, other_v2):
    p = payment(api_v2)

    refused = file(other_v2, p.authorization_id, PAID)

    assert_error(refused, "v2", 404, "not_found", message="No card authorization with this id.")
    assert not Dispute.objects.exists()
    assert Authorization.objects.get(pk=p.authorization_id).disputed_amount == 0
    # Its own institution may still dispute all of it.
    assert filed(api_v2, p.authorization_id, PAID)["amount"] == PAID


def test_lists_show_an_institution_its_own_disputes(api_v2, other_v2, submitted):
    p, dispute_id = submitted
    q = payment(other_v2)
    other_id = filed(other_v2, q.authorization_id, 700)["disputeId"]

    assert [d["disputeId"] for d in items_of(api_v2, "/disputes")] == [dispute_id]
    assert [d["disputeId"] for d in items_of(other_v2, "/disputes")] == [other_id]
    for name, value in (
        ("authorizationId", p.authorization_id),
        ("cardId", p.card_id),
        ("accountId", p.account_id),
    ):
        assert items_of(other_v2, "/disputes", **{name: value}) == [], name
        assert [d["disputeId"] for d in items_of(api_v2, "/disputes", **{name: value})] == [
            dispute_id
        ], name
    assert items_of(other_v2, "/disputes", status="submitted") == []
    assert [d["disputeId"] for d in items_of(other_v2, "/disputes", status="draft")] == [other_id]


def test_a_refused_move_of_another_institution_leaves_the_dispute_movable(
    api_v2, other_v2, submitted
):
    """The other institution tried every move; the institution's own moves then go on as if
    nothing had happened: the chargeback recovers all of it once."""
    p, dispute_id = submitted
    for to, fields in (("closed", {"outcome": "denied"}), ("submitted", {})):
        assert move(other_v2, dispute_id, to, **fields).status_code == 404
    for message in ("chargeback_accepted", "representment_received"):
        assert network(other_v2, dispute_id, message).status_code == 404

    charged_back = network(api_v2, dispute_id, "chargeback_accepted")

    assert charged_back.status_code == 201, charged_back.content
    body = charged_back.json()
    assert (body["status"], body["provisionalCredit"], body["recovered"], body["remaining"]) == (
        "chargeback",
        PAID // 2,
        PAID // 2,
        0,
    )
    assert [s["kind"] for s in body["steps"]] == [
        "created",
        "submitted",
        "provisional_credit",
        "chargeback",
    ]
