"""Card lines in the statement listings, in both versions: `GET /cards/{cardId}/transactions`
and `GET /accounts/{id}/transactions` show what moved through a card (authorizations in each
state, returns, card transfers; never a decline) with type, settlement status, status, merchant
and links; the filters combine; the cursor pages through; another institution's card is 404.
`GET /card-authorizations` lists by card and status."""

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.accounts.api.helpers import listed, statement
from tests.cards.api.helpers import send

from .helpers import (
    ATM,
    MERCHANT,
    START,
    approved,
    assert_error,
    card_lines,
    card_return,
    created,
    declined,
    funded,
    items_of,
    presented,
    reverse,
)

pytestmark = pytest.mark.django_db


def moment() -> str:
    """Now as an ISO date-time with milliseconds and `Z`, strictly between what was written
    before and what is written after."""
    time.sleep(0.005)
    now = timezone.now().isoformat(timespec="milliseconds").replace("+00:00", "Z")
    time.sleep(0.005)
    return now


def summary(line) -> tuple:
    return (
        line["type"],
        line["settlementStatus"],
        line["status"],
        line["amount"],
        line["direction"],
        line["authorizationId"],
        line["returnId"],
    )


@pytest.fixture
def history(api):
    """On one card, oldest first: a presented purchase, a reversed cash withdrawal, a decline,
    a pending purchase, a return, a card transfer out."""
    f = funded(api)
    bob = funded(api, load=0, first="Bob")
    made = {"funded": f, "bob": bob}
    made["presented"] = approved(api, f.card_id, 1_000)
    presented(api, made["presented"]["authorizationId"], 900)
    made["reversed"] = approved(api, f.card_id, 2_000, type="Cash", merchant=ATM)
    created(reverse(api, made["reversed"]["authorizationId"]), api.version)
    made["declined"] = declined(api, f.card_id, START, "insufficient_funds")
    made["middle"] = moment()
    made["pending"] = approved(api, f.card_id, 500)
    made["return"] = created(card_return(api, f.card_id, 300), api.version)
    made["transfer"] = created(
        send(api, {"cardId": f.card_id}, {"accountId": bob.account_id}, 250), api.version
    )
    return made


def test_card_lines_newest_first(api, history):
    f = history["funded"]
    lines = card_lines(api, f.card_id)
    presented_id = history["presented"]["authorizationId"]
    reversed_id = history["reversed"]["authorizationId"]
    pending_id = history["pending"]["authorizationId"]
    return_id = history["return"]["returnId"]
    assert [summary(line) for line in lines] == [
        ("CashDec", "Presentment", "posted", 250, "debit", None, None),
        ("Return", "Presentment", "posted", 300, "credit", None, return_id),
        ("Goods", "Unsettled", "pending", 500, "debit", pending_id, None),
        ("Cash", "Unsettled", "reversed", 2_000, "debit", reversed_id, None),
        ("Goods", "Presentment", "posted", 900, "debit", presented_id, None),
    ]
    assert {line["cardId"] for line in lines} == {f.card_id}
    assert [line["merchant"] for line in lines] == [None, MERCHANT, MERCHANT, ATM, MERCHANT]
    assert lines[0]["transferId"] == history["transfer"]["transferId"]
    assert lines[1]["transactionId"] == history["return"]["transactionId"]
    assert lines[2]["transactionId"] == history["pending"]["transactionId"]
    # The account shows the same lines, and the load before them.
    account_lines = statement(api, f.account_id)
    assert account_lines[:5] == lines
    assert [(line["type"], line["cardId"]) for line in account_lines[5:]] == [("CashInc", None)]
    # The receiving account's line is not the card's.
    [received] = statement(api, history["bob"].account_id)
    assert (received["type"], received["cardId"], received["amount"]) == ("CashInc", None, 250)
    assert card_lines(api, history["bob"].card_id) == []


def test_filters_combine(api, history):
    f = history["funded"]
    today = timezone.now().date().isoformat()
    yesterday = (timezone.now().date() - timedelta(days=1)).isoformat()

    def amounts(path, **params):
        return [line["amount"] for line in items_of(api, path, limit=100, **params)]

    card_path = f"/cards/{f.card_id}/transactions"
    account_path = f"/accounts/{f.account_id}/transactions"
    for path in (card_path, account_path):
        assert amounts(path, type="Goods") == [500, 900]
        assert amounts(path, type="Cash") == [2_000]
        assert amounts(path, type="Return") == [300]
        assert amounts(path, settlementStatus="Unsettled") == [500, 2_000]
        assert amounts(path, type="Goods", settlementStatus="Presentment") == [900]
        assert amounts(path, type="Goods", settlementStatus="Unsettled") == [500]
        assert amounts(path, fromDate=history["middle"]) == [250, 300, 500]
        assert amounts(path, toDate=history["middle"], type="Goods") == [900]
        assert amounts(
            path, fromDate=history["middle"], type="Goods", settlementStatus="Unsettled"
        ) == [500]
        assert amounts(path, fromDate=history["middle"], settlementStatus="Presentment") == [
            250,
            300,
        ]
        assert amounts(path, fromDate=today, toDate=today, type="Cash") == [2_000]
        assert amounts(path, toDate=yesterday) == []
    assert amounts(account_path, type="CashInc") == [START]
    assert amounts(card_path, type="CashInc") == []


def test_cursor_pages_through_card_lines(api, history):
    f = history["funded"]
    everything = card_lines(api, f.card_id)
    seen, cursor, pages = [], None, 0
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        items, cursor = listed(api.get(f"/cards/{f.card_id}/transactions", params))
        seen += items
        pages += 1
        if cursor is None:
            break
    assert pages == 3
    assert seen == everything
    # A cursor combines with a filter.
    items, cursor = listed(
        api.get(f"/cards/{f.card_id}/transactions", {"limit": 1, "type": "Goods"})
    )
    assert [line["amount"] for line in items] == [500]
    items, cursor = listed(
        api.get(f"/cards/{f.card_id}/transactions", {"limit": 1, "type": "Goods", "cursor": cursor})
    )
    assert ([line["amount"] for line in items], cursor) == ([900], None)


def test_another_institutions_card_is_404(api, other_api, history):
    f = history["funded"]
    for path in (f"/cards/{f.card_id}/transactions", f"/accounts/{f.account_id}/transactions"):
        response = other_api.get(path)
        assert_error(response, api.version, 404, "not_found")
    assert items_of(other_api, "/card-authorizations", cardId=f.card_id) == []
    assert_error(
        api.get("/cards/card_" + "0" * 26 + "/transactions"), api.version, 404, "not_found"
    )


def test_authorizations_list_by_card_and_status(api, history):
    f = history["funded"]

    def listed_ids(**params):
        return [a["authorizationId"] for a in items_of(api, "/card-authorizations", **params)]

    all_ids = [
        history[name]["authorizationId"]
        for name in ("pending", "declined", "reversed", "presented")
    ]
    assert listed_ids(cardId=f.card_id) == all_ids
    for status in ("pending", "declined", "reversed", "presented"):
        assert listed_ids(cardId=f.card_id, status=status) == [history[status]["authorizationId"]]
    assert listed_ids(status="expired") == []
    assert listed_ids(cardId=history["bob"].card_id) == []
