"""Partial approvals by funds (issue 31 item 5; docs/card-transactions.md, "Partial approval"):
a v2 request that says the terminal takes less than asked (`partialApproval: true`) on an account
with less available than asked, but more than nothing, is approved for what is available; the
hold, the statement line, the card's usage and the event say the approved amount, and
`requestedAmount` what was asked. Without the flag, or with nothing available, it is declined
`insufficient_funds` as before; v1 has no such field. A program asked about it sees the reduced
amount and may reduce it further: `requestedAmount` stays the network's."""

import pytest

from tests.accounts.api.helpers import assert_validation_error
from tests.decisioning.helpers import Program, create_endpoint

from .helpers import (
    MERCHANT,
    START,
    approved,
    balances,
    card_lines,
    created,
    declined,
    event_data,
    funded,
    hold_of,
    money,
    usage,
)

pytestmark = pytest.mark.django_db


def partial(api, card_id, amount, flag=True):
    body = {
        "cardId": card_id,
        "amount": amount,
        "currency": "EUR",
        "type": "Goods",
        "merchant": MERCHANT,
        "partialApproval": flag,
    }
    return api.post("/card-authorizations", body)


def test_less_available_than_asked_is_approved_for_what_there_is(api_v2):
    f = funded(api_v2)  # START available
    asked = START + 2_500

    body = created(partial(api_v2, f.card_id, asked), "v2")

    assert (body["approved"], body["status"], body["amount"], body["requestedAmount"]) == (
        True,
        "pending",
        START,
        asked,
    )
    assert hold_of(api_v2, body["holdId"])["amount"] == START
    assert balances(api_v2, f.account_id) == money(START, START)
    assert usage(api_v2, f.card_id)[0] == START
    [line] = card_lines(api_v2, f.card_id)
    assert (line["amount"], line["authorizationId"]) == (START, body["authorizationId"])
    [event] = event_data(api_v2, "authorization.approved", body["authorizationId"])
    assert (event["amount"], event["requestedAmount"]) == (START, asked)


def test_enough_available_is_the_whole_amount(api_v2):
    f = funded(api_v2)
    body = created(partial(api_v2, f.card_id, 1_000), "v2")
    assert (body["amount"], body["requestedAmount"]) == (1_000, 1_000)


def test_without_the_flag_or_with_nothing_available_it_is_declined(api_v2):
    f = funded(api_v2)
    declined(api_v2, f.card_id, START + 1, "insufficient_funds")
    approved(api_v2, f.card_id, START)  # nothing left now
    body = created(partial(api_v2, f.card_id, 100), "v2")
    assert (body["approved"], body["declineCode"]) == (False, "insufficient_funds")


def test_the_flag_is_a_json_boolean_and_v2_only(api_v2, api_v1):
    f = funded(api_v2)
    assert_validation_error(
        partial(api_v2, f.card_id, 100, flag="yes"),
        "v2",
        {"partialApproval": "Must be true or false."},
    )
    g = funded(api_v1)
    assert_validation_error(
        partial(api_v1, g.card_id, 100), "v1", {"partialApproval": "Unknown field."}
    )


@pytest.mark.django_db(transaction=True)
def test_a_program_sees_the_reduced_amount_and_may_reduce_it_further(api_v2):
    program = Program(answer=(200, b'{"approved": true, "amount": 4000}'))
    try:
        create_endpoint(api_v2, url=program.url)
        f = funded(api_v2)
        asked = START + 2_500

        body = created(partial(api_v2, f.card_id, asked), "v2")

        [call] = program.calls
        assert call.payload["authorization"]["amount"] == START
        assert (body["decidedBy"], body["amount"], body["requestedAmount"]) == (
            "program",
            4_000,
            asked,
        )
        assert balances(api_v2, f.account_id) == money(START, 4_000)
        assert usage(api_v2, f.card_id)[0] == 4_000
    finally:
        program.stop()
