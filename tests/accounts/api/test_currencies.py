"""Any currency (docs/money.md, "Currencies"): an institution whose own currency is EUR makes a
USD and a JPY product (`POST /products/accounts`, v2) and runs the whole life of an account and
a card in it, in either version: load, transfer, transfer reversal, card authorization,
presentment, authorization reversal. Internal accounts in that currency are made on first use;
EUR ones are never touched; the ledger sums to zero per currency."""

import pytest
from django.core.management import call_command

from accounts.models import Account
from accounts.verification import ledger_breaches
from core.money import money
from tests.authorizations.helpers import (
    approved,
    authorization_of,
    declined,
    presented,
    reverse,
)
from tests.cards.api.helpers import PREPAID, customer, issue

from .helpers import (
    ANY,
    assert_error,
    balances,
    created,
    load,
    statement,
    transfer,
)

# Amounts in minor units: 100.00 USD / 10,000 JPY loaded, and so on.
LOAD, SENT, AUTHORIZED, PRESENTED, REVERSED_AUTH = 10_000, 2_500, 1_000, 900, 400


def make_product(api_v2, currency: str) -> str:
    body = created(
        api_v2.post(
            "/products/accounts",
            {"code": "AccountPrepaidAPI", "name": f"Prepaid {currency}", "currency": currency},
        ),
        "v2",
    )
    assert (body["currency"], body["status"]) == (currency, "active")
    return body["rid"]


def open_in(api, product_rid: str, holder: str) -> dict:
    return created(
        api.post("/accounts", {"customerId": holder, "productRid": product_rid}), api.version
    )


@pytest.mark.parametrize("currency", ["USD", "JPY"])
def test_the_life_of_an_account_and_a_card_in_another_currency(api, api_v2, institution, currency):
    rid = make_product(api_v2, currency)
    holder = customer(api, "Grace")
    account = open_in(api, rid, holder)
    other = open_in(api, rid, customer(api, "Alan"))
    account_id, other_id = account["accountId"], other["accountId"]
    assert (account["currency"], other["currency"]) == (currency, currency)

    # Load and a transfer in the account's currency; any other currency is refused.
    load(api, account_id, LOAD, currency)
    refused = transfer(api, account_id, other_id, SENT, "EUR")
    assert_error(refused, api.version, 422, "currency_mismatch", ANY)
    sent = created(transfer(api, account_id, other_id, SENT, currency), api.version)
    assert (sent["amount"], sent["currency"]) == (SENT, currency)
    assert balances(api, account_id) == {
        "posted": LOAD - SENT,
        "pending": 0,
        "available": LOAD - SENT,
    }

    # Its reversal gives the money back.
    transfer_id = sent["transferId"]
    created(api.post(f"/transfers/{transfer_id}/reversals", {}), api.version)
    assert balances(api, other_id)["posted"] == 0
    assert balances(api, account_id)["posted"] == LOAD

    # A card on the account: authorized, presented for less, another authorized and reversed.
    card_id = issue(api, account_id, holder, PREPAID, status="active")["cardId"]
    declined(api, card_id, AUTHORIZED, "currency_mismatch", currency="EUR")
    first = approved(api, card_id, AUTHORIZED, currency=currency)
    assert balances(api, account_id) == {
        "posted": LOAD,
        "pending": AUTHORIZED,
        "available": LOAD - AUTHORIZED,
    }
    presented(api, first["authorizationId"], PRESENTED)
    second = approved(api, card_id, REVERSED_AUTH, currency=currency)
    assert reverse(api, second["authorizationId"]).status_code in (200, 201)
    assert authorization_of(api, second["authorizationId"])["status"] == "reversed"
    assert balances(api, account_id) == {
        "posted": LOAD - PRESENTED,
        "pending": 0,
        "available": LOAD - PRESENTED,
    }
    lines = statement(api, account_id)
    assert {line["currency"] for line in lines} == {currency}

    # The institution's internal accounts in that currency were made when first needed, the
    # EUR ones never; every currency sums to zero.
    internal = Account.objects.filter(kind="internal", institution=institution)
    codes = set(internal.filter(currency=currency).values_list("internal_code", flat=True))
    assert codes and not internal.filter(currency="EUR").exists()
    assert ledger_breaches() == []
    call_command("verify_ledger")


def test_amounts_are_shown_with_the_currency_exponent():
    assert money(1_050, "USD") == "10.50 USD"
    assert money(1_050, "JPY") == "1,050 JPY"
    assert money(1_050, "BHD") == "1.050 BHD"


def test_an_account_is_only_in_its_product_currency(api_v2):
    rid = make_product(api_v2, "JPY")
    response = api_v2.post(
        "/accounts", {"customerId": customer(api_v2), "productRid": rid, "currency": "USD"}
    )
    error = assert_error(response, "v2", 400, "validation_error", ANY)
    assert set(error["details"]) == {"currency"}
