"""`/transfers` over HTTP, in both versions: transfers by account id or number, the rules that
refuse them, reversals, listing, and idempotent retries."""

import uuid

import pytest

from accounts.models import Account, StatementLine
from events.models import Event
from tests.accounts.api.helpers import (
    ANY,
    CREATED,
    GHS_PREPAID,
    TIMESTAMP,
    adjust,
    assert_error,
    assert_not_found,
    assert_validation_error,
    balances,
    create_customer,
    created,
    events,
    funded_account,
    items_of,
    money,
    open_account,
    prefixed_id,
    resource,
    set_status,
    statement,
    transfer,
    unknown_id,
)
from transfers.models import Transfer, TransferReversal

TRANSFER_ID = prefixed_id("tr")
REVERSAL_ID = prefixed_id("trr")
NO_ACCOUNT = "No account with this id."


@pytest.fixture
def pair(api):
    """(source, destination) accounts of two customers, holding 10 000 and 2 000."""
    return funded_account(api, 10_000), funded_account(api, 2_000)


def snapshot(api, *account_ids) -> dict:
    """What a refused transfer must leave as it was."""
    return {
        "balances": [balances(api, account_id) for account_id in account_ids],
        "statements": [statement(api, account_id) for account_id in account_ids],
        "transfers": Transfer.objects.count(),
        "reversals": TransferReversal.objects.count(),
        "lines": StatementLine.objects.count(),
        "events": Event.objects.filter(type__startswith="transfer.").count(),
    }


def reverse(api, transfer_id, amount=None):
    body = {} if amount is None else {"amount": amount}
    return api.post(f"/transfers/{transfer_id}/reversals", body)


def line_summary(line) -> tuple:
    return (line["type"], line["direction"], line["amount"], line["transferId"])


# --- posting
def test_transfer_by_account_id_moves_the_money(api, pair):
    source, destination = (account["accountId"] for account in pair)

    response = transfer(api, source, destination, 2_550, description="Rent")

    assert response.status_code == CREATED[api.version]
    body = resource(response, api.version, CREATED[api.version])
    assert TRANSFER_ID.match(body["transferId"])
    assert TIMESTAMP.match(body["createdAt"])
    # v2 also answers the client's reference and the batch (docs/transfer-batches.md); v1, the
    # legacy line, has neither.
    v2_only = {"reference": None, "batchId": None, "metadata": {}} if api.version == "v2" else {}
    assert body == {
        "transferId": body["transferId"],
        "source": {"accountId": source, "cardId": None},
        "destination": {"accountId": destination, "cardId": None},
        "amount": 2_550,
        "currency": "EUR",
        "description": "Rent",
        "status": "posted",
        "postedAmount": 2_550,
        "hold": None,
        "reversedAmount": 0,
        "createdAt": body["createdAt"],
        "updatedAt": body["createdAt"],
        **v2_only,
    }
    if api.version == "v1":
        assert "reference" not in body and "batchId" not in body
    assert resource(api.get(f"/transfers/{body['transferId']}"), api.version) == body
    assert balances(api, source) == money(7_450)
    assert balances(api, destination) == money(4_550)

    [out] = statement(api, source, type="CashDec")
    [into, _load] = statement(api, destination)
    for line, account_id, type, direction in (
        (out, source, "CashDec", "debit"),
        (into, destination, "CashInc", "credit"),
    ):
        assert line == {
            "transactionId": line["transactionId"],
            "accountId": account_id,
            "type": type,
            "settlementStatus": "Presentment",
            "direction": direction,
            "amount": 2_550,
            "currency": "EUR",
            "description": "Rent",
            "merchant": None,
            "authorizationId": None,
            "returnId": None,
            "status": "posted",
            "cardId": None,
            "holdId": None,
            "transferId": body["transferId"],
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
    [event] = events(api, "transfer.posted", body["transferId"])
    assert event["objectType"] == "transfer"
    assert event["data"] == {
        "amount": 2_550,
        "currency": "EUR",
        "sourceAccountId": source,
        "destinationAccountId": destination,
    }


@pytest.mark.parametrize("by_number", [("source",), ("destination",), ("source", "destination")])
def test_transfer_by_account_number(api, pair, by_number):
    source, destination = pair
    ends = {"source": source, "destination": destination}
    body = {
        end: (
            {"accountNumber": account["accountNumber"]}
            if end in by_number
            else {"accountId": account["accountId"]}
        )
        for end, account in ends.items()
    }

    response = api.post("/transfers", {**body, "amount": 1_000, "currency": "EUR"})

    posted = created(response, api.version)
    # The response names the accounts by id only: the number stays in the request body.
    assert posted["source"] == {"accountId": source["accountId"], "cardId": None}
    assert posted["destination"] == {"accountId": destination["accountId"], "cardId": None}
    assert source["accountNumber"] not in response.content.decode()
    assert destination["accountNumber"] not in response.content.decode()
    assert balances(api, source["accountId"]) == money(9_000)
    assert balances(api, destination["accountId"]) == money(3_000)


def test_transfer_of_the_whole_available_balance(api, pair):
    source, destination = (account["accountId"] for account in pair)
    created(
        api.post("/holds", {"accountId": source, "amount": 4_000, "currency": "EUR"}), api.version
    )

    created(transfer(api, source, destination, 6_000), api.version)

    assert balances(api, source) == money(4_000, 4_000)
    assert balances(api, destination) == money(8_000)


def test_transfer_in_ghs_between_ghs_accounts(api):
    source = funded_account(api, 900, code=GHS_PREPAID)["accountId"]
    destination = open_account(api, code=GHS_PREPAID)["accountId"]

    body = created(transfer(api, source, destination, 400, "GHS"), api.version)

    assert body["currency"] == "GHS"
    assert balances(api, source) == money(500)
    assert balances(api, destination) == money(400)


def test_frozen_destination_still_receives(api, pair):
    source, destination = (account["accountId"] for account in pair)
    resource(set_status(api, destination, "frozen"), api.version)

    created(transfer(api, source, destination, 100), api.version)

    assert balances(api, destination) == money(2_100)


# --- refusals that change nothing
def test_insufficient_funds(api, pair):
    source, destination = (account["accountId"] for account in pair)
    created(
        api.post("/holds", {"accountId": source, "amount": 500, "currency": "EUR"}), api.version
    )
    before = snapshot(api, source, destination)

    response = transfer(api, source, destination, 9_501)

    assert_error(
        response,
        api.version,
        422,
        "insufficient_funds",
        {"accountId": source, "available": 9_500, "amount": 9_501},
    )
    assert snapshot(api, source, destination) == before


def test_frozen_source_is_not_active(api, pair):
    source, destination = (account["accountId"] for account in pair)
    resource(set_status(api, source, "frozen"), api.version)
    before = snapshot(api, source, destination)

    assert_error(
        transfer(api, source, destination, 100),
        api.version,
        422,
        "account_not_active",
        {"accountId": source, "status": "frozen"},
        message="The account is frozen: money cannot leave it.",
    )
    assert snapshot(api, source, destination) == before


def test_closed_destination_is_not_active(api):
    source = funded_account(api, 1_000)["accountId"]
    destination = open_account(api)["accountId"]
    resource(set_status(api, destination, "closed"), api.version)
    before = snapshot(api, source, destination)

    assert_error(
        transfer(api, source, destination, 100),
        api.version,
        422,
        "account_not_active",
        {"accountId": destination, "status": "closed"},
        message="The account is closed.",
    )
    assert snapshot(api, source, destination) == before


def test_closed_source_is_not_active(api):
    source = open_account(api)["accountId"]
    destination = open_account(api)["accountId"]
    resource(set_status(api, source, "closed"), api.version)

    assert_error(
        transfer(api, source, destination, 100),
        api.version,
        422,
        "account_not_active",
        {"accountId": source, "status": "closed"},
    )


def test_currency_mismatch(api):
    source = funded_account(api, 1_000)["accountId"]
    ghs = funded_account(api, 1_000, code=GHS_PREPAID)["accountId"]
    before = snapshot(api, source, ghs)

    # An EUR transfer into a GHS account, and a GHS transfer out of an EUR account.
    assert_error(
        transfer(api, source, ghs, 100, "EUR"),
        api.version,
        422,
        "currency_mismatch",
        {"accountId": ghs, "accountCurrency": "GHS", "currency": "EUR"},
    )
    assert_error(
        transfer(api, source, ghs, 100, "GHS"),
        api.version,
        422,
        "currency_mismatch",
        {"accountId": source, "accountCurrency": "EUR", "currency": "GHS"},
    )
    assert_error(
        transfer(api, ghs, source, 100, "USD"),
        api.version,
        422,
        "currency_mismatch",
        {"accountId": ghs, "accountCurrency": "GHS", "currency": "USD"},
    )
    assert snapshot(api, source, ghs) == before


def test_same_source_and_destination_is_a_validation_error(api, pair):
    account = pair[0]
    by_id = {"accountId": account["accountId"]}
    by_number = {"accountNumber": account["accountNumber"]}
    before = snapshot(api, account["accountId"])

    for source, destination in ((by_id, by_id), (by_id, by_number), (by_number, by_id)):
        response = api.post(
            "/transfers",
            {"source": source, "destination": destination, "amount": 100, "currency": "EUR"},
        )
        assert_validation_error(
            response, api.version, {"destination": "Must be another account than the source's."}
        )
    assert snapshot(api, account["accountId"]) == before


def test_rejects_invalid_bodies(api, pair):
    source, destination = pair
    valid = {
        "source": {"accountId": source["accountId"]},
        "destination": {"accountId": destination["accountId"]},
        "amount": 100,
        "currency": "EUR",
    }
    exactly_one = "Give exactly one of accountId, accountNumber, cardId or pan."
    cases = [
        (
            {
                "source": {
                    "accountId": source["accountId"],
                    "accountNumber": source["accountNumber"],
                }
            },
            {"source": exactly_one},
        ),
        ({"source": {}}, {"source": exactly_one}),
        ({"destination": {}}, {"destination": exactly_one}),
        ({"cardId": "card_123"}, {"cardId": "Unknown field."}),
        ({"source": {"iban": "DE89370400440532013000"}}, {"source.iban": "Unknown field."}),
        (
            {"source": {"pan": "4111111111111112"}},
            {"source.pan": "Must be 12 to 19 digits with a valid check digit."},
        ),
        (
            {"source": source["accountId"]},
            {"source": "Invalid data. Expected a dictionary, but got str."},
        ),
        ({"destination": None}, {"destination": "This field may not be null."}),
        ({"amount": 0}, {"amount": "Ensure this value is greater than or equal to 1."}),
        ({"amount": "100"}, {"amount": "Must be an integer number of minor units, e.g. 1050."}),
        ({"amount": 99.5}, {"amount": "Must be an integer number of minor units, e.g. 1050."}),
        ({"amount": False}, {"amount": "Must be an integer number of minor units, e.g. 1050."}),
        (
            {"currency": "eur"},
            {"currency": 'Must be an ISO 4217 alpha-3 currency code as a string, e.g. "EUR".'},
        ),
        ({"description": 5}, {"description": "Not a valid string."}),
    ]
    before = snapshot(api, source["accountId"], destination["accountId"])

    for change, details in cases:
        assert_validation_error(api.post("/transfers", {**valid, **change}), api.version, details)
    missing = {
        name: "This field is required." for name in ("source", "destination", "amount", "currency")
    }
    assert_validation_error(api.post("/transfers", {}), api.version, missing)
    assert snapshot(api, source["accountId"], destination["accountId"]) == before


def test_another_institutions_account_is_not_found(api, other_api, pair):
    mine = pair[0]
    theirs = funded_account(other_api, 1_000)
    before = snapshot(api, mine["accountId"])

    cases = [
        ({"accountId": mine["accountId"]}, {"accountId": theirs["accountId"]}, NO_ACCOUNT),
        ({"accountId": theirs["accountId"]}, {"accountId": mine["accountId"]}, NO_ACCOUNT),
        (
            {"accountId": mine["accountId"]},
            {"accountNumber": theirs["accountNumber"]},
            "No account with this account number.",
        ),
        ({"accountId": unknown_id("acc")}, {"accountId": mine["accountId"]}, NO_ACCOUNT),
    ]
    for source, destination, message in cases:
        response = api.post(
            "/transfers",
            {"source": source, "destination": destination, "amount": 100, "currency": "EUR"},
        )
        assert_not_found(response, api.version, message)
    assert snapshot(api, mine["accountId"]) == before
    assert balances(other_api, theirs["accountId"]) == money(1_000)


def test_another_institutions_transfer_is_not_found(api, other_api):
    source = funded_account(other_api, 1_000)["accountId"]
    destination = open_account(other_api)["accountId"]
    theirs = created(transfer(other_api, source, destination, 100), other_api.version)

    for transfer_id in (theirs["transferId"], unknown_id("tr")):
        assert_not_found(
            api.get(f"/transfers/{transfer_id}"), api.version, "No transfer with this id."
        )
        assert_not_found(reverse(api, transfer_id), api.version, "No transfer with this id.")
    assert items_of(api, "/transfers") == []
    assert balances(other_api, destination) == money(100)


# --- reversals
def test_partial_reversals_then_the_rest(api, pair):
    source, destination = (account["accountId"] for account in pair)
    posted = created(transfer(api, source, destination, 1_000), api.version)
    transfer_id = posted["transferId"]

    reversed_so_far = 0
    for amount, status in ((300, "posted"), (200, "posted"), (None, "reversed")):
        response = reverse(api, transfer_id, amount)
        body = resource(response, api.version, CREATED[api.version])
        step = 500 if amount is None else amount
        reversed_so_far += step
        assert REVERSAL_ID.match(body["reversalId"])
        assert TIMESTAMP.match(body["createdAt"])
        assert body == {
            "reversalId": body["reversalId"],
            "transferId": transfer_id,
            "amount": step,
            "currency": "EUR",
            "createdAt": body["createdAt"],
            "transfer": {
                **posted,
                "status": status,
                "reversedAmount": reversed_so_far,
                "updatedAt": body["transfer"]["updatedAt"],
            },
        }
        assert resource(api.get(f"/transfers/{transfer_id}"), api.version) == body["transfer"]
        assert balances(api, source) == money(9_000 + reversed_so_far)
        assert balances(api, destination) == money(3_000 - reversed_so_far)

    assert balances(api, source) == money(10_000)
    assert balances(api, destination) == money(2_000)
    description = f"Reversal of {transfer_id}"
    assert [line_summary(line) for line in statement(api, source)] == [
        ("CashInc", "credit", 500, transfer_id),
        ("CashInc", "credit", 200, transfer_id),
        ("CashInc", "credit", 300, transfer_id),
        ("CashDec", "debit", 1_000, transfer_id),
        ("CashInc", "credit", 10_000, None),
    ]
    assert [line_summary(line) for line in statement(api, destination)] == [
        ("CashDec", "debit", 500, transfer_id),
        ("CashDec", "debit", 200, transfer_id),
        ("CashDec", "debit", 300, transfer_id),
        ("CashInc", "credit", 1_000, transfer_id),
        ("CashInc", "credit", 2_000, None),
    ]
    assert {line["description"] for line in statement(api, source)[:3]} == {description}
    reversals = events(api, "transfer.reversed", transfer_id)
    assert [event["data"] for event in reversals] == [
        {
            "reversalId": reversals[0]["data"]["reversalId"],
            "amount": 500,
            "reversedAmount": 1_000,
            "currency": "EUR",
        },
        {
            "reversalId": reversals[1]["data"]["reversalId"],
            "amount": 200,
            "reversedAmount": 500,
            "currency": "EUR",
        },
        {
            "reversalId": reversals[2]["data"]["reversalId"],
            "amount": 300,
            "reversedAmount": 300,
            "currency": "EUR",
        },
    ]
    assert [event["data"]["reversalId"] for event in reversals] == list(
        TransferReversal.objects.order_by("-id").values_list("pk", flat=True)
    )


def test_reversal_above_what_remains_is_refused(api, pair):
    source, destination = (account["accountId"] for account in pair)
    transfer_id = created(transfer(api, source, destination, 1_000), api.version)["transferId"]
    created(reverse(api, transfer_id, 600), api.version)
    before = snapshot(api, source, destination)

    assert_error(
        reverse(api, transfer_id, 401),
        api.version,
        422,
        "amount_exceeds_remaining",
        {"amount": 401, "remaining": 400},
    )
    assert snapshot(api, source, destination) == before


def test_reversal_after_full_reversal_is_an_invalid_state_transition(api, pair):
    source, destination = (account["accountId"] for account in pair)
    transfer_id = created(transfer(api, source, destination, 1_000), api.version)["transferId"]
    created(reverse(api, transfer_id), api.version)
    before = snapshot(api, source, destination)

    for amount in (None, 1):
        assert_error(
            reverse(api, transfer_id, amount),
            api.version,
            409,
            "invalid_state_transition",
            {"from": "reversed", "to": "reversed"},
            message="This transfer is already fully reversed.",
        )
    assert snapshot(api, source, destination) == before


def test_reversal_when_the_destination_spent_the_money(api, pair):
    source, destination = (account["accountId"] for account in pair)
    transfer_id = created(transfer(api, source, destination, 1_000), api.version)["transferId"]
    created(adjust(api, destination, "debit", 2_500), api.version)
    before = snapshot(api, source, destination)

    assert_error(
        reverse(api, transfer_id),
        api.version,
        422,
        "insufficient_funds",
        {"accountId": destination, "available": 500, "amount": 1_000},
    )
    assert snapshot(api, source, destination) == before
    # What is left can still be sent back.
    created(reverse(api, transfer_id, 500), api.version)
    assert balances(api, destination) == money(0)
    assert balances(api, source) == money(9_500)


def test_reversal_from_a_frozen_destination_is_refused(api, pair):
    source, destination = (account["accountId"] for account in pair)
    transfer_id = created(transfer(api, source, destination, 1_000), api.version)["transferId"]
    resource(set_status(api, destination, "frozen"), api.version)

    assert_error(
        reverse(api, transfer_id),
        api.version,
        422,
        "account_not_active",
        {"accountId": destination, "status": "frozen"},
    )
    assert balances(api, destination) == money(3_000)


def test_reversal_into_a_closed_source_is_refused(api):
    source = funded_account(api, 1_000)["accountId"]
    destination = open_account(api)["accountId"]
    transfer_id = created(transfer(api, source, destination, 1_000), api.version)["transferId"]
    resource(set_status(api, source, "closed"), api.version)
    before = snapshot(api, source, destination)

    assert_error(
        reverse(api, transfer_id),
        api.version,
        422,
        "account_not_active",
        {"accountId": source, "status": "closed"},
        message="The account is closed.",
    )
    assert snapshot(api, source, destination) == before


def test_reversal_rejects_invalid_amounts(api, pair):
    source, destination = (account["accountId"] for account in pair)
    transfer_id = created(transfer(api, source, destination, 1_000), api.version)["transferId"]
    cases = [
        ({"amount": 0}, {"amount": "Ensure this value is greater than or equal to 1."}),
        ({"amount": "5"}, {"amount": "Must be an integer number of minor units, e.g. 1050."}),
        ({"amount": 5, "reason": "x"}, {"reason": "Unknown field."}),
    ]

    for body, details in cases:
        response = api.post(f"/transfers/{transfer_id}/reversals", body)
        assert_validation_error(response, api.version, details)
    assert TransferReversal.objects.count() == 0


# --- listing
def test_list_newest_first_with_account_filter(api):
    a, b, c = (funded_account(api, 5_000)["accountId"] for _ in range(3))
    ab = created(transfer(api, a, b, 100), api.version)
    bc = created(transfer(api, b, c, 200), api.version)
    ca = created(transfer(api, c, a, 300), api.version)
    created(reverse(api, bc["transferId"]), api.version)
    bc = resource(api.get(f"/transfers/{bc['transferId']}"), api.version)

    assert items_of(api, "/transfers") == [ca, bc, ab]
    assert items_of(api, "/transfers", accountId=a) == [ca, ab]
    assert items_of(api, "/transfers", accountId=b) == [bc, ab]
    assert items_of(api, "/transfers", accountId=c) == [ca, bc]
    assert items_of(api, "/transfers", accountId=unknown_id("acc")) == []

    response = api.get("/transfers", {"limit": 2})
    payload = response.json()
    assert payload["data"] == [ca, bc]
    rest = api.get("/transfers", {"limit": 2, "cursor": payload["nextCursor"]}).json()
    assert (rest["data"], rest["nextCursor"], rest["hasMore"]) == ([ab], None, False)


# --- idempotency
def test_retry_with_the_same_key_replays_and_moves_the_money_once(api, pair):
    source, destination = (account["accountId"] for account in pair)
    key = uuid.uuid4()
    body = {
        "source": {"accountId": source},
        "destination": {"accountId": destination},
        "amount": 1_234,
        "currency": "EUR",
    }

    first = api.post("/transfers", body, idempotency_key=key)
    second = api.post("/transfers", body, idempotency_key=key)

    assert first.status_code == second.status_code == CREATED[api.version]
    assert second.content == first.content
    assert second["Idempotent-Replayed"] == "true"
    assert not first.has_header("Idempotent-Replayed")
    assert Transfer.objects.count() == 1
    assert balances(api, source) == money(10_000 - 1_234)
    assert balances(api, destination) == money(2_000 + 1_234)
    assert len(events(api, "transfer.posted")) == 1

    other = api.post("/transfers", {**body, "amount": 1}, idempotency_key=key)
    assert_error(other, api.version, 422, "idempotency_key_reused")
    assert Transfer.objects.count() == 1


def test_a_refused_transfer_is_replayed_too(api, pair):
    source, destination = (account["accountId"] for account in pair)
    key = uuid.uuid4()
    body = {
        "source": {"accountId": source},
        "destination": {"accountId": destination},
        "amount": 50_000,
        "currency": "EUR",
    }

    first = api.post("/transfers", body, idempotency_key=key)
    # Enough money now, but the key answers what it answered.
    created(adjust(api, source, "credit", 50_000), api.version)
    second = api.post("/transfers", body, idempotency_key=key)

    assert_error(first, api.version, 422, "insufficient_funds", ANY)
    assert (second.status_code, second.content) == (422, first.content)
    assert second["Idempotent-Replayed"] == "true"
    assert Transfer.objects.count() == 0


def test_v2_requires_an_idempotency_key_v1_does_not(api_v1, api_v2):
    source = funded_account(api_v2, 1_000)["accountId"]
    destination = open_account(api_v2, create_customer(api_v2))["accountId"]
    body = {
        "source": {"accountId": source},
        "destination": {"accountId": destination},
        "amount": 100,
        "currency": "EUR",
    }

    assert_error(
        api_v2.post("/transfers", body, idempotency_key=None),
        "v2",
        400,
        "idempotency_key_missing",
    )
    assert created(api_v1.post("/transfers", body, idempotency_key=None), "v1")["amount"] == 100
    assert balances(api_v2, destination) == money(100)
    assert Account.objects.get(pk=source).posted == 900
