"""Approval, presentment and reversal over HTTP, in both versions (docs/card-transactions.md,
"Clearing"): exact balances, the hold, the statement line, the authorization and the card's
usage after each step; the presentment amount rule (lower, equal, up to 20% more with the
difference available, never beyond); every other move is 409 with `from` and `to`, and the
hold of an authorization cannot be released or captured through `/holds`."""

import pytest

from .helpers import (
    ATM,
    MERCHANT,
    START,
    approved,
    assert_error,
    authorization_of,
    balances,
    card_lines,
    created,
    event_data,
    funded,
    hold_of,
    line_of,
    money,
    present,
    presented,
    reverse,
    usage,
)

pytestmark = pytest.mark.django_db


def assert_pending(api, f, authorization: dict, amount: int, *, type="Goods", merchant=MERCHANT):
    """An approved authorization as it stands before its presentment."""
    hold = hold_of(api, authorization["holdId"])
    assert (hold["status"], hold["amount"], hold["capturedAmount"], hold["accountId"]) == (
        "active",
        amount,
        0,
        f.account_id,
    )
    line = line_of(api, authorization["transactionId"])
    assert line == {
        "transactionId": authorization["transactionId"],
        "accountId": f.account_id,
        "cardId": f.card_id,
        "type": type,
        "settlementStatus": "Unsettled",
        "direction": "debit",
        "amount": amount,
        "currency": "EUR",
        "description": merchant["name"],
        "status": "pending",
        "merchant": merchant,
        "authorizationId": authorization["authorizationId"],
        "returnId": None,
        "holdId": authorization["holdId"],
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


def test_approval_then_presentments_lower_equal_and_higher(api):
    """One card, one authorization per presentment rule; balances checked after each step."""
    f = funded(api)
    posted = START
    used = 0
    cases = [
        (1_000, 800),  # lower: the rest is released
        (1_000, None),  # default: as authorized
        (1_000, 1_000),  # equal, said explicitly
        (1_000, 1_200),  # higher, exactly +20%
    ]
    for authorized_amount, presented_amount in cases:
        authorization = approved(api, f.card_id, authorized_amount)
        assert authorization == {
            "authorizationId": authorization["authorizationId"],
            "cardId": f.card_id,
            "accountId": f.account_id,
            "type": "Goods",
            "amount": authorized_amount,
            "currency": "EUR",
            "merchant": MERCHANT,
            "approved": True,
            "status": "pending",
            "declineCode": None,
            "declineReason": None,
            "declineDetails": None,
            "holdId": authorization["holdId"],
            "transactionId": authorization["transactionId"],
            "presentedAmount": None,
            "presentedAt": None,
            **(
                {
                    "metadata": {},
                    "merchantAmount": None,
                    "merchantCurrency": None,
                    "conversionRate": None,
                    # decided by TX alone: no program (docs/decisioning.md, "The record")
                    "decidedBy": "tx",
                    "decidedAt": authorization["createdAt"],
                    "requestedAmount": authorized_amount,
                    "program": None,
                    # asked by the network, not an advice or a force post
                    "kind": "request",
                    "overdrawnBy": 0,
                    "partialApproval": False,
                    "programFunding": None,
                }
                if api.version == "v2"
                else {}
            ),
            "createdAt": authorization["createdAt"],
            "updatedAt": authorization["updatedAt"],
        }
        authorization_id = authorization["authorizationId"]
        assert balances(api, f.account_id) == money(posted, authorized_amount)
        assert_pending(api, f, authorization, authorized_amount)
        assert usage(api, f.card_id) == (used + authorized_amount, 0, used + authorized_amount)
        [approved_event] = event_data(api, "authorization.approved", authorization_id)
        assert approved_event == {
            "cardId": f.card_id,
            "accountId": f.account_id,
            "type": "Goods",
            "amount": authorized_amount,
            "currency": "EUR",
            "merchant": MERCHANT,
        }

        body = presented(api, authorization_id, presented_amount)
        amount = authorized_amount if presented_amount is None else presented_amount
        posted -= amount
        used += amount
        assert body == {
            **authorization,
            "status": "presented",
            "presentedAmount": amount,
            "presentedAt": body["presentedAt"],
            "updatedAt": body["updatedAt"],
        }
        assert body["presentedAt"] is not None
        assert authorization_of(api, authorization_id) == body
        assert balances(api, f.account_id) == money(posted)
        hold = hold_of(api, authorization["holdId"])
        assert (hold["status"], hold["amount"], hold["capturedAmount"]) == (
            "captured",
            authorized_amount,
            amount,
        )
        line = line_of(api, authorization["transactionId"])
        assert (line["settlementStatus"], line["status"], line["amount"], line["type"]) == (
            "Presentment",
            "posted",
            amount,
            "Goods",
        )
        assert (line["authorizationId"], line["holdId"]) == (authorization_id, hold["holdId"])
        assert usage(api, f.card_id) == (used, 0, used)
        [settled] = event_data(api, "transaction.settled", line["transactionId"])
        assert settled == {
            "authorizationId": authorization_id,
            "cardId": f.card_id,
            "accountId": f.account_id,
            "type": "Goods",
            "amount": amount,
            "authorizedAmount": authorized_amount,
            "currency": "EUR",
        }
    assert posted == START - 800 - 1_000 - 1_000 - 1_200
    assert len(card_lines(api, f.card_id, settlementStatus="Presentment")) == 4


def test_presentment_above_20_percent_is_refused(api):
    f = funded(api)
    authorization = approved(api, f.card_id, 999)  # at most 999 * 1.2 = 1198.8 -> 1198
    authorization_id = authorization["authorizationId"]
    assert_error(
        present(api, authorization_id, 1_199),
        api.version,
        422,
        "amount_exceeds_remaining",
        {"amount": 1_199, "held": 999, "maximum": 1_198},
    )
    # Nothing changed: still pending, the hold active, the usage as authorized.
    assert authorization_of(api, authorization_id) == authorization
    assert balances(api, f.account_id) == money(START, 999)
    assert_pending(api, f, authorization, 999)
    assert usage(api, f.card_id) == (999, 0, 999)
    assert event_data(api, "transaction.settled", authorization["transactionId"]) == []
    body = presented(api, authorization_id, 1_198)
    assert body["presentedAmount"] == 1_198
    assert balances(api, f.account_id) == money(START - 1_198)
    assert usage(api, f.card_id) == (1_198, 0, 1_198)


def test_presentment_above_the_authorization_needs_the_difference_available(api):
    f = funded(api)
    authorization = approved(api, f.card_id, START - 100)  # 100 left available
    authorization_id = authorization["authorizationId"]
    assert_error(
        present(api, authorization_id, START + 1),
        api.version,
        422,
        "insufficient_funds",
        {"accountId": f.account_id, "available": 100, "amount": 101},
    )
    assert authorization_of(api, authorization_id)["status"] == "pending"
    assert balances(api, f.account_id) == money(START, START - 100)
    assert hold_of(api, authorization["holdId"])["status"] == "active"
    assert usage(api, f.card_id) == (START - 100, 0, START - 100)
    # Exactly the difference available: presented, the account at zero.
    presented(api, authorization_id, START)
    assert balances(api, f.account_id) == money(0)
    assert usage(api, f.card_id) == (START, 0, START)


def test_reversal_gives_everything_back(api):
    f = funded(api)
    authorization = approved(api, f.card_id, 3_000, type="Cash", merchant=ATM)
    authorization_id = authorization["authorizationId"]
    assert balances(api, f.account_id) == money(START, 3_000)
    assert usage(api, f.card_id) == (3_000, 3_000, 3_000)
    assert_pending(api, f, authorization, 3_000, type="Cash", merchant=ATM)

    body = created(reverse(api, authorization_id), api.version)
    assert body == {**authorization, "status": "reversed", "updatedAt": body["updatedAt"]}
    assert authorization_of(api, authorization_id) == body
    assert balances(api, f.account_id) == money(START)
    hold = hold_of(api, authorization["holdId"])
    assert (hold["status"], hold["capturedAmount"]) == ("released", 0)
    line = line_of(api, authorization["transactionId"])
    assert (line["settlementStatus"], line["status"], line["amount"], line["type"]) == (
        "Unsettled",
        "reversed",
        3_000,
        "Cash",
    )
    assert usage(api, f.card_id) == (0, 0, 0)
    assert event_data(api, "authorization.reversed", authorization_id) == [
        {"cardId": f.card_id, "accountId": f.account_id, "amount": 3_000, "currency": "EUR"}
    ]
    assert len(event_data(api, "hold.released", authorization["holdId"])) == 1

    # Reversed is final: neither reversed again nor presented.
    assert_error(
        reverse(api, authorization_id),
        api.version,
        409,
        "invalid_state_transition",
        {"from": "reversed", "to": "reversed"},
    )
    assert_error(
        present(api, authorization_id),
        api.version,
        409,
        "invalid_state_transition",
        {"from": "reversed", "to": "presented"},
    )
    assert balances(api, f.account_id) == money(START)
    assert usage(api, f.card_id) == (0, 0, 0)


def test_a_presented_authorization_is_final(api):
    f = funded(api)
    authorization = approved(api, f.card_id, 1_000)
    authorization_id = authorization["authorizationId"]
    presented(api, authorization_id, 900)
    for response, to in [
        (present(api, authorization_id), "presented"),
        (present(api, authorization_id, 100), "presented"),
        (reverse(api, authorization_id), "reversed"),
    ]:
        assert_error(
            response, api.version, 409, "invalid_state_transition", {"from": "presented", "to": to}
        )
    assert balances(api, f.account_id) == money(START - 900)
    assert usage(api, f.card_id) == (900, 0, 900)
    assert len(event_data(api, "transaction.settled", authorization["transactionId"])) == 1


def test_the_hold_of_an_authorization_is_not_moved_through_holds(api):
    f = funded(api)
    authorization = approved(api, f.card_id, 1_000)
    hold_id = authorization["holdId"]
    for response, to in [
        (api.patch(f"/holds/{hold_id}", {"status": "released"}), "released"),
        (api.post(f"/holds/{hold_id}/captures", {}), "captured"),
        (api.post(f"/holds/{hold_id}/captures", {"amount": 500}), "captured"),
    ]:
        error = assert_error(
            response, api.version, 409, "invalid_state_transition", {"from": "active", "to": to}
        )
        assert error["message"] == (
            "This hold belongs to a card authorization: reverse or present the authorization."
        )
    assert hold_of(api, hold_id)["status"] == "active"
    assert balances(api, f.account_id) == money(START, 1_000)
    # Once presented, still not through /holds.
    presented(api, authorization["authorizationId"])
    assert_error(
        api.patch(f"/holds/{hold_id}", {"status": "released"}),
        api.version,
        409,
        "invalid_state_transition",
        {"from": "captured", "to": "released"},
    )
    assert balances(api, f.account_id) == money(START - 1_000)


def test_unknown_and_foreign_authorizations_are_404(api, other_api):
    f = funded(api)
    authorization = approved(api, f.card_id, 1_000)
    authorization_id = authorization["authorizationId"]
    unknown = "auth_" + "0" * 26
    for client, target in [(api, unknown), (other_api, authorization_id)]:
        for response in (
            client.get(f"/card-authorizations/{target}"),
            present(client, target),
            reverse(client, target),
        ):
            assert_error(
                response,
                api.version,
                404,
                "not_found",
                message="No card authorization with this id.",
            )
    assert authorization_of(api, authorization_id)["status"] == "pending"
