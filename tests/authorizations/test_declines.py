"""Declines over HTTP, in both versions (docs/card-transactions.md, "Authorization").

For each code of `authorizations.declines.ORDER`: a request that fails that check and no other
is declined with that code and moves nothing (balances, hold, statement line, limit usage), is
kept with its `authorization.declined` event, and the same request with that one condition fixed
is approved. Then the order itself: with every condition failing at once, fixing them one by one
shows the codes in the documented order. A wrong PIN counts as a try even though declined."""

import pytest
from django.utils import timezone

from authorizations import declines
from cards.dates import add_months
from cards.models import Card, CardSpend
from tests.accounts.api.helpers import load, statement
from tests.accounts.api.helpers import set_status as set_account_status
from tests.cards.api.helpers import backdate, card_of, expiry_after, set_limits, set_status

from .helpers import (
    MERCHANT,
    START,
    approved,
    authorization_of,
    balances,
    card_lines,
    created,
    declined,
    event_data,
    funded,
    holds_of,
    items_of,
    money,
    resource,
    settings,
    usage,
)

pytestmark = pytest.mark.django_db

AMOUNT = 2_500
PIN = "482915"
WRONG_PIN = "591736"
ABROAD = "840"


def set_pin(api, card_id, **body):
    response = api.patch(f"/cards/{card_id}/pin", body)
    assert response.status_code == 200, response.content


def pin_state(api, card_id) -> dict:
    return card_of(api, card_id)["pin"]


def block_pin(api, card_id):
    set_pin(api, card_id, pin=PIN)
    for _ in range(3):
        api.post(f"/cards/{card_id}/pin-verifications", {"pin": WRONG_PIN})
    assert pin_state(api, card_id) == {"set": True, "blocked": True, "remainingTries": 0}


def set_expiry(card_id: str, year: int, month: int) -> None:
    card = Card.objects.get(pk=card_id)
    card.set_expiry(year, month)
    card.save(update_fields=["expiry_year", "expiry_month", "expires_on"])


def rule(api, **fields) -> str:
    body = {"name": "big payments", "kind": "amount_threshold", "action": "decline", **fields}
    return created(api.post("/monitoring-rules", body), api.version)["ruleId"]


# --- one case per code: break the one condition, say what the decline must say, fix it.
# Each returns (request overrides, declineReason, declineDetails, fix), where `fix()` repairs
# the condition and returns the overrides of the same request once fixed.
def _card_not_active(api, f):
    resource(set_status(api, f.card_id, "suspended"), api.version)

    def fix():
        resource(set_status(api, f.card_id, "active"), api.version)
        return {}

    return {}, "The card is suspended.", {"status": "suspended"}, fix


def _card_expired(api, f):
    backdate(f.card_id)  # still `active`: the expiry job has not run yet
    year, month = add_months(timezone.now().year, timezone.now().month, -1)

    def fix():
        set_expiry(f.card_id, *expiry_after(12))
        return {}

    details = {"expiryMonth": month, "expiryYear": year}
    return {}, "The card is past its expiry date.", details, fix


def _currency_mismatch(api, f):
    details = {"accountCurrency": "EUR"}
    return {"currency": "USD"}, "The card's account is in EUR.", details, lambda: {}


def _channel_not_allowed(api, f):
    settings(api, f.card_id, ecommerce=False)
    request = {"merchant": {**MERCHANT, "channel": "ecommerce"}}

    def fix():
        settings(api, f.card_id, ecommerce=True)
        return request

    reason = "The card does not allow ecommerce payments."
    return request, reason, {"channel": "ecommerce"}, fix


def _international_not_allowed(api, f):
    settings(api, f.card_id, international=False)
    request = {"merchant": {**MERCHANT, "countryCode": ABROAD}}

    def fix():
        settings(api, f.card_id, international=True)
        return request

    details = {"merchantCountry": ABROAD, "cardholderCountry": "276"}
    return request, "The card does not allow payments abroad.", details, fix


def _mcc_blocked(api, f):
    settings(api, f.card_id, blockedMccs=["5411", "7995"])

    def fix():
        settings(api, f.card_id, blockedMccs=["7995"])
        return {}

    return {}, "The card blocks this merchant category.", {"mcc": "5411"}, fix


def _country_blocked(api, f):
    # The cardholder's own country: `international` has nothing to say about it.
    settings(api, f.card_id, blockedCountries=["276"])

    def fix():
        settings(api, f.card_id, blockedCountries=[])
        return {}

    return {}, "The card blocks this merchant country.", {"countryCode": "276"}, fix


def _pin_blocked(api, f):
    block_pin(api, f.card_id)

    def fix():
        set_pin(api, f.card_id, blocked=False)
        return {"pin": PIN}

    return {"pin": PIN}, "The card's PIN is blocked.", {"remainingTries": 0}, fix


def _incorrect_pin(api, f):
    set_pin(api, f.card_id, pin=PIN)

    def fix():
        return {"pin": PIN}

    return {"pin": WRONG_PIN}, "The PIN is not correct.", {"remainingTries": 2}, fix


def _limit_exceeded(api, f):
    set_limits(api, f.card_id, perTransaction=AMOUNT - 1)

    def fix():
        set_limits(api, f.card_id, perTransaction=AMOUNT)
        return {}

    details = {
        "limit": "perTransaction",
        "value": AMOUNT - 1,
        "used": 0,
        "amount": AMOUNT,
        "remaining": AMOUNT - 1,
    }
    return {}, "The card's perTransaction limit does not allow this amount.", details, fix


def _declined_by_monitoring(api, f):
    rule_id = rule(api, amount=AMOUNT - 1, currency="EUR")

    def fix():
        resource(api.patch(f"/monitoring-rules/{rule_id}", {"enabled": False}), api.version)
        return {}

    reason = "A transaction monitoring rule declined this payment."
    return {}, reason, {"ruleIds": [rule_id]}, fix


def _account_not_active(api, f):
    resource(set_account_status(api, f.account_id, "frozen"), api.version)

    def fix():
        resource(set_account_status(api, f.account_id, "active"), api.version)
        return {}

    return {}, "The card's account is frozen.", {"status": "frozen"}, fix


def _insufficient_funds(api, f):
    def fix():
        load(api, f.account_id, 1)
        return {"amount": START + 1}

    reason = "The account's available balance does not cover this amount."
    details = {"available": START, "amount": START + 1}
    return {"amount": START + 1}, reason, details, fix


CASES = {
    declines.CARD_NOT_ACTIVE: _card_not_active,
    declines.CARD_EXPIRED: _card_expired,
    declines.CURRENCY_MISMATCH: _currency_mismatch,
    declines.CHANNEL_NOT_ALLOWED: _channel_not_allowed,
    declines.INTERNATIONAL_NOT_ALLOWED: _international_not_allowed,
    declines.MCC_BLOCKED: _mcc_blocked,
    declines.COUNTRY_BLOCKED: _country_blocked,
    declines.PIN_BLOCKED: _pin_blocked,
    declines.INCORRECT_PIN: _incorrect_pin,
    declines.LIMIT_EXCEEDED: _limit_exceeded,
    declines.DECLINED_BY_MONITORING: _declined_by_monitoring,
    declines.ACCOUNT_NOT_ACTIVE: _account_not_active,
    declines.INSUFFICIENT_FUNDS: _insufficient_funds,
}


def test_every_decline_code_has_a_case():
    assert list(CASES) == declines.ORDER
    assert len(declines.ORDER) == 13


@pytest.mark.parametrize("code", declines.ORDER)
def test_one_failing_check_declines_with_its_code_and_moves_nothing(api, code):
    f = funded(api)
    statement_before = statement(api, f.account_id)
    assert [line["type"] for line in statement_before] == ["CashInc"]  # the load
    request, reason, details, fix = CASES[code](api, f)
    amount = request.pop("amount", AMOUNT)

    body = declined(api, f.card_id, amount, code, **request)

    currency = request.get("currency", "EUR")
    merchant = request.get("merchant", MERCHANT)
    authorization_id = body["authorizationId"]
    assert authorization_id.startswith("auth_")
    assert body == {
        "authorizationId": authorization_id,
        "cardId": f.card_id,
        "accountId": f.account_id,
        "type": "Goods",
        "amount": amount,
        "currency": currency,
        "merchant": merchant,
        "approved": False,
        "status": "declined",
        "declineCode": code,
        "declineReason": reason,
        "declineDetails": details,
        "holdId": None,
        "transactionId": None,
        "presentedAmount": None,
        "presentedAt": None,
        **(
            {
                "metadata": {},
                "merchantAmount": None,
                "merchantCurrency": None,
                "conversionRate": None,
                "decidedBy": "tx",
                "decidedAt": body["createdAt"],
                "requestedAmount": amount,
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
        "createdAt": body["createdAt"],
        "updatedAt": body["updatedAt"],
    }
    # Nothing moved, nothing held, nothing on the statement or against the limits.
    assert balances(api, f.account_id) == money(START)
    assert holds_of(api, f.account_id) == []
    assert statement(api, f.account_id) == statement_before
    assert card_lines(api, f.card_id) == []
    assert usage(api, f.card_id) == (0, 0, 0)
    # The decline is kept, and told.
    assert authorization_of(api, authorization_id) == body
    listed = items_of(api, "/card-authorizations", cardId=f.card_id, status="declined")
    assert [item["authorizationId"] for item in listed] == [authorization_id]
    assert event_data(api, "authorization.declined", authorization_id) == [
        {
            "cardId": f.card_id,
            "accountId": f.account_id,
            "type": "Goods",
            "amount": amount,
            "currency": currency,
            "merchant": merchant,
            "declineCode": code,
        }
    ]
    assert event_data(api, "authorization.approved", authorization_id) == []
    if code == declines.INCORRECT_PIN:  # the wrong try is counted
        assert pin_state(api, f.card_id) == {"set": True, "blocked": False, "remainingTries": 2}
    if code == declines.DECLINED_BY_MONITORING:  # its hit raised an alert
        [alert] = items_of(api, "/monitoring-alerts", cardId=f.card_id)
        assert (alert["action"], alert["subjectType"], alert["subjectId"]) == (
            "decline",
            "authorization",
            authorization_id,
        )

    # The same request with that one condition fixed is approved.
    fixed = fix()
    amount = fixed.pop("amount", amount)
    ok = approved(api, f.card_id, amount, **fixed)
    posted = START + 1 if code == declines.INSUFFICIENT_FUNDS else START
    assert balances(api, f.account_id) == money(posted, amount)
    assert [hold["holdId"] for hold in holds_of(api, f.account_id)] == [ok["holdId"]]
    [line] = card_lines(api, f.card_id)
    assert (line["transactionId"], line["authorizationId"], line["amount"]) == (
        ok["transactionId"],
        ok["authorizationId"],
        amount,
    )
    assert usage(api, f.card_id) == (amount, 0, amount)
    if code in (declines.INCORRECT_PIN, declines.PIN_BLOCKED):  # a right PIN resets the count
        assert pin_state(api, f.card_id) == {"set": True, "blocked": False, "remainingTries": 3}


def test_the_first_failing_check_decides_in_the_documented_order(api):
    """Every condition fails at once; fixing them one at a time, in order, shows each code."""
    f = funded(api)
    amount = START + 1
    block_pin(api, f.card_id)
    settings(
        api,
        f.card_id,
        ecommerce=False,
        international=False,
        blockedMccs=["5411"],
        blockedCountries=[ABROAD],
    )
    set_limits(api, f.card_id, perTransaction=START)
    rule_id = rule(api, amount=START, currency="EUR")
    resource(set_status(api, f.card_id, "suspended"), api.version)
    backdate(f.card_id)
    resource(set_account_status(api, f.account_id, "frozen"), api.version)
    request = {
        "currency": "USD",
        "merchant": {**MERCHANT, "channel": "ecommerce", "countryCode": ABROAD},
        "pin": WRONG_PIN,
    }

    def next_fix(code):
        match code:
            case declines.CARD_NOT_ACTIVE:
                # Directly: the API rightly refuses to activate a card past its expiry.
                Card.objects.filter(pk=f.card_id).update(status="active")
            case declines.CARD_EXPIRED:
                set_expiry(f.card_id, *expiry_after(12))
            case declines.CURRENCY_MISMATCH:
                request["currency"] = "EUR"
            case declines.CHANNEL_NOT_ALLOWED:
                settings(api, f.card_id, ecommerce=True)
            case declines.INTERNATIONAL_NOT_ALLOWED:
                settings(api, f.card_id, international=True)
            case declines.MCC_BLOCKED:
                settings(api, f.card_id, blockedMccs=[])
            case declines.COUNTRY_BLOCKED:
                settings(api, f.card_id, blockedCountries=[])
            case declines.PIN_BLOCKED:
                set_pin(api, f.card_id, blocked=False)
            case declines.INCORRECT_PIN:
                request["pin"] = PIN
            case declines.LIMIT_EXCEEDED:
                set_limits(api, f.card_id, perTransaction=amount)
            case declines.DECLINED_BY_MONITORING:
                api.patch(f"/monitoring-rules/{rule_id}", {"enabled": False})
            case declines.ACCOUNT_NOT_ACTIVE:
                resource(set_account_status(api, f.account_id, "active"), api.version)
            case declines.INSUFFICIENT_FUNDS:
                load(api, f.account_id, 1)

    seen = []
    for code in declines.ORDER:
        body = declined(api, f.card_id, amount, code, **request)
        seen.append(body["declineCode"])
        next_fix(code)
    assert seen == declines.ORDER
    # The unblocked PIN's wrong try was counted; the right one then reset the count.
    assert pin_state(api, f.card_id) == {"set": True, "blocked": False, "remainingTries": 3}
    assert balances(api, f.account_id) == money(START + 1)
    ok = approved(api, f.card_id, amount, **request)
    assert balances(api, f.account_id) == money(START + 1, amount)
    assert len(items_of(api, "/card-authorizations", cardId=f.card_id, status="declined")) == 13
    assert [
        a["authorizationId"] for a in items_of(api, "/card-authorizations", status="pending")
    ] == [ok["authorizationId"]]


def test_wrong_pins_count_and_the_third_blocks(api):
    f = funded(api)
    # A PIN given when none is set is wrong (and counts nothing: there is nothing to try).
    body = declined(api, f.card_id, 100, declines.INCORRECT_PIN, pin=PIN)
    assert (body["declineReason"], body["declineDetails"]) == (
        "No PIN is set on this card.",
        {"pinSet": False},
    )
    set_pin(api, f.card_id, pin=PIN)
    for remaining in (2, 1):
        body = declined(api, f.card_id, 100, declines.INCORRECT_PIN, pin=WRONG_PIN)
        assert body["declineDetails"] == {"remainingTries": remaining}
        assert pin_state(api, f.card_id)["remainingTries"] == remaining
    body = declined(api, f.card_id, 100, declines.PIN_BLOCKED, pin=WRONG_PIN)
    assert (body["declineReason"], body["declineDetails"]) == (
        "Three wrong PINs in a row: the PIN is now blocked.",
        {"remainingTries": 0},
    )
    assert pin_state(api, f.card_id) == {"set": True, "blocked": True, "remainingTries": 0}
    # Blocked: even the right PIN is declined; without a PIN the card still pays (no PIN check).
    declined(api, f.card_id, 100, declines.PIN_BLOCKED, pin=PIN)
    approved(api, f.card_id, 100)
    assert balances(api, f.account_id) == money(START, 100)


def test_channel_switches_and_pos(api):
    f = funded(api)
    settings(api, f.card_id, ecommerce=False, contactless=False, atm=False)
    for channel in ("ecommerce", "contactless", "atm"):
        body = declined(
            api,
            f.card_id,
            100,
            declines.CHANNEL_NOT_ALLOWED,
            merchant={**MERCHANT, "channel": channel},
        )
        assert body["declineDetails"] == {"channel": channel}
    approved(api, f.card_id, 100)  # pos has no switch
    settings(api, f.card_id, atm=True)
    approved(api, f.card_id, 100, type="Cash", merchant={**MERCHANT, "channel": "atm"})
    assert usage(api, f.card_id) == (200, 100, 200)


@pytest.mark.parametrize(
    ("limit", "limits", "type"),
    [
        ("daily", {"perTransaction": 1_000, "daily": 1_500, "dailyCash": 0}, "Goods"),
        ("dailyCash", {"dailyCash": 1_500}, "Cash"),
    ],
)
def test_daily_limits_count_approved_amounts(api, limit, limits, type):
    f = funded(api)
    set_limits(api, f.card_id, **limits)
    approved(api, f.card_id, 1_000, type=type)
    body = declined(api, f.card_id, 501, declines.LIMIT_EXCEEDED, type=type)
    assert body["declineDetails"] == {
        "limit": limit,
        "value": 1_500,
        "used": 1_000,
        "amount": 501,
        "remaining": 500,
    }
    approved(api, f.card_id, 500, type=type)  # exactly up to the limit
    assert usage(api, f.card_id) == (1_500, 1_500 if type == "Cash" else 0, 1_500)


def test_monthly_limit_counts_the_earlier_days(api):
    """An earlier day of the month is written directly: no API call spends on another day."""
    today = timezone.now().date()
    if today.day == 1:
        pytest.skip("no earlier day in this month")
    f = funded(api)
    CardSpend.objects.create(card_id=f.card_id, day=today.replace(day=1), spent=1_000, cash_spent=0)
    set_limits(api, f.card_id, perTransaction=1_000, daily=1_000, monthly=1_500, dailyCash=0)
    body = declined(api, f.card_id, 501, declines.LIMIT_EXCEEDED)
    assert body["declineDetails"] == {
        "limit": "monthly",
        "value": 1_500,
        "used": 1_000,
        "amount": 501,
        "remaining": 500,
    }
    approved(api, f.card_id, 500)
    assert usage(api, f.card_id) == (500, 0, 1_500)
