"""`/holds` over HTTP, in both versions: place, read, list, release, capture, expiry."""

import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from accounts.models import Hold
from api.context import iso_millis
from tests.accounts.api.helpers import (
    CREATED,
    TIMESTAMP,
    assert_error,
    assert_not_found,
    assert_validation_error,
    balances,
    created,
    events,
    funded_account,
    items_of,
    money,
    prefixed_id,
    resource,
    set_status,
    statement,
    unknown_id,
)

HOLD_ID = prefixed_id("hold")
NO_HOLD = "No hold with this id."
EXPIRY_MESSAGE = "Must be in the future and within 30 days."


def place(api, account_id, amount, currency="EUR", **fields):
    return api.post(
        "/holds", {"accountId": account_id, "amount": amount, "currency": currency, **fields}
    )


def placed(api, account_id, amount, **fields) -> dict:
    return created(place(api, account_id, amount, **fields), api.version)


def release(api, hold_id):
    return api.patch(f"/holds/{hold_id}", {"status": "released"})


def capture(api, hold_id, amount=None):
    return api.post(f"/holds/{hold_id}/captures", {} if amount is None else {"amount": amount})


def get_hold(api, hold_id) -> dict:
    return resource(api.get(f"/holds/{hold_id}"), api.version)


def stored(hold_id) -> Hold:
    return Hold.objects.get(pk=hold_id)


def hold_event_data(account_id, amount, captured=0):
    return {
        "accountId": account_id,
        "amount": amount,
        "capturedAmount": captured,
        "currency": "EUR",
    }


# --- place
def test_place_a_hold_shows_every_field_and_moves_the_amount_to_pending(api):
    account_id = funded_account(api, 5_000)["accountId"]
    expires_at = (timezone.now() + timedelta(days=2)).replace(microsecond=123_000)

    response = place(
        api, account_id, 1_200, expiresAt=expires_at.isoformat(), reason="Hotel deposit"
    )

    assert response.status_code == CREATED[api.version]
    body = resource(response, api.version, CREATED[api.version])
    assert HOLD_ID.match(body["holdId"])
    assert TIMESTAMP.match(body["createdAt"])
    assert body == {
        "holdId": body["holdId"],
        "accountId": account_id,
        "amount": 1_200,
        "capturedAmount": 0,
        "currency": "EUR",
        "status": "active",
        "reason": "Hotel deposit",
        "expiresAt": iso_millis(expires_at),
        **({"metadata": {}} if api.version == "v2" else {}),
        "createdAt": body["createdAt"],
        "updatedAt": body["createdAt"],
        "closedAt": None,
    }
    assert balances(api, account_id) == {"posted": 5_000, "pending": 1_200, "available": 3_800}
    [event] = events(api, "hold.created", body["holdId"])
    assert event["objectType"] == "hold"
    assert event["data"] == hold_event_data(account_id, 1_200)


def test_expiry_defaults_to_seven_days(api):
    account_id = funded_account(api, 500)["accountId"]

    body = placed(api, account_id, 100)

    hold = stored(body["holdId"])
    assert body["reason"] == ""
    assert body["expiresAt"] == iso_millis(hold.expires_at)
    assert abs(hold.expires_at - hold.created_at - timedelta(days=7)) < timedelta(seconds=5)


def test_expiry_may_be_exactly_in_thirty_days_less_a_minute(api):
    account_id = funded_account(api, 500)["accountId"]
    expires_at = timezone.now() + timedelta(days=30, minutes=-1)

    body = placed(api, account_id, 100, expiresAt=expires_at.isoformat())

    assert body["expiresAt"] == iso_millis(expires_at)


@pytest.mark.parametrize(
    ("expires_in", "details"),
    [
        (timedelta(minutes=-1), {"expiresAt": EXPIRY_MESSAGE}),
        (timedelta(0), {"expiresAt": EXPIRY_MESSAGE}),
        (timedelta(days=30, minutes=1), {"expiresAt": EXPIRY_MESSAGE}),
        (timedelta(days=31), {"expiresAt": EXPIRY_MESSAGE}),
    ],
)
def test_expiry_in_the_past_or_beyond_thirty_days_is_rejected(api, expires_in, details):
    account_id = funded_account(api, 500)["accountId"]

    response = place(api, account_id, 100, expiresAt=(timezone.now() + expires_in).isoformat())

    assert_validation_error(response, api.version, details)
    assert balances(api, account_id) == money(500)
    assert Hold.objects.count() == 0


def test_place_rejects_invalid_bodies(api):
    account_id = funded_account(api, 500)["accountId"]
    valid = {"accountId": account_id, "amount": 100, "currency": "EUR"}
    cases = [
        ({"amount": 0}, {"amount": "Ensure this value is greater than or equal to 1."}),
        ({"amount": "100"}, {"amount": "Must be an integer number of minor units, e.g. 1050."}),
        ({"amount": 1.5}, {"amount": "Must be an integer number of minor units, e.g. 1050."}),
        ({"currency": "XYZ"}, {"currency": "XYZ is not an ISO 4217 currency code."}),
        ({"accountId": 5}, {"accountId": "Not a valid string."}),
        ({"cardId": "card_x"}, {"cardId": "Unknown field."}),
        (
            {"expiresAt": "tomorrow"},
            {
                "expiresAt": "Datetime has wrong format. Use one of these formats instead: "
                "YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z]."
            },
        ),
    ]

    for change, details in cases:
        assert_validation_error(api.post("/holds", {**valid, **change}), api.version, details)
    assert_validation_error(
        api.post("/holds", {}),
        api.version,
        {name: "This field is required." for name in ("accountId", "amount", "currency")},
    )
    assert balances(api, account_id) == money(500)
    assert Hold.objects.count() == 0


def test_hold_above_available_is_insufficient_funds(api):
    account_id = funded_account(api, 1_000)["accountId"]
    placed(api, account_id, 600)

    response = place(api, account_id, 401)

    assert_error(
        response,
        api.version,
        422,
        "insufficient_funds",
        {"accountId": account_id, "available": 400, "amount": 401},
    )
    assert balances(api, account_id) == money(1_000, 600)
    assert Hold.objects.count() == 1
    placed(api, account_id, 400)
    assert balances(api, account_id) == money(1_000, 1_000)


def test_hold_in_another_currency_or_on_a_frozen_account_is_refused(api):
    account_id = funded_account(api, 1_000)["accountId"]

    assert_error(
        place(api, account_id, 100, "GHS"),
        api.version,
        422,
        "currency_mismatch",
        {"accountId": account_id, "accountCurrency": "EUR", "currency": "GHS"},
    )
    resource(set_status(api, account_id, "frozen"), api.version)
    assert_error(
        place(api, account_id, 100),
        api.version,
        422,
        "account_not_active",
        {"accountId": account_id, "status": "frozen"},
    )
    assert balances(api, account_id) == money(1_000)
    assert Hold.objects.count() == 0


def test_hold_on_an_unknown_or_another_institutions_account_is_not_found(api, other_api):
    theirs = funded_account(other_api, 1_000)["accountId"]

    for account_id in (theirs, unknown_id("acc")):
        assert_not_found(place(api, account_id, 100), api.version, "No account with this id.")
    assert balances(other_api, theirs) == money(1_000)


# --- read and list
def test_get_and_list_with_filters(api, other_api):
    first = funded_account(api, 5_000)["accountId"]
    second = funded_account(api, 5_000)["accountId"]
    a = placed(api, first, 100)
    b = placed(api, second, 200)
    c = placed(api, first, 300)
    resource(release(api, c["holdId"]), api.version)
    funded_account(other_api, 1_000)
    theirs = placed(other_api, items_of(other_api, "/accounts")[0]["accountId"], 50)

    assert get_hold(api, a["holdId"]) == a
    assert [h["holdId"] for h in items_of(api, "/holds")] == [c["holdId"], b["holdId"], a["holdId"]]
    assert [h["holdId"] for h in items_of(api, "/holds", accountId=first)] == [
        c["holdId"],
        a["holdId"],
    ]
    assert [h["holdId"] for h in items_of(api, "/holds", accountId=first, status="active")] == [
        a["holdId"]
    ]
    assert [h["holdId"] for h in items_of(api, "/holds", status="released")] == [c["holdId"]]
    assert items_of(api, "/holds", status="captured") == []
    assert items_of(api, "/holds", accountId=unknown_id("acc")) == []
    assert theirs["holdId"] not in [h["holdId"] for h in items_of(api, "/holds")]
    assert_validation_error(
        api.get("/holds", {"status": "pending"}),
        api.version,
        {"status": '"pending" is not a valid choice.'},
    )


def test_list_pagination(api):
    account_id = funded_account(api, 5_000)["accountId"]
    ids = [placed(api, account_id, 10)["holdId"] for _ in range(3)]

    page, cursor = items_of_page(api, limit=2)
    rest, end = items_of_page(api, limit=2, cursor=cursor)

    assert [h["holdId"] for h in page + rest] == ids[::-1]
    assert end is None


def items_of_page(api, **params):
    response = api.get("/holds", params)
    assert response.status_code == 200, response.content
    payload = response.json()
    return payload["data"], payload["nextCursor"]


def test_another_institutions_hold_is_not_found(api, other_api):
    account_id = funded_account(other_api, 1_000)["accountId"]
    theirs = placed(other_api, account_id, 100)["holdId"]

    for hold_id in (theirs, unknown_id("hold")):
        assert_not_found(api.get(f"/holds/{hold_id}"), api.version, NO_HOLD)
        assert_not_found(release(api, hold_id), api.version, NO_HOLD)
        assert_not_found(capture(api, hold_id, 10), api.version, NO_HOLD)
    assert get_hold(other_api, theirs)["status"] == "active"
    assert balances(other_api, account_id) == money(1_000, 100)


# --- release
def test_release_gives_the_amount_back(api):
    account_id = funded_account(api, 1_000)["accountId"]
    hold = placed(api, account_id, 700)

    body = resource(release(api, hold["holdId"]), api.version)

    assert TIMESTAMP.match(body["closedAt"])
    assert body == {
        **hold,
        "status": "released",
        "updatedAt": body["closedAt"],
        "closedAt": body["closedAt"],
    }
    assert balances(api, account_id) == money(1_000)
    assert statement(api, account_id)[0]["type"] == "CashInc"  # the load only
    assert len(statement(api, account_id)) == 1
    [event] = events(api, "hold.released", hold["holdId"])
    assert event["data"] == hold_event_data(account_id, 700)


def test_releasing_twice_is_an_invalid_state_transition(api):
    account_id = funded_account(api, 1_000)["accountId"]
    hold_id = placed(api, account_id, 700)["holdId"]
    released = resource(release(api, hold_id), api.version)

    assert_error(
        release(api, hold_id),
        api.version,
        409,
        "invalid_state_transition",
        {"from": "released", "to": "released"},
        message="A released hold cannot become released.",
    )
    assert get_hold(api, hold_id) == released
    assert balances(api, account_id) == money(1_000)
    assert len(events(api, "hold.released")) == 1


def test_v1_releases_with_post_too(api_v1):
    account_id = funded_account(api_v1, 1_000)["accountId"]
    hold_id = placed(api_v1, account_id, 700)["holdId"]

    body = resource(api_v1.post(f"/holds/{hold_id}", {"status": "released"}), "v1")

    assert body["status"] == "released"
    assert balances(api_v1, account_id) == money(1_000)


@pytest.mark.parametrize(
    ("body", "details"),
    [
        ({"status": "captured"}, {"status": '"captured" is not a valid choice.'}),
        ({"status": "active"}, {"status": '"active" is not a valid choice.'}),
        ({}, {"status": "This field is required."}),
        ({"status": "released", "amount": 5}, {"amount": "Unknown field."}),
    ],
)
def test_patch_only_releases(api, body, details):
    account_id = funded_account(api, 1_000)["accountId"]
    hold = placed(api, account_id, 700)
    if body == {} and api.version == "v2":  # v2 also takes metadata alone (docs/metadata.md)
        details = {"status": "Give status, metadata or both."}

    assert_validation_error(api.patch(f"/holds/{hold['holdId']}", body), api.version, details)
    assert get_hold(api, hold["holdId"]) == hold


# --- capture
def test_partial_capture_moves_the_captured_amount_and_releases_the_rest(api):
    account_id = funded_account(api, 5_000)["accountId"]
    hold = placed(api, account_id, 1_000, reason="Fuel pre-authorization")

    response = capture(api, hold["holdId"], 600)

    body = resource(response, api.version, CREATED[api.version])
    assert TIMESTAMP.match(body["closedAt"])
    assert body == {
        **hold,
        "status": "captured",
        "capturedAmount": 600,
        "updatedAt": body["closedAt"],
        "closedAt": body["closedAt"],
    }
    assert get_hold(api, hold["holdId"]) == body
    assert balances(api, account_id) == money(4_400)
    line = statement(api, account_id)[0]
    assert TIMESTAMP.match(line["createdAt"])
    assert line == {
        "transactionId": line["transactionId"],
        "accountId": account_id,
        "type": "CashDec",
        "settlementStatus": "Presentment",
        "direction": "debit",
        "amount": 600,
        "currency": "EUR",
        "description": "Fuel pre-authorization",
        "merchant": None,
        "authorizationId": None,
        "returnId": None,
        "status": "posted",
        "cardId": None,
        "holdId": hold["holdId"],
        "transferId": None,
        "adjustmentId": None,
        "createdAt": line["createdAt"],
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
        ),  # docs/fees.md, docs/card-transactions.md
    }
    [event] = events(api, "hold.captured", hold["holdId"])
    assert event["data"] == hold_event_data(account_id, 1_000, captured=600)


def test_capture_without_an_amount_takes_all(api):
    account_id = funded_account(api, 5_000)["accountId"]
    hold_id = placed(api, account_id, 1_000)["holdId"]

    body = created(capture(api, hold_id), api.version)

    assert (body["status"], body["capturedAmount"]) == ("captured", 1_000)
    assert balances(api, account_id) == money(4_000)


def test_capture_of_the_whole_available_balance(api):
    account_id = funded_account(api, 1_000)["accountId"]
    hold_id = placed(api, account_id, 1_000)["holdId"]
    assert balances(api, account_id) == money(1_000, 1_000)

    created(capture(api, hold_id, 1_000), api.version)

    assert balances(api, account_id) == money(0)


def test_capture_above_the_held_amount_is_refused(api):
    account_id = funded_account(api, 5_000)["accountId"]
    hold = placed(api, account_id, 1_000)

    assert_error(
        capture(api, hold["holdId"], 1_001),
        api.version,
        422,
        "amount_exceeds_remaining",
        {"amount": 1_001, "held": 1_000},
    )
    assert get_hold(api, hold["holdId"]) == hold
    assert balances(api, account_id) == money(5_000, 1_000)
    assert len(statement(api, account_id)) == 1


@pytest.mark.parametrize("first", ["release", "capture"])
def test_capture_of_a_closed_hold_is_an_invalid_state_transition(api, first):
    account_id = funded_account(api, 5_000)["accountId"]
    hold_id = placed(api, account_id, 1_000)["holdId"]
    if first == "release":
        resource(release(api, hold_id), api.version)
    else:
        created(capture(api, hold_id, 400), api.version)
    after = balances(api, account_id)
    state = "released" if first == "release" else "captured"

    assert_error(
        capture(api, hold_id, 100),
        api.version,
        409,
        "invalid_state_transition",
        {"from": state, "to": "captured"},
    )
    assert_error(
        release(api, hold_id),
        api.version,
        409,
        "invalid_state_transition",
        {"from": state, "to": "released"},
    )
    assert balances(api, account_id) == after
    assert get_hold(api, hold_id)["status"] == state


def test_capture_on_a_frozen_account_is_refused(api):
    account_id = funded_account(api, 5_000)["accountId"]
    hold_id = placed(api, account_id, 1_000)["holdId"]
    resource(set_status(api, account_id, "frozen"), api.version)

    assert_error(
        capture(api, hold_id, 500),
        api.version,
        422,
        "account_not_active",
        {"accountId": account_id, "status": "frozen"},
    )
    assert get_hold(api, hold_id)["status"] == "active"
    assert balances(api, account_id) == money(5_000, 1_000)


def test_capture_rejects_invalid_amounts(api):
    account_id = funded_account(api, 5_000)["accountId"]
    hold = placed(api, account_id, 1_000)
    cases = [
        ({"amount": 0}, {"amount": "Ensure this value is greater than or equal to 1."}),
        ({"amount": -5}, {"amount": "Ensure this value is greater than or equal to 1."}),
        ({"amount": "5"}, {"amount": "Must be an integer number of minor units, e.g. 1050."}),
        ({"amount": True}, {"amount": "Must be an integer number of minor units, e.g. 1050."}),
        ({"amount": 5, "currency": "EUR"}, {"currency": "Unknown field."}),
    ]

    for body, details in cases:
        response = api.post(f"/holds/{hold['holdId']}/captures", body)
        assert_validation_error(response, api.version, details)
    assert get_hold(api, hold["holdId"]) == hold


def test_account_with_an_active_hold_cannot_be_closed(api):
    account_id = funded_account(api, 1_000)["accountId"]
    placed(api, account_id, 1_000)

    assert_error(
        set_status(api, account_id, "closed"),
        api.version,
        422,
        "account_not_empty",
        {"posted": 1_000, "pending": 1_000},
    )


# --- expiry
def test_expire_holds_expires_due_holds_and_gives_the_amount_back(api):
    account_id = funded_account(api, 5_000)["accountId"]
    due = placed(api, account_id, 1_000)
    later = placed(api, account_id, 300)
    Hold.objects.filter(pk=due["holdId"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert balances(api, account_id) == money(5_000, 1_300)

    out = io.StringIO()
    call_command("expire_holds", stdout=out)

    assert (
        out.getvalue() == "Expired 1 hold(s), 0 card authorization(s) and 0 pending transfer(s).\n"
    )
    expired = get_hold(api, due["holdId"])
    assert TIMESTAMP.match(expired["closedAt"])
    assert expired["status"] == "expired"
    assert expired["capturedAmount"] == 0
    assert get_hold(api, later["holdId"])["status"] == "active"
    assert balances(api, account_id) == money(5_000, 300)
    [event] = events(api, "hold.expired", due["holdId"])
    assert event["data"] == hold_event_data(account_id, 1_000)
    assert_error(
        capture(api, due["holdId"]),
        api.version,
        409,
        "invalid_state_transition",
        {"from": "expired", "to": "captured"},
    )
    # The freed amount can be spent at once.
    created(place(api, account_id, 4_700), api.version)

    out = io.StringIO()
    call_command("expire_holds", stdout=out)
    assert (
        out.getvalue() == "Expired 0 hold(s), 0 card authorization(s) and 0 pending transfer(s).\n"
    )


def test_a_hold_past_its_expiry_cannot_be_captured_before_the_job_runs(api):
    account_id = funded_account(api, 5_000)["accountId"]
    hold = placed(api, account_id, 1_000)
    past = timezone.now() - timedelta(seconds=1)
    Hold.objects.filter(pk=hold["holdId"]).update(expires_at=past)
    hold = get_hold(api, hold["holdId"])

    assert_error(
        capture(api, hold["holdId"], 400),
        api.version,
        409,
        "invalid_state_transition",
        {"from": "expired", "to": "captured"},
        message=f"This hold expired at {iso_millis(past)}; it cannot be captured.",
    )
    assert get_hold(api, hold["holdId"]) == hold  # still active until the job closes it
    assert balances(api, account_id) == money(5_000, 1_000)
    assert len(statement(api, account_id)) == 1  # the load only
    assert events(api, "hold.captured") == []


def test_a_hold_past_its_expiry_may_still_be_released_before_the_job_runs(api):
    account_id = funded_account(api, 5_000)["accountId"]
    hold_id = placed(api, account_id, 1_000)["holdId"]
    Hold.objects.filter(pk=hold_id).update(expires_at=timezone.now() - timedelta(seconds=1))

    body = resource(release(api, hold_id), api.version)

    assert body["status"] == "released"
    assert balances(api, account_id) == money(5_000)
    out = io.StringIO()
    call_command("expire_holds", stdout=out)
    assert (
        out.getvalue() == "Expired 0 hold(s), 0 card authorization(s) and 0 pending transfer(s).\n"
    )
    assert get_hold(api, hold_id)["status"] == "released"


def test_every_hold_event_is_listed(api):
    account_id = funded_account(api, 5_000)["accountId"]
    captured_id = placed(api, account_id, 100)["holdId"]
    released_id = placed(api, account_id, 200)["holdId"]
    expired_id = placed(api, account_id, 300)["holdId"]
    created(capture(api, captured_id, 50), api.version)
    resource(release(api, released_id), api.version)
    Hold.objects.filter(pk=expired_id).update(expires_at=timezone.now() - timedelta(minutes=1))
    call_command("expire_holds", stdout=io.StringIO())

    hold_events = [
        (event["type"], event["objectId"])
        for event in items_of(api, "/events", limit=100)
        if event["type"].startswith("hold.")
    ]

    assert hold_events == [
        ("hold.expired", expired_id),
        ("hold.released", released_id),
        ("hold.captured", captured_id),
        ("hold.created", expired_id),
        ("hold.created", released_id),
        ("hold.created", captured_id),
    ]
    assert balances(api, account_id) == money(4_950)
