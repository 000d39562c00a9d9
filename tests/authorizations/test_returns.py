"""Merchant returns (refunds) over HTTP, in both versions (docs/card-transactions.md,
"Returns"): the money comes back at once as a `Return` line, `Presentment`; linked to a
presented authorization its returns add up to at most the presented amount; a closed card's
still-open account is refunded, a closed account is not; the currency must be the account's."""

import pytest

from tests.accounts.api.helpers import set_status as set_account_status
from tests.cards.api.helpers import account, issue, set_status

from .helpers import (
    MERCHANT,
    START,
    approved,
    assert_error,
    balances,
    card_lines,
    card_return,
    created,
    event_data,
    funded,
    line_of,
    money,
    presented,
    resource,
)

pytestmark = pytest.mark.django_db


def returned(api, card_id, amount, **kwargs) -> dict:
    return created(card_return(api, card_id, amount, **kwargs), api.version)


def test_a_standalone_return_credits_at_once(api):
    f = funded(api)
    body = returned(api, f.card_id, 750)
    return_id = body["returnId"]
    assert return_id.startswith("cret_")
    assert body == {
        "returnId": return_id,
        "cardId": f.card_id,
        "accountId": f.account_id,
        "authorizationId": None,
        "amount": 750,
        "currency": "EUR",
        "merchant": MERCHANT,
        "transactionId": body["transactionId"],
        "createdAt": body["createdAt"],
    }
    assert resource(api.get(f"/card-returns/{return_id}"), api.version) == body
    assert balances(api, f.account_id) == money(START + 750)
    line = line_of(api, body["transactionId"])
    assert line == {
        "transactionId": body["transactionId"],
        "accountId": f.account_id,
        "cardId": f.card_id,
        "type": "Return",
        "settlementStatus": "Presentment",
        "direction": "credit",
        "amount": 750,
        "currency": "EUR",
        "description": MERCHANT["name"],
        "status": "posted",
        "merchant": MERCHANT,
        "authorizationId": None,
        "returnId": return_id,
        "holdId": None,
        "transferId": None,
        "adjustmentId": None,
        # v2 only: what a fee line has (docs/fees.md), a foreign payment's (card-transactions.md)
        **(
            {
                "category": None,
                "feeId": None,
                "merchantAmount": None,
                "merchantCurrency": None,
                "disputeId": None,
                "valueAt": None,
            }
            if api.version == "v2"
            else {}
        ),
        "createdAt": line["createdAt"],
    }
    assert card_lines(api, f.card_id) == [line]
    assert event_data(api, "transaction.settled", line["transactionId"]) == [
        {
            "returnId": return_id,
            "authorizationId": None,
            "cardId": f.card_id,
            "accountId": f.account_id,
            "type": "Return",
            "amount": 750,
            "currency": "EUR",
        }
    ]


def test_returns_of_an_authorization_add_up_to_its_presented_amount(api):
    f = funded(api)
    authorization = approved(api, f.card_id, 1_000)
    authorization_id = authorization["authorizationId"]
    # Not presented yet: nothing to refund.
    assert_error(
        card_return(api, f.card_id, 100, authorization_id=authorization_id),
        api.version,
        409,
        "invalid_state_transition",
        {"from": "pending", "to": "returned"},
    )
    presented(api, authorization_id, 900)
    assert balances(api, f.account_id) == money(START - 900)

    first = returned(api, f.card_id, 400, authorization_id=authorization_id)
    assert first["authorizationId"] == authorization_id
    assert balances(api, f.account_id) == money(START - 500)
    assert_error(
        card_return(api, f.card_id, 501, authorization_id=authorization_id),
        api.version,
        422,
        "amount_exceeds_remaining",
        {"amount": 501, "remaining": 500},
    )
    returned(api, f.card_id, 500, authorization_id=authorization_id)
    assert balances(api, f.account_id) == money(START)
    assert_error(
        card_return(api, f.card_id, 1, authorization_id=authorization_id),
        api.version,
        422,
        "amount_exceeds_remaining",
        {"amount": 1, "remaining": 0},
    )
    lines = card_lines(api, f.card_id, type="Return")
    assert [(line["amount"], line["settlementStatus"], line["status"]) for line in lines] == [
        (500, "Presentment", "posted"),
        (400, "Presentment", "posted"),
    ]
    assert lines[1]["returnId"] == first["returnId"]
    [settled] = event_data(api, "transaction.settled", lines[1]["transactionId"])
    assert settled["authorizationId"] == authorization_id
    # A standalone return is not capped by anything.
    returned(api, f.card_id, 5_000)
    assert balances(api, f.account_id) == money(START + 5_000)


def test_an_authorization_of_another_card_is_refused(api):
    f = funded(api)
    other = issue(api, f.account_id, f.customer_id, status="active")
    authorization = approved(api, other["cardId"], 1_000)
    presented(api, authorization["authorizationId"])
    assert_error(
        card_return(api, f.card_id, 100, authorization_id=authorization["authorizationId"]),
        api.version,
        400,
        "validation_error",
        {"authorizationId": "An authorization of another card."},
    )
    assert balances(api, f.account_id) == money(START - 1_000)


def test_a_closed_card_is_refunded_to_its_open_account(api):
    f = funded(api)
    authorization = approved(api, f.card_id, 1_000)
    presented(api, authorization["authorizationId"])
    resource(set_status(api, f.card_id, "closed", reason="Customer request"), api.version)
    returned(api, f.card_id, 1_000, authorization_id=authorization["authorizationId"])
    returned(api, f.card_id, 300)
    assert balances(api, f.account_id) == money(START + 300)
    # A frozen account takes money in as well.
    resource(set_account_status(api, f.account_id, "frozen"), api.version)
    returned(api, f.card_id, 200)
    assert balances(api, f.account_id) == money(START + 500)


def test_a_closed_account_is_not_refunded(api):
    f = funded(api, load=0)
    resource(set_account_status(api, f.account_id, "closed"), api.version)
    assert_error(
        card_return(api, f.card_id, 100),
        api.version,
        422,
        "account_not_active",
        {"accountId": f.account_id, "status": "closed"},
    )
    assert balances(api, f.account_id) == money(0)
    assert card_lines(api, f.card_id) == []


def test_a_return_in_another_currency_is_refused(api):
    f = funded(api)
    assert_error(
        card_return(api, f.card_id, 100, currency="USD"),
        api.version,
        422,
        "currency_mismatch",
        {"accountId": f.account_id, "accountCurrency": "EUR", "currency": "USD"},
    )
    assert balances(api, f.account_id) == money(START)
    assert card_lines(api, f.card_id) == []
    # A GHS account's card is refunded in GHS.
    ghs = account(api, f.customer_id, "GHSAccountPrepaidAPI")
    card = issue(api, ghs, f.customer_id, status="active")
    returned(api, card["cardId"], 100, currency="GHS")
    assert balances(api, ghs) == money(100)
