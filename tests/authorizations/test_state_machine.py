"""The authorization's states, one transition at a time (docs/card-transactions.md, "The
authorization's states"), v2.

For every status an authorization can stand in (awaiting_program, pending, presented, reversed,
expired, declined) and every message the network sends about it (a final presentment, one that
is not final, a reversal, an increment, a return naming it), exactly the table: the transitions
it lists happen (pending: presented, pending with part cleared, reversed, pending with the
increment; presented: a return, still presented), and every other pair answers 409
`invalid_state_transition` with `details` {from: the status, to: where the message leads} and
changes nothing: the authorization, the balances, the holds, the statement lines, the card's
usage, the events."""

import pytest

from accounts.verification import ledger_breaches
from authorizations.models import AuthorizationIncrement, CardReturn
from events.models import Event

from .helpers import (
    START,
    approved,
    assert_error,
    authorization_of,
    awaiting_program,
    balances,
    card_lines,
    card_return,
    created,
    declined,
    expire_holds,
    funded,
    holds_of,
    money,
    past_due,
    present,
    presented,
    reverse,
    usage,
)

pytestmark = pytest.mark.django_db

AMOUNT = 1_000


def _pending(api, f) -> dict:
    return approved(api, f.card_id, AMOUNT)


def _presented(api, f) -> dict:
    return presented(api, approved(api, f.card_id, AMOUNT)["authorizationId"])


def _reversed(api, f) -> dict:
    return created(reverse(api, approved(api, f.card_id, AMOUNT)["authorizationId"]), "v2")


def _expired(api, f) -> dict:
    auth = approved(api, f.card_id, AMOUNT)
    past_due(auth["holdId"])
    expire_holds()
    return authorization_of(api, auth["authorizationId"])


def _declined(api, f) -> dict:
    return declined(api, f.card_id, START + 1, "insufficient_funds")


STATES = {
    "awaiting_program": lambda api, f: awaiting_program(api, f.card_id, AMOUNT),
    "pending": _pending,
    "presented": _presented,
    "reversed": _reversed,
    "expired": _expired,
    "declined": _declined,
}

# message -> (how it is sent, the `to` of its 409)
MESSAGES = {
    "final presentment": (lambda api, f, a: present(api, a["authorizationId"]), "presented"),
    "partial presentment": (
        lambda api, f, a: api.post(
            f"/card-authorizations/{a['authorizationId']}/presentments",
            {"amount": 400, "final": False},
        ),
        "presented",
    ),
    "reversal": (lambda api, f, a: reverse(api, a["authorizationId"]), "reversed"),
    "increment": (
        lambda api, f, a: api.post(
            f"/card-authorizations/{a['authorizationId']}/increments", {"amount": 200}
        ),
        "incremented",
    ),
    "return": (
        lambda api, f, a: card_return(api, f.card_id, 300, authorization_id=a["authorizationId"]),
        "returned",
    ),
}


# The table's transitions: (status, message) -> what the account and the authorization show.
def _presented_in_full(api, f, before, response):
    body = created(response, "v2")
    assert (body["status"], body["presentedAmount"], body["amount"]) == (
        "presented",
        AMOUNT,
        AMOUNT,
    )
    assert balances(api, f.account_id) == money(START - AMOUNT)
    assert usage(api, f.card_id) == (AMOUNT, 0, AMOUNT)


def _part_cleared(api, f, before, response):
    body = created(response, "v2")
    assert (body["status"], body["presentedAmount"], body["amount"]) == ("pending", 400, AMOUNT)
    assert body["holdId"] != before["holdId"]
    assert balances(api, f.account_id) == money(START - 400, AMOUNT - 400)
    assert usage(api, f.card_id) == (AMOUNT, 0, AMOUNT)


def _reversed_in_full(api, f, before, response):
    body = created(response, "v2")
    assert (body["status"], body["holdId"]) == ("reversed", before["holdId"])
    assert balances(api, f.account_id) == money(START)
    assert usage(api, f.card_id) == (0, 0, 0)


def _incremented(api, f, before, response):
    body = created(response, "v2")
    assert (body["approved"], body["authorization"]["status"], body["authorization"]["amount"]) == (
        True,
        "pending",
        AMOUNT + 200,
    )
    assert balances(api, f.account_id) == money(START, AMOUNT + 200)
    assert usage(api, f.card_id) == (AMOUNT + 200, 0, AMOUNT + 200)


def _returned(api, f, before, response):
    body = created(response, "v2")
    assert (body["authorizationId"], body["amount"]) == (before["authorizationId"], 300)
    assert authorization_of(api, before["authorizationId"]) == before  # still presented
    assert balances(api, f.account_id) == money(START - AMOUNT + 300)


ALLOWED = {
    ("pending", "final presentment"): _presented_in_full,
    ("pending", "partial presentment"): _part_cleared,
    ("pending", "reversal"): _reversed_in_full,
    ("pending", "increment"): _incremented,
    ("presented", "return"): _returned,
}


def snapshot(api, f, authorization_id: str) -> dict:
    return {
        "authorization": authorization_of(api, authorization_id),
        "balances": balances(api, f.account_id),
        "holds": holds_of(api, f.account_id),
        "lines": card_lines(api, f.card_id),
        "usage": usage(api, f.card_id),
        "events": Event.objects.count(),
        "increments": AuthorizationIncrement.objects.count(),
        "returns": CardReturn.objects.count(),
    }


def test_the_table_has_a_case_for_every_status():
    assert set(STATES) == {
        "awaiting_program",
        "pending",
        "presented",
        "reversed",
        "expired",
        "declined",
    }
    assert {status for status, _ in ALLOWED} == {"pending", "presented"}


@pytest.mark.parametrize("message", list(MESSAGES))
@pytest.mark.parametrize("state", list(STATES))
def test_each_message_in_each_state(api_v2, state, message):
    f = funded(api_v2)
    authorization = STATES[state](api_v2, f)
    assert authorization["status"] == state
    send, to = MESSAGES[message]
    before = snapshot(api_v2, f, authorization["authorizationId"])

    response = send(api_v2, f, authorization)

    if (state, message) in ALLOWED:
        ALLOWED[state, message](api_v2, f, authorization, response)
        assert ledger_breaches() == []
        return
    assert_error(response, "v2", 409, "invalid_state_transition", {"from": state, "to": to})
    assert snapshot(api_v2, f, authorization["authorizationId"]) == before
