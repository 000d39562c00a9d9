"""Velocity monitoring on card payments over HTTP, in both versions: a `velocity_count` rule
made through `POST /monitoring-rules` lets exactly `maxCount` payments of a card through its
window; the next one hits (declined with `declined_by_monitoring`, or approved with an alert,
per the rule's action). Card transfers are payments of the card too. Declined payments do not
count."""

import pytest

from tests.cards.api.helpers import send

from .helpers import (
    START,
    approved,
    assert_error,
    balances,
    created,
    declined,
    funded,
    items_of,
    money,
    resource,
)

pytestmark = pytest.mark.django_db

WINDOW = 3_600


def velocity_rule(api, action: str, max_count: int) -> str:
    body = {
        "name": f"more than {max_count} an hour",
        "kind": "velocity_count",
        "action": action,
        "windowSeconds": WINDOW,
        "maxCount": max_count,
    }
    rule = created(api.post("/monitoring-rules", body), api.version)
    assert (rule["kind"], rule["action"], rule["maxCount"], rule["windowSeconds"]) == (
        "velocity_count",
        action,
        max_count,
        WINDOW,
    )
    assert rule["enabled"] is True
    return rule["ruleId"]


def alerts(api, **params) -> list:
    return items_of(api, "/monitoring-alerts", limit=100, **params)


def hit(count: int, max_count: int) -> dict:
    return {"count": count, "maxCount": max_count, "windowSeconds": WINDOW}


def test_decline_rule_declines_the_payment_after_max_count(api):
    f = funded(api)
    rule_id = velocity_rule(api, "decline", 3)
    for _ in range(3):
        approved(api, f.card_id, 100)
    assert alerts(api) == []

    body = declined(api, f.card_id, 100, "declined_by_monitoring")
    assert body["declineDetails"] == {"ruleIds": [rule_id]}
    assert body["declineReason"] == "A transaction monitoring rule declined this payment."
    [alert] = alerts(api)
    assert alert == {
        "alertId": alert["alertId"],
        "ruleId": rule_id,
        "kind": "velocity_count",
        "action": "decline",
        "status": "open",
        "cardId": f.card_id,
        "accountId": None,  # a staff_changes alert's
        "subjectType": "authorization",
        "subjectId": body["authorizationId"],
        "amount": 100,
        "currency": "EUR",
        "merchant": body["merchant"],
        "details": hit(4, 3),
        "resolvedAt": None,
        "resolutionNote": "",
        "createdAt": alert["createdAt"],
    }
    assert resource(api.get(f"/monitoring-alerts/{alert['alertId']}"), api.version) == alert
    # The decline did not count: the next one is the fourth again, declined again.
    again = declined(api, f.card_id, 100, "declined_by_monitoring")
    assert [a["details"] for a in alerts(api, cardId=f.card_id)] == [hit(4, 3), hit(4, 3)]
    assert alerts(api, ruleId=rule_id)[0]["subjectId"] == again["authorizationId"]
    assert balances(api, f.account_id) == money(START, 300)
    # Another card of the institution has its own count.
    other = funded(api, first="Bob")
    approved(api, other.card_id, 100)
    # Disabled, the rule lets the card pay again.
    resource(api.patch(f"/monitoring-rules/{rule_id}", {"enabled": False}), api.version)
    approved(api, f.card_id, 100)
    assert balances(api, f.account_id) == money(START, 400)
    assert len(alerts(api)) == 2


def test_alert_rule_approves_and_raises_an_alert(api):
    f = funded(api)
    rule_id = velocity_rule(api, "alert", 2)
    approved(api, f.card_id, 100)
    approved(api, f.card_id, 100)
    assert alerts(api) == []
    third = approved(api, f.card_id, 100)
    fourth = approved(api, f.card_id, 100)
    raised = alerts(api, ruleId=rule_id)
    assert [(a["action"], a["subjectId"], a["details"]) for a in raised] == [
        ("alert", fourth["authorizationId"], hit(4, 2)),
        ("alert", third["authorizationId"], hit(3, 2)),
    ]
    assert {a["status"] for a in raised} == {"open"}
    assert balances(api, f.account_id) == money(START, 400)


def test_card_transfers_count_as_payments(api):
    f = funded(api)
    bob = funded(api, load=0, first="Bob")
    rule_id = velocity_rule(api, "decline", 2)
    approved(api, f.card_id, 100)
    transfer = created(
        send(api, {"cardId": f.card_id}, {"accountId": bob.account_id}, 100), api.version
    )
    # Two payments made: the third, authorization or card transfer, is declined.
    declined(api, f.card_id, 100, "declined_by_monitoring")
    assert_error(
        send(api, {"cardId": f.card_id}, {"accountId": bob.account_id}, 100),
        api.version,
        422,
        "declined_by_monitoring",
        {"ruleIds": [rule_id]},
    )
    raised = alerts(api, ruleId=rule_id)
    assert [(a["subjectType"], a["subjectId"] is None, a["details"]) for a in raised] == [
        ("transfer", True, hit(3, 2)),
        ("authorization", False, hit(3, 2)),
    ]
    assert transfer["status"] == "posted"
    assert balances(api, f.account_id) == money(START - 100, 100)
    assert balances(api, bob.account_id) == money(100)
    # A transfer into the card's account is not a payment of the card.
    created(send(api, {"accountId": bob.account_id}, {"cardId": f.card_id}, 50), api.version)
    declined(api, f.card_id, 100, "declined_by_monitoring")
