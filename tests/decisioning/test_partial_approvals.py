"""Partial approvals by the networks' rule (issue 47 item 2; docs/decisioning.md, "Partial
approvals"): the request to the program says whether the merchant takes less than asked
(`partialApproval`), and a partial answer where it does not is a failure decided by
`onFailure`, never a smaller approval. Against a real program on loopback."""

import pytest

from tests.authorizations.helpers import authorize, balances, created, funded, money, usage
from tests.decisioning.helpers import Program, create_endpoint

pytestmark = pytest.mark.django_db(transaction=True)

PART = (200, b'{"approved": true, "amount": 1200}')


@pytest.fixture
def program():
    program = Program(answer=PART)
    yield program
    program.stop()


def test_a_partial_answer_where_the_merchant_takes_none_is_a_failure(api_v2, program):
    endpoint = create_endpoint(api_v2, url=program.url, onFailure="decline")
    f = funded(api_v2)

    body = created(authorize(api_v2, f.card_id, 3_000), "v2")

    [call] = program.calls
    assert call.payload["authorization"]["partialApproval"] is False
    assert (body["approved"], body["declineCode"], body["decidedBy"]) == (
        False,
        "program_unavailable",
        "standin",
    )
    assert body["program"]["error"] == (
        "invalid answer: amount must be 3000 (approved whole or declined)"
    )
    assert body["program"]["answer"] is None
    assert (balances(api_v2, f.account_id), usage(api_v2, f.card_id)) == (money(10_000), (0, 0, 0))

    # `standin`: TX's approval of the whole amount stands; never 1,200.
    api_v2.patch(f"/decisioning-endpoints/{endpoint['endpointId']}", {"onFailure": "standin"})
    whole = created(authorize(api_v2, f.card_id, 3_000), "v2")
    assert (whole["approved"], whole["amount"], whole["decidedBy"]) == (True, 3_000, "standin")
    assert balances(api_v2, f.account_id) == money(10_000, 3_000)


def test_a_partial_answer_where_the_merchant_takes_part_is_a_smaller_approval(api_v2, program):
    create_endpoint(api_v2, url=program.url, onFailure="decline")
    f = funded(api_v2)

    body = created(authorize(api_v2, f.card_id, 3_000, partial_approval=True), "v2")

    [call] = program.calls
    assert call.payload["authorization"]["partialApproval"] is True
    assert (body["approved"], body["amount"], body["requestedAmount"], body["decidedBy"]) == (
        True,
        1_200,
        3_000,
        "program",
    )
    assert body["partialApproval"] is True
    assert (balances(api_v2, f.account_id), usage(api_v2, f.card_id)[0]) == (
        money(10_000, 1_200),
        1_200,
    )


def test_a_jit_program_funds_only_the_part_it_approves(api_v2, program):
    create_endpoint(api_v2, url=program.url, mode="jit", onFailure="decline")
    api_v2.post(
        "/program-funding-accounts/adjustments",
        {"currency": "EUR", "direction": "credit", "amount": 5_000},
    )
    f = funded(api_v2, load=0)

    body = created(authorize(api_v2, f.card_id, 3_000, partial_approval=True), "v2")

    assert (body["amount"], body["programFunding"]) == (1_200, {"funded": 1_200, "returned": 0})
    assert balances(api_v2, f.account_id) == money(1_200, 1_200)
    assert usage(api_v2, f.card_id)[0] == 1_200
    [funding] = api_v2.get("/program-funding-accounts").json()["data"]
    assert funding["balances"]["available"] == 3_800
