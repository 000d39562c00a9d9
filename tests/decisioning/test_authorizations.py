"""Card authorizations a program decides (issue 31 item 2; docs/decisioning.md, "The flow"),
over HTTP against a real program on loopback and real transactions: the program approves,
declines, approves part; it fails and `onFailure` decides; TX's own decline never calls it;
no transaction is open while it thinks; v1 never asks it; an idempotent retry answers the
same."""

import pytest
from standardwebhooks import Webhook

from tests.authorizations.helpers import (
    MERCHANT,
    START,
    authorization_of,
    authorize,
    balances,
    created,
    funded,
    hold_of,
    increment,
    money,
    usage,
)
from tests.decisioning.helpers import APPROVE, FAIL, Program, create_endpoint

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def program():
    program = Program(watch_transactions=True)
    yield program
    program.stop()


def decide(api, card_id, amount, **kwargs) -> dict:
    return created(authorize(api, card_id, amount, **kwargs), api.version)


def test_the_program_approves_with_nothing_open_while_it_thinks(api_v2, program):
    endpoint = create_endpoint(api_v2, url=program.url)
    f = funded(api_v2)

    body = decide(api_v2, f.card_id, 1_500)

    assert (body["approved"], body["status"], body["decidedBy"]) == (True, "pending", "program")
    assert body["program"]["endpointId"] == endpoint["endpointId"]
    assert body["program"]["answer"] == {"approved": True}
    assert body["program"]["status"] == 200 and body["program"]["error"] is None
    [call] = program.calls
    assert call.open_transactions == 0
    payload = Webhook(endpoint["secret"]).verify(call.body, call.headers)
    assert payload["type"] == "authorization.request"
    assert payload["authorization"]["authorizationId"] == body["authorizationId"]
    assert payload["authorization"]["amount"] == 1_500
    # The hold was placed before the call: the program sees what is left.
    assert payload["account"]["available"] == START - 1_500
    assert balances(api_v2, f.account_id) == money(START, 1_500)
    assert usage(api_v2, f.card_id)[0] == 1_500
    assert body["transactionId"] is not None


def test_the_program_is_told_the_merchants_amount_and_the_rate(api_v2, program):
    """docs/card-transactions.md, "Foreign currency": 1,600 JPY billed 10.00 EUR reaches the
    program with both amounts and the rate, and its increment with the authorization's."""
    endpoint = create_endpoint(api_v2, url=program.url)
    f = funded(api_v2)
    body = {"cardId": f.card_id, "amount": 1_000, "currency": "EUR", "type": "Goods"}
    foreign = {"merchantAmount": 1_600, "merchantCurrency": "JPY"}

    auth = created(
        api_v2.post("/card-authorizations", {**body, **foreign, "merchant": MERCHANT}), "v2"
    )
    created(increment(api_v2, auth["authorizationId"], 200), "v2")

    asked, raised = (
        Webhook(endpoint["secret"]).verify(call.body, call.headers) for call in program.calls
    )
    told = {"merchantAmount": 1_600, "merchantCurrency": "JPY", "conversionRate": "0.00625"}
    for payload in (asked, raised):
        authorization = payload["authorization"]
        assert {key: authorization[key] for key in told} == told
        assert (authorization["amount"], authorization["currency"]) == (1_000, "EUR")
    assert raised["type"] == "authorization.increment"


def test_the_program_declines_and_the_hold_is_released(api_v2, program):
    program.answer = (200, b'{"approved": false, "declineCode": "jit_no_funds"}')
    create_endpoint(api_v2, url=program.url)
    f = funded(api_v2)

    body = decide(api_v2, f.card_id, 1_500)

    assert (body["approved"], body["status"], body["declineCode"]) == (
        False,
        "declined",
        "program_declined",
    )
    assert body["declineDetails"] == {"programDeclineCode": "jit_no_funds"}
    assert body["decidedBy"] == "program"
    assert hold_of(api_v2, body["holdId"])["status"] == "released"
    assert balances(api_v2, f.account_id) == money(START)
    assert usage(api_v2, f.card_id)[0] == 0
    assert body["transactionId"] is None


def test_the_program_approves_part(api_v2, program):
    """Where the merchant takes part (its `partialApproval`): tests/decisioning/
    test_partial_approvals.py has the other side."""
    program.answer = (200, b'{"approved": true, "amount": 600}')
    create_endpoint(api_v2, url=program.url)
    f = funded(api_v2)

    body = decide(api_v2, f.card_id, 1_500, partial_approval=True)

    assert (body["approved"], body["amount"], body["requestedAmount"]) == (True, 600, 1_500)
    assert hold_of(api_v2, body["holdId"])["amount"] == 600
    assert balances(api_v2, f.account_id) == money(START, 600)
    assert usage(api_v2, f.card_id)[0] == 600


@pytest.mark.parametrize(
    ("on_failure", "approved", "code"),
    [("decline", False, "program_unavailable"), ("approve", True, None), ("standin", True, None)],
)
def test_a_failing_program_leaves_it_to_on_failure(api_v2, program, on_failure, approved, code):
    program.answer = FAIL
    create_endpoint(api_v2, url=program.url, onFailure=on_failure)
    f = funded(api_v2)

    body = decide(api_v2, f.card_id, 1_500)

    assert (body["approved"], body["declineCode"], body["decidedBy"]) == (approved, code, "standin")
    assert body["program"]["status"] == 500
    assert body["program"]["error"].startswith("status 500")
    assert balances(api_v2, f.account_id) == money(START, 1_500 if approved else 0)


def test_tx_declines_first_and_never_calls_the_program(api_v2, program):
    create_endpoint(api_v2, url=program.url)
    f = funded(api_v2)

    body = decide(api_v2, f.card_id, START + 1)

    assert (body["declineCode"], body["decidedBy"], body["program"]) == (
        "insufficient_funds",
        "tx",
        None,
    )
    assert program.calls == []


def test_v1_is_decided_by_tx_alone(api_v2, api_v1, program):
    create_endpoint(api_v2, url=program.url)
    f = funded(api_v1)

    body = decide(api_v1, f.card_id, 1_500)

    assert body["approved"] is True and program.calls == []
    assert "decidedBy" not in body


def test_shadow_is_recorded_not_obeyed(api_v2, program):
    program.answer = (200, b'{"approved": false}')
    create_endpoint(api_v2, url=program.url, mode="shadow")
    f = funded(api_v2)

    body = decide(api_v2, f.card_id, 1_500)

    assert (body["approved"], body["decidedBy"]) == (True, "tx")
    assert body["program"]["mode"] == "shadow"
    assert body["program"]["answer"] == {"approved": False}
    assert len(program.calls) == 1


def test_a_retry_answers_the_same_and_asks_once(api_v2, program):
    program.answer = APPROVE
    create_endpoint(api_v2, url=program.url)
    f = funded(api_v2)
    key = "5b0f8a4e-3c1d-4f7a-9b2e-1d6c8e9a0f11"

    first = authorize(api_v2, f.card_id, 1_500, idempotency_key=key)
    again = authorize(api_v2, f.card_id, 1_500, idempotency_key=key)

    assert again.content == first.content
    assert again["Idempotent-Replayed"] == "true"
    assert len(program.calls) == 1
    body = created(first, "v2")
    assert (body["status"], body["decidedBy"]) == ("pending", "program")
    assert authorization_of(api_v2, body["authorizationId"])["status"] == "pending"
