"""GET /accounts/{id}/balances?at=... over HTTP, in both versions (issue 15,
docs/balances-at-an-instant.md): at instants between known postings, the balances equal what
the account showed then (a replay of the ledger); `verify_ledger` holds after each posting;
`at` in the future, without an offset or malformed is a 400 validation_error."""

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from accounts.verification import ledger_breaches
from api.context import iso_millis

from .helpers import (
    ANY,
    CREATED,
    assert_error,
    assert_not_found,
    created,
    funded_account,
    load,
    open_account,
    resource,
    transfer,
    unknown_id,
)

pytestmark = pytest.mark.django_db


def at(api, account_id, instant) -> dict:
    """The balances of the account at `instant` (a datetime, or the raw query value)."""
    value = instant.isoformat() if isinstance(instant, datetime) else instant
    return resource(api.get(f"/accounts/{account_id}/balances", {"at": value}), api.version)


def now_balances(api, account_id) -> dict:
    body = resource(api.get(f"/accounts/{account_id}/balances"), api.version)
    return {"posted": body["posted"], "pending": body["pending"]}


def test_balances_between_postings_equal_what_the_account_showed_then(api):
    account_id = open_account(api)["accountId"]
    other_id = open_account(api)["accountId"]
    hold_to_capture, hold_to_release = {}, {}

    def place(amount, into):
        body = {"accountId": account_id, "amount": amount, "currency": "EUR"}
        response = api.post("/holds", body)
        assert response.status_code == CREATED[api.version], response.content
        into.update(resource(response, api.version, CREATED[api.version]))

    steps = [
        lambda: load(api, account_id, 2500),
        lambda: place(400, hold_to_capture),
        lambda: created(transfer(api, account_id, other_id, 1000), api.version),
        lambda: place(100, hold_to_release),
        lambda: created(
            api.post(f"/holds/{hold_to_capture['holdId']}/captures", {"amount": 300}), api.version
        ),
        lambda: resource(
            api.patch(f"/holds/{hold_to_release['holdId']}", {"status": "released"}), api.version
        ),
        lambda: created(transfer(api, other_id, account_id, 250), api.version),
    ]
    # (instant just after a step, just before the next, the balances shown in between)
    quiet = []
    since, shown = timezone.now(), {"posted": 0, "pending": 0}
    for step in steps:
        quiet.append((since, timezone.now(), shown))
        step()
        assert ledger_breaches() == []
        shown, since = now_balances(api, account_id), timezone.now()
    quiet.append((since, timezone.now(), shown))
    assert shown == {"posted": 2500 - 1000 - 300 + 250, "pending": 0}

    for since, until, expected in quiet:
        for instant in (since, since + (until - since) / 2, until):
            body = at(api, account_id, instant)
            assert body == {
                "accountId": account_id,
                **expected,
                "currency": "EUR",
                "at": iso_millis(instant),
            }
    assert [at(api, account_id, since)["posted"] for since, _, _ in quiet] == [
        0, 2500, 2500, 1500, 1500, 1200, 1200, 1450
    ]  # fmt: skip
    assert [at(api, account_id, since)["pending"] for since, _, _ in quiet] == [
        0, 0, 400, 400, 500, 100, 0, 0
    ]  # fmt: skip


def test_without_at_the_balances_are_todays_and_show_available(api):
    account_id = funded_account(api, 700)["accountId"]
    assert resource(api.get(f"/accounts/{account_id}/balances"), api.version) == {
        "accountId": account_id,
        "posted": 700,
        "pending": 0,
        "available": 700,
        "currency": "EUR",
    }


def test_an_instant_before_the_account_existed_is_zero(api):
    account_id = funded_account(api, 700)["accountId"]
    assert at(api, account_id, "1970-01-01T00:00:00Z")["posted"] == 0
    assert at(api, account_id, "2001-01-01T00:00:00Z") == {
        "accountId": account_id,
        "posted": 0,
        "pending": 0,
        "currency": "EUR",
        "at": "2001-01-01T00:00:00.000Z",
    }


def test_an_offset_is_the_same_instant_as_utc(api):
    account_id = funded_account(api, 700)["accountId"]
    later = datetime.now(UTC) - timedelta(microseconds=1)
    in_berlin = later.astimezone(timezone.get_fixed_timezone(60))
    assert at(api, account_id, in_berlin.isoformat())["posted"] == 700
    assert at(api, account_id, in_berlin.isoformat())["at"] == iso_millis(later)


@pytest.mark.parametrize(
    "value, message",
    [
        ("2026-01-31T10:00:00", "offset"),
        ("2026-01-31", "offset"),
        ("yesterday", "invalid"),
        ("2026-13-01T00:00:00Z", "invalid"),
        ("2026-01-31T10:00:00Z\n", "invalid"),
        ("", "invalid"),
        ("２０２６-01-31T10:00:00Z", "invalid"),
        ("0001-01-01T00:00:00+01:00", "out of range"),
        ("1969-12-31T23:59:59.999Z", "epoch"),
        ("future", "future"),
    ],
)
def test_a_bad_at_is_a_validation_error(api, value, message):
    account_id = funded_account(api, 700)["accountId"]
    if value == "future":
        value = (timezone.now() + timedelta(minutes=5)).isoformat()
    response = api.get(f"/accounts/{account_id}/balances", {"at": value})
    error = assert_error(response, api.version, 400, "validation_error", details=ANY)
    assert set(error["details"]) == {"at"}
    text = error["details"]["at"]
    expected = {
        "offset": "Must have an offset or Z, e.g. 2026-01-31T23:59:59Z (in a query string, + is "
        "%2B).",
        "future": "Must not be in the future.",
        "epoch": "Must not be before 1970-01-01T00:00:00Z.",
        "out of range": "Datetime value out of range.",
    }
    if message in expected:
        assert text == expected[message]
    else:
        assert text.startswith("Datetime has wrong format.")


def test_an_unknown_account_is_not_found_with_at(api):
    response = api.get(f"/accounts/{unknown_id('acc')}/balances", {"at": "2026-01-01T00:00:00Z"})
    assert_not_found(response, api.version, "No account with this id.")
