"""Security settings and limits over HTTP, in both versions: partial changes, validation, the
ordering rule of limits, and the usage GET /limits shows after card transfers."""

import pytest
from django.utils import timezone

from cards.models import CardSpend
from tests.accounts.api.helpers import events

from .helpers import (
    account,
    assert_error,
    assert_validation_error,
    card_of,
    created,
    customer,
    issue,
    limits_of,
    resource,
    send,
    set_limits,
    set_status,
    usage_of,
)

DEFAULT_SETTINGS = {
    "ecommerce": True,
    "contactless": True,
    "atm": True,
    "international": True,
    "magstripe": False,
    "blockedMccs": [],
    "blockedCountries": [],
}
PREPAID_LIMITS = {
    "perTransaction": 100_000,
    "daily": 200_000,
    "monthly": 1_000_000,
    "dailyCash": 50_000,
}


@pytest.fixture
def card(api):
    ada = customer(api)
    return issue(api, account(api, ada, load=500_000), ada, status="active")


def settings_of(api, card_id) -> dict:
    return resource(api.get(f"/cards/{card_id}/security-settings"), api.version)


def patch_settings(api, card_id, **changes):
    return api.patch(f"/cards/{card_id}/security-settings", changes)


# --- security settings
def test_security_settings_change_only_what_is_sent(api, card):
    card_id = card["cardId"]
    assert settings_of(api, card_id) == {"cardId": card_id, **DEFAULT_SETTINGS}
    body = resource(patch_settings(api, card_id, ecommerce=False), api.version)
    expected = {**DEFAULT_SETTINGS, "ecommerce": False}
    assert body == {"cardId": card_id, **expected}
    body = resource(
        patch_settings(
            api,
            card_id,
            magstripe=True,
            international=False,
            blockedMccs=["7995", "5993", "7995"],
            blockedCountries=["840", "276"],
        ),
        api.version,
    )
    expected |= {
        "magstripe": True,
        "international": False,
        "blockedMccs": ["5993", "7995"],
        "blockedCountries": ["276", "840"],
    }
    assert body == {"cardId": card_id, **expected}
    assert settings_of(api, card_id) == {"cardId": card_id, **expected}
    assert card_of(api, card_id)["securitySettings"] == expected
    [event] = events(api, "card.security_settings_changed", card_id)[:1]
    assert event["data"] == {
        "changedFields": ["blockedCountries", "blockedMccs", "international", "magstripe"]
    }
    # Lists replace the stored lists; an empty list clears.
    body = resource(
        patch_settings(api, card_id, blockedMccs=["4829"], blockedCountries=[]), api.version
    )
    assert (body["blockedMccs"], body["blockedCountries"]) == (["4829"], [])
    # The same values again change nothing and emit nothing.
    count = len(events(api, "card.security_settings_changed", card_id))
    assert resource(patch_settings(api, card_id, atm=True), api.version)["atm"] is True
    assert len(events(api, "card.security_settings_changed", card_id)) == count


def test_security_settings_validation(api, card):
    card_id = card["cardId"]
    cases = [
        ({}, {"body": "Give at least one setting."}),
        ({"atm": "yes"}, {"atm": "Must be true or false."}),
        ({"atm": 1}, {"atm": "Must be true or false."}),
        ({"blockedMccs": ["59"]}, {"blockedMccs.0": "A merchant category code: 4 digits."}),
        (
            {"blockedMccs": "5999"},
            {"blockedMccs": 'Expected a list of items but got type "str".'},
        ),
        (
            {"blockedCountries": ["276", "999"]},
            {"blockedCountries.1": "999 is not an ISO 3166-1 numeric country code."},
        ),
        ({"nfc": True}, {"nfc": "Unknown field."}),
    ]
    for body, details in cases:
        assert_validation_error(patch_settings(api, card_id, **body), api.version, details)
    assert settings_of(api, card_id) == {"cardId": card_id, **DEFAULT_SETTINGS}


def test_settings_and_limits_of_a_closed_card_stay(api, card):
    card_id = card["cardId"]
    assert set_status(api, card_id, "closed").status_code == 200
    for response in (
        patch_settings(api, card_id, atm=False),
        api.patch(f"/cards/{card_id}/limits", {"perTransaction": 1}),
    ):
        assert_error(
            response, api.version, 422, "card_not_active", {"cardId": card_id, "status": "closed"}
        )
    assert settings_of(api, card_id)["atm"] is True
    # Still readable.
    assert limits_of(api, card_id)["perTransaction"] == PREPAID_LIMITS["perTransaction"]


def test_suspended_card_settings_change(api, card):
    assert set_status(api, card["cardId"], "suspended").status_code == 200
    assert resource(patch_settings(api, card["cardId"], atm=False), api.version)["atm"] is False
    assert set_limits(api, card["cardId"], perTransaction=5)["perTransaction"] == 5


def test_v1_post_changes_settings_and_limits(api_v1):
    ada = customer(api_v1)
    card = issue(api_v1, account(api_v1, ada), ada)
    response = api_v1.post(f"/cards/{card['cardId']}/security-settings", {"contactless": False})
    assert resource(response, "v1")["contactless"] is False
    response = api_v1.post(f"/cards/{card['cardId']}/limits", {"perTransaction": 10})
    assert resource(response, "v1")["perTransaction"] == 10


# --- limits
def test_limits_defaults_and_partial_change(api, card):
    card_id = card["cardId"]
    today = timezone.now().date()
    assert limits_of(api, card_id) == {
        "cardId": card_id,
        "currency": "EUR",
        **PREPAID_LIMITS,
        "usage": {
            "day": today.isoformat(),
            "month": f"{today:%Y-%m}",
            "daily": 0,
            "dailyCash": 0,
            "monthly": 0,
        },
    }
    body = set_limits(api, card_id, perTransaction=5_000, daily=10_000, dailyCash=0)
    expected = {"perTransaction": 5_000, "daily": 10_000, "monthly": 1_000_000, "dailyCash": 0}
    assert {k: body[k] for k in expected} == expected
    assert card_of(api, card_id)["limits"] == expected
    [event] = events(api, "card.limits_changed", card_id)
    assert event["data"] == {
        "changedFields": ["daily", "dailyCash", "perTransaction"],
        "limits": expected,
    }
    # Zero blocks that kind of spending; it is a valid limit.
    assert set_limits(api, card_id, perTransaction=0)["perTransaction"] == 0


def test_limits_must_stay_ordered(api, card):
    card_id = card["cardId"]
    cases = [
        # perTransaction <= daily
        ({"perTransaction": 200_001}, {"perTransaction": "Must not be above the daily limit."}),
        # daily <= monthly
        (
            {"daily": 1_000_001, "perTransaction": 1},
            {"daily": "Must not be above the monthly limit."},
        ),
        ({"monthly": 199_999}, {"daily": "Must not be above the monthly limit."}),
        # dailyCash <= daily
        ({"dailyCash": 200_001}, {"dailyCash": "Must not be above the daily limit."}),
        (
            {"daily": 1_000},
            {
                "perTransaction": "Must not be above the daily limit.",
                "dailyCash": "Must not be above the daily limit.",
            },
        ),
        (
            {"perTransaction": -1},
            {"perTransaction": "Ensure this value is greater than or equal to 0."},
        ),
        ({"daily": "100"}, {"daily": "Must be an integer number of minor units, e.g. 1050."}),
        ({"monthly": 10.5}, {"monthly": "Must be an integer number of minor units, e.g. 1050."}),
        ({}, {"body": "Give at least one limit."}),
        ({"weekly": 5}, {"weekly": "Unknown field."}),
    ]
    for body, details in cases:
        response = api.patch(f"/cards/{card_id}/limits", body)
        assert_validation_error(response, api.version, details)
    assert {k: v for k, v in limits_of(api, card_id).items() if k in PREPAID_LIMITS} == (
        PREPAID_LIMITS
    )
    # Equal limits are ordered.
    body = set_limits(
        api, card_id, perTransaction=1_000, daily=1_000, monthly=1_000, dailyCash=1_000
    )
    assert {k: body[k] for k in PREPAID_LIMITS} == dict.fromkeys(PREPAID_LIMITS, 1_000)


def test_usage_after_card_transfers(api, card):
    card_id = card["cardId"]
    bob = customer(api, "Bob", "Builder")
    bob_acc = account(api, bob)
    for amount in (1_250, 3_000):
        response = send(api, {"cardId": card_id}, {"accountId": bob_acc}, amount)
        assert response.status_code in (200, 201), response.content
    usage = usage_of(api, card_id)
    assert (usage["daily"], usage["monthly"], usage["dailyCash"]) == (4_250, 4_250, 0)
    # Money into the card's account does not count.
    back = send(api, {"accountId": bob_acc}, {"cardId": card_id}, 1_000)
    assert back.status_code in (200, 201), back.content
    assert usage_of(api, card_id)["daily"] == 4_250
    # A refused transfer does not count either.
    set_limits(api, card_id, perTransaction=2_000)
    refused = send(api, {"cardId": card_id}, {"accountId": bob_acc}, 2_001)
    assert_error(
        refused,
        api.version,
        422,
        "limit_exceeded",
        {"limit": "perTransaction", "value": 2_000, "used": 0, "amount": 2_001, "remaining": 2_000},
    )
    assert usage_of(api, card_id)["daily"] == 4_250
    # The usage follows the card to its successor (one count per card lineage).
    renewed = created(api.post(f"/cards/{card_id}/renewals", {}), api.version)
    assert usage_of(api, renewed["cardId"]) == usage
    assert limits_of(api, renewed["cardId"])["perTransaction"] == 2_000
    assert send(api, {"cardId": renewed["cardId"]}, {"accountId": bob_acc}, 750).status_code in (
        200,
        201,
    )
    assert usage_of(api, renewed["cardId"])["daily"] == 5_000
    # A daily limit below what is already spent today refuses the next payment.
    set_limits(api, renewed["cardId"], daily=5_000, perTransaction=2_000, dailyCash=0)
    assert_error(
        send(api, {"cardId": renewed["cardId"]}, {"accountId": bob_acc}, 1),
        api.version,
        422,
        "limit_exceeded",
        {"limit": "daily", "value": 5_000, "used": 5_000, "amount": 1, "remaining": 0},
    )


def test_monthly_limit(api, card):
    """The month counts the days before today: one of them is written directly, as no API
    call spends on another day."""
    today = timezone.now().date()
    if today.day == 1:
        pytest.skip("no earlier day in this month")
    card_id = card["cardId"]
    CardSpend.objects.create(card_id=card_id, day=today.replace(day=1), spent=600, cash_spent=0)
    assert usage_of(api, card_id) == {
        "day": today.isoformat(),
        "month": f"{today:%Y-%m}",
        "daily": 0,
        "dailyCash": 0,
        "monthly": 600,
    }
    bob = customer(api, "Bob", "Builder")
    bob_acc = account(api, bob)
    set_limits(api, card_id, perTransaction=1_000, daily=1_000, monthly=1_000, dailyCash=0)
    assert_error(
        send(api, {"cardId": card_id}, {"accountId": bob_acc}, 401),
        api.version,
        422,
        "limit_exceeded",
        {"limit": "monthly", "value": 1_000, "used": 600, "amount": 401, "remaining": 400},
    )
    assert send(api, {"cardId": card_id}, {"accountId": bob_acc}, 400).status_code in (200, 201)
    usage = usage_of(api, card_id)
    assert (usage["daily"], usage["monthly"]) == (400, 1_000)
    assert_error(
        send(api, {"cardId": card_id}, {"accountId": bob_acc}, 1),
        api.version,
        422,
        "limit_exceeded",
        {"limit": "monthly", "value": 1_000, "used": 1_000, "amount": 1, "remaining": 0},
    )
