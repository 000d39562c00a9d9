"""Statement lines over HTTP, in both versions: `GET /accounts/{id}/transactions` (newest
first, filters, cursor pagination) and `GET /transactions/{id}`."""

from datetime import date, datetime, timedelta, timezone

import pytest

from tests.accounts.api.helpers import (
    TIMESTAMP,
    adjust,
    assert_not_found,
    assert_validation_error,
    created,
    funded_account,
    listed,
    load,
    open_account,
    prefixed_id,
    resource,
    statement,
    transfer,
    unknown_id,
)

TRANSACTION_ID = prefixed_id("txn")
DATE_INVALID = "Must be a date (2026-11-01) or an ISO 8601 date-time (2026-11-01T08:00:00Z)."
LINE_FIELDS = {
    "transactionId",
    "accountId",
    "cardId",
    "type",
    "settlementStatus",
    "direction",
    "amount",
    "currency",
    "description",
    "merchant",
    "authorizationId",
    "returnId",
    "status",
    "holdId",
    "transferId",
    "adjustmentId",
    "createdAt",
}
# v2 only (docs/metadata.md, "Versions"): what a fee line has (docs/fees.md), null on the others.
V2_LINE_FIELDS = {
    "category": None,
    "feeId": None,
    # a foreign card payment's (docs/card-transactions.md, "Foreign currency")
    "merchantAmount": None,
    "merchantCurrency": None,
    # a dispute's provisional credit or its reversal, and a back-valued line's value date
    # (docs/disputes.md)
    "disputeId": None,
    "valueAt": None,
}


def line(account_id, type, amount, *, hold=None, transfer=None, adjustment=None, description=""):
    """The expected line without its id and time (see `strip`)."""
    return {
        "accountId": account_id,
        "type": type,
        "settlementStatus": "Presentment",
        "direction": "credit" if type in ("CashInc", "Return") else "debit",
        "amount": amount,
        "currency": "EUR",
        "description": description,
        "merchant": None,
        "authorizationId": None,
        "returnId": None,
        "status": "posted",
        "cardId": None,
        "holdId": hold,
        "transferId": transfer,
        "adjustmentId": adjustment,
    }


def strip(lines: list) -> list:
    """Lines without `transactionId` and `createdAt`, after checking their form."""
    stripped = []
    for item in lines:
        if set(item) != LINE_FIELDS:  # v2
            assert set(item) == LINE_FIELDS | set(V2_LINE_FIELDS)
            assert {name: item.pop(name) for name in V2_LINE_FIELDS} == V2_LINE_FIELDS
        assert TRANSACTION_ID.match(item["transactionId"])
        assert TIMESTAMP.match(item["createdAt"])
        stripped.append({k: v for k, v in item.items() if k not in ("transactionId", "createdAt")})
    return stripped


def lines_of(api, account_id, **params) -> list:
    response = api.get(f"/accounts/{account_id}/transactions", params)
    items, cursor = listed(response)
    assert cursor is None
    return items


def moment(timestamp: str) -> datetime:
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00"))


def iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


@pytest.fixture
def history(api):
    """An account with one line of each kind the money API writes, oldest first: a load, a
    transfer out, a captured hold, a transfer in, an unload."""
    account_id = open_account(api)["accountId"]
    other_id = funded_account(api, 5_000)["accountId"]
    loaded = load(api, account_id, 10_000)
    out = created(transfer(api, account_id, other_id, 1_500, description="Rent"), api.version)
    hold = created(
        api.post(
            "/holds",
            {"accountId": account_id, "amount": 800, "currency": "EUR", "reason": "Taxi"},
        ),
        api.version,
    )
    created(api.post(f"/holds/{hold['holdId']}/captures", {"amount": 700}), api.version)
    into = created(transfer(api, other_id, account_id, 250), api.version)
    unloaded = created(
        adjust(api, account_id, "debit", 1_000, description="ATM unload"), api.version
    )
    expected = [
        line(
            account_id,
            "CashDec",
            1_000,
            adjustment=unloaded["adjustmentId"],
            description="ATM unload",
        ),
        line(account_id, "CashInc", 250, transfer=into["transferId"]),
        line(account_id, "CashDec", 700, hold=hold["holdId"], description="Taxi"),
        line(account_id, "CashDec", 1_500, transfer=out["transferId"], description="Rent"),
        line(account_id, "CashInc", 10_000, adjustment=loaded["adjustmentId"]),
    ]
    return account_id, expected


def test_lines_newest_first_with_every_field(api, history):
    account_id, expected = history

    lines = lines_of(api, account_id)

    assert strip(lines) == expected
    assert [item["transactionId"] for item in lines] == sorted(
        (item["transactionId"] for item in lines), reverse=True
    )
    assert [item["createdAt"] for item in lines] == sorted(
        (item["createdAt"] for item in lines), reverse=True
    )
    # The balance is what the lines add up to.
    signed = sum(i["amount"] if i["direction"] == "credit" else -i["amount"] for i in lines)
    assert signed == 10_000 - 1_500 - 700 + 250 - 1_000
    account = resource(api.get(f"/accounts/{account_id}"), api.version)
    assert account["balances"]["posted"] == signed


def test_get_one_line(api, history):
    account_id, _ = history
    lines = lines_of(api, account_id)

    for item in lines:
        assert resource(api.get(f"/transactions/{item['transactionId']}"), api.version) == item


def test_filter_by_type_and_settlement_status(api, history):
    account_id, expected = history

    assert strip(lines_of(api, account_id, type="CashInc")) == [expected[1], expected[4]]
    assert strip(lines_of(api, account_id, type="CashDec")) == [
        expected[0],
        expected[2],
        expected[3],
    ]
    assert lines_of(api, account_id, type="Goods") == []
    assert strip(lines_of(api, account_id, settlementStatus="Presentment")) == expected
    assert lines_of(api, account_id, settlementStatus="Unsettled") == []
    assert strip(lines_of(api, account_id, type="CashInc", settlementStatus="Presentment")) == [
        expected[1],
        expected[4],
    ]


@pytest.mark.parametrize(
    ("params", "details"),
    [
        ({"type": "cashinc"}, {"type": '"cashinc" is not a valid choice.'}),
        ({"type": "Purchase"}, {"type": '"Purchase" is not a valid choice.'}),
        (
            {"settlementStatus": "Settled"},
            {"settlementStatus": '"Settled" is not a valid choice.'},
        ),
        ({"limit": "0"}, {"limit": "Must be an integer from 1 to 100."}),
        ({"limit": "abc"}, {"limit": "Must be an integer from 1 to 100."}),
        ({"cursor": "%%%"}, {"cursor": "Not a valid cursor."}),
    ],
)
def test_bad_filters_are_validation_errors(api, params, details):
    account_id = funded_account(api, 100)["accountId"]

    response = api.get(f"/accounts/{account_id}/transactions", params)

    assert_validation_error(response, api.version, details)


# --- dates
def test_dates_are_inclusive_whole_utc_days(api):
    account_id = funded_account(api, 100)["accountId"]
    [only] = lines_of(api, account_id)
    day = date.fromisoformat(only["createdAt"][:10])  # the line's UTC day
    before, after = (day - timedelta(days=1)).isoformat(), (day + timedelta(days=1)).isoformat()
    today = day.isoformat()

    assert lines_of(api, account_id, fromDate=today, toDate=today) == [only]
    assert lines_of(api, account_id, fromDate=today) == [only]
    assert lines_of(api, account_id, toDate=today) == [only]
    assert lines_of(api, account_id, fromDate=before, toDate=after) == [only]
    assert lines_of(api, account_id, toDate=before) == []
    assert lines_of(api, account_id, fromDate=before, toDate=before) == []
    assert lines_of(api, account_id, fromDate=after) == []
    assert lines_of(api, account_id, fromDate="2000-01-01", toDate="2999-12-31") == [only]
    # Any ISO 8601 date is a whole day: the basic form and a week date too.
    basic = day.strftime("%Y%m%d")
    week = "{}-W{:02d}-{}".format(*day.isocalendar())
    assert lines_of(api, account_id, fromDate=basic, toDate=basic) == [only]
    assert lines_of(api, account_id, toDate=week) == [only]
    assert lines_of(api, account_id, toDate=(day - timedelta(days=1)).strftime("%Y%m%d")) == []


def test_date_time_bounds(api):
    account_id = funded_account(api, 100)["accountId"]
    [only] = lines_of(api, account_id)
    at = moment(only["createdAt"])
    second = timedelta(seconds=1)

    assert lines_of(api, account_id, fromDate=iso(at - second), toDate=iso(at + second)) == [only]
    assert lines_of(api, account_id, fromDate=iso(at - second)) == [only]
    assert lines_of(api, account_id, toDate=iso(at + second)) == [only]
    assert lines_of(api, account_id, fromDate=iso(at + second)) == []
    assert lines_of(api, account_id, toDate=iso(at - second)) == []
    # An offset is honoured; no offset means UTC.
    plus_two = timezone(timedelta(hours=2))
    assert lines_of(api, account_id, toDate=(at + second).astimezone(plus_two).isoformat()) == [
        only
    ]
    assert lines_of(api, account_id, fromDate=(at - second).astimezone(plus_two).isoformat()) == [
        only
    ]
    naive = (at + second).replace(tzinfo=None).isoformat()
    assert lines_of(api, account_id, toDate=naive) == [only]
    naive = (at - second).replace(tzinfo=None).isoformat()
    assert lines_of(api, account_id, toDate=naive) == []
    # A date-time bound and a date bound together.
    assert lines_of(api, account_id, fromDate=iso(at - second), toDate=only["createdAt"][:10]) == [
        only
    ]


def test_dates_before_1970_bound_nothing_out_or_everything_out(api):
    """A lower bound before any line keeps every line; an upper bound before any line keeps
    none (ids count milliseconds from 1970: earlier moments must still order before them)."""
    account_id = funded_account(api, 100)["accountId"]
    [only] = lines_of(api, account_id)

    assert lines_of(api, account_id, fromDate="1969-12-31") == [only]
    assert lines_of(api, account_id, fromDate="0001-01-01") == [only]
    assert lines_of(api, account_id, fromDate="1900-01-01T00:00:00Z") == [only]
    assert lines_of(api, account_id, toDate="1969-12-31") == []
    assert lines_of(api, account_id, toDate="0001-01-01") == []
    assert lines_of(api, account_id, fromDate="1900-01-01", toDate="1950-01-01") == []
    assert lines_of(api, account_id, fromDate="9999-12-31") == []
    assert lines_of(api, account_id, toDate="9999-12-31") == [only]


def test_from_after_to_is_a_validation_error(api):
    account_id = funded_account(api, 100)["accountId"]

    for params in (
        {"fromDate": "2026-11-02", "toDate": "2026-11-01"},
        {"fromDate": "2026-11-01T12:00:00Z", "toDate": "2026-11-01T11:59:59Z"},
    ):
        response = api.get(f"/accounts/{account_id}/transactions", params)
        assert_validation_error(response, api.version, {"toDate": "Must not be before fromDate."})
    # The same day on both sides is one whole day, a valid range.
    assert lines_of(api, account_id, fromDate="2001-01-01", toDate="2001-01-01") == []


@pytest.mark.parametrize(
    "value", ["2026-13-01", "2026-02-30", "yesterday", "01/11/2026", "2026-11-01T25:00:00Z"]
)
def test_bad_dates_are_validation_errors(api, value):
    account_id = funded_account(api, 100)["accountId"]

    for name in ("fromDate", "toDate"):
        response = api.get(f"/accounts/{account_id}/transactions", {name: value})
        assert_validation_error(response, api.version, {name: DATE_INVALID})


# --- pagination
def test_pagination_walks_every_line_once(api):
    account_id = open_account(api)["accountId"]
    for amount in range(1, 14):
        load(api, account_id, amount)
    everything = lines_of(api, account_id, limit=100)
    assert [item["amount"] for item in everything] == list(range(13, 0, -1))

    for limit, pages in ((5, 3), (13, 1), (1, 13)):
        seen, cursor, count = [], None, 0
        while True:
            params = {"limit": limit, **({"cursor": cursor} if cursor else {})}
            items, cursor = listed(api.get(f"/accounts/{account_id}/transactions", params))
            count += 1
            assert len(items) <= limit
            seen += items
            if cursor is None:
                break
        assert (seen, count) == (everything, pages)

    default_page, cursor = listed(api.get(f"/accounts/{account_id}/transactions"))
    assert (default_page, cursor) == (everything, None)  # 20 by default


def test_pagination_with_a_filter(api):
    account_id = open_account(api)["accountId"]
    for amount in (100, 200, 300):
        load(api, account_id, amount)
        created(adjust(api, account_id, "debit", amount // 100), api.version)

    first, cursor = listed(
        api.get(f"/accounts/{account_id}/transactions", {"type": "CashInc", "limit": 2})
    )
    rest, end = listed(
        api.get(
            f"/accounts/{account_id}/transactions",
            {"type": "CashInc", "limit": 2, "cursor": cursor},
        )
    )

    assert [item["amount"] for item in first + rest] == [300, 200, 100]
    assert end is None


# --- tenancy
def test_another_institutions_lines_are_not_found(api, other_api):
    theirs = funded_account(other_api, 100)["accountId"]
    [their_line] = lines_of(other_api, theirs)

    assert_not_found(
        api.get(f"/accounts/{theirs}/transactions"), api.version, "No account with this id."
    )
    assert_not_found(
        api.get(f"/accounts/{unknown_id('acc')}/transactions"),
        api.version,
        "No account with this id.",
    )
    for transaction_id in (their_line["transactionId"], unknown_id("txn")):
        assert_not_found(
            api.get(f"/transactions/{transaction_id}"),
            api.version,
            "No transaction with this id.",
        )
    assert statement(other_api, theirs) == [their_line]
