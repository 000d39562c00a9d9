from tests.cards.api.helpers import account, customer, issue
from tests.conftest import body_of, error_of

MERCHANT = {"name": "Corner Shop", "mcc": "5411", "countryCode": "276", "channel": "pos"}


def balances(api, account_id):
    return body_of(api.get(f"/accounts/{account_id}/balances"), api.version)


def test_walkthrough(api):
    ada = customer(api)
    acc = account(api, ada, load=10_000)
    card = issue(api, acc, ada, status="active")
    r = api.post(
        "/card-authorizations",
        {
            "cardId": card["cardId"],
            "amount": 2_000,
            "currency": "EUR",
            "type": "Goods",
            "merchant": MERCHANT,
        },
    )
    assert r.status_code in (200, 201), r.content
    auth = body_of(r, api.version)
    assert auth["approved"] is True and auth["status"] == "pending", auth
    b = balances(api, acc)
    assert (b["posted"], b["pending"], b["available"]) == (10_000, 2_000, 8_000)
    lines = api.get(f"/cards/{card['cardId']}/transactions").json()["data"]
    assert lines[0]["settlementStatus"] == "Unsettled" and lines[0]["status"] == "pending"
    r = api.post(f"/card-authorizations/{auth['authorizationId']}/presentments", {"amount": 2_300})
    assert r.status_code in (200, 201), r.content
    assert body_of(r, api.version)["status"] == "presented"
    b = balances(api, acc)
    assert (b["posted"], b["pending"], b["available"]) == (7_700, 0, 7_700)
    lines = api.get(f"/cards/{card['cardId']}/transactions").json()["data"]
    assert lines[0]["settlementStatus"] == "Presentment" and lines[0]["amount"] == 2_300
    r = api.post(
        "/card-returns",
        {
            "cardId": card["cardId"],
            "amount": 300,
            "currency": "EUR",
            "merchant": MERCHANT,
            "authorizationId": auth["authorizationId"],
        },
    )
    assert r.status_code in (200, 201), r.content
    assert balances(api, acc)["posted"] == 8_000
    # a decline
    r = api.post(
        "/card-authorizations",
        {
            "cardId": card["cardId"],
            "amount": 9_000,
            "currency": "EUR",
            "type": "Goods",
            "merchant": MERCHANT,
        },
    )
    declined = body_of(r, api.version)
    assert declined["approved"] is False and declined["declineCode"] == "insufficient_funds", (
        declined
    )
    # reversal
    r = api.post(
        "/card-authorizations",
        {
            "cardId": card["cardId"],
            "amount": 1_000,
            "currency": "EUR",
            "type": "Cash",
            "merchant": {**MERCHANT, "channel": "atm"},
        },
    )
    auth2 = body_of(r, api.version)
    assert auth2["approved"], auth2
    r = api.post(f"/card-authorizations/{auth2['authorizationId']}/reversals", {})
    assert body_of(r, api.version)["status"] == "reversed", r.content
    r = api.post(f"/card-authorizations/{auth2['authorizationId']}/reversals", {})
    assert r.status_code == 409
    assert error_of(r, api.version)["details"] == {"from": "reversed", "to": "reversed"}
    b = balances(api, acc)
    assert (b["posted"], b["pending"]) == (8_000, 0)
    # monitoring
    r = api.post(
        "/monitoring-rules",
        {
            "name": "big",
            "kind": "amount_threshold",
            "action": "decline",
            "amount": 500,
            "currency": "EUR",
        },
    )
    assert r.status_code in (200, 201), r.content
    r = api.post(
        "/card-authorizations",
        {
            "cardId": card["cardId"],
            "amount": 501,
            "currency": "EUR",
            "type": "Goods",
            "merchant": MERCHANT,
        },
    )
    assert body_of(r, api.version)["declineCode"] == "declined_by_monitoring"
    r = api.post(
        "/transfers",
        {
            "source": {"cardId": card["cardId"]},
            "destination": {"accountId": account(api, customer(api))},
            "amount": 501,
            "currency": "EUR",
        },
    )
    assert error_of(r, api.version)["code"] == "declined_by_monitoring", r.content
    alerts = api.get("/monitoring-alerts").json()["data"]
    assert len(alerts) == 2, alerts
