"""Multiple presentments (issue 31 item 5; docs/card-transactions.md, "Clearing"): a v2
presentment with `final: false` (a split shipment) clears part of an authorization and keeps the
rest held, by a new hold with its own `Unsettled` line; the final one clears what it names and
releases what is left; the card's usage follows what was presented in all; a reversal releases
only what is still held. Balances, holds, lines, usage and events are read through the API
after each step, and `verify_ledger` is clean at the end."""

import pytest

from accounts.verification import ledger_breaches
from tests.accounts.api.helpers import assert_error, assert_validation_error
from tests.accounts.api.test_fees import fees_of, set_card_fees

from .helpers import (
    ATM,
    MERCHANT,
    START,
    approved,
    authorization_of,
    balances,
    card_lines,
    created,
    funded,
    hold_of,
    items_of,
    money,
    reverse,
    usage,
)

pytestmark = pytest.mark.django_db

AUTHORIZED = 1_000


def present(api, authorization_id, amount=None, final=None):
    body = {} if amount is None else {"amount": amount}
    if final is not None:
        body["final"] = final
    return api.post(f"/card-authorizations/{authorization_id}/presentments", body)


def lines(api, card_id) -> list[tuple[str, int]]:
    return sorted((line["settlementStatus"], line["amount"]) for line in card_lines(api, card_id))


def test_a_split_shipment_clears_in_parts_and_the_last_releases_nothing_left(api_v2):
    f = funded(api_v2)
    authorization = approved(api_v2, f.card_id, AUTHORIZED)
    first_hold = authorization["holdId"]

    after_first = created(present(api_v2, authorization["authorizationId"], 300, False), "v2")

    assert (after_first["status"], after_first["presentedAmount"]) == ("pending", 300)
    assert after_first["holdId"] != first_hold
    assert hold_of(api_v2, first_hold)["status"] == "captured"
    assert (hold_of(api_v2, after_first["holdId"])["amount"]) == 700
    assert balances(api_v2, f.account_id) == money(START - 300, 700)
    assert lines(api_v2, f.card_id) == [("Presentment", 300), ("Unsettled", 700)]
    assert usage(api_v2, f.card_id)[0] == AUTHORIZED
    [settled] = [e["data"] for e in items_of(api_v2, "/events", type="transaction.settled")]
    assert (settled["amount"], settled["final"], settled["stillHeld"]) == (300, False, 700)

    created(present(api_v2, authorization["authorizationId"], 200, False), "v2")
    last = created(present(api_v2, authorization["authorizationId"]), "v2")  # final: the rest

    assert (last["status"], last["presentedAmount"]) == ("presented", AUTHORIZED)
    assert balances(api_v2, f.account_id) == money(START - AUTHORIZED)
    assert lines(api_v2, f.card_id) == [
        ("Presentment", 200),
        ("Presentment", 300),
        ("Presentment", 500),
    ]
    assert usage(api_v2, f.card_id)[0] == AUTHORIZED
    assert ledger_breaches() == []


def test_a_final_presentment_for_less_releases_the_rest_and_gives_it_back(api_v2):
    f = funded(api_v2)
    authorization = approved(api_v2, f.card_id, AUTHORIZED)
    created(present(api_v2, authorization["authorizationId"], 400, False), "v2")

    last = created(present(api_v2, authorization["authorizationId"], 100), "v2")

    assert (last["status"], last["presentedAmount"]) == ("presented", 500)
    assert balances(api_v2, f.account_id) == money(START - 500)
    assert usage(api_v2, f.card_id)[0] == 500


def test_the_final_one_may_go_20_percent_over_the_authorized_amount_in_all(api_v2):
    f = funded(api_v2)
    authorization = approved(api_v2, f.card_id, AUTHORIZED)
    created(present(api_v2, authorization["authorizationId"], 500, False), "v2")

    assert_error(
        present(api_v2, authorization["authorizationId"], 701),
        "v2",
        422,
        "amount_exceeds_remaining",
        details={"amount": 701, "held": 500, "maximum": 700},
    )
    last = created(present(api_v2, authorization["authorizationId"], 700), "v2")

    assert last["presentedAmount"] == 1_200
    assert balances(api_v2, f.account_id) == money(START - 1_200)
    assert usage(api_v2, f.card_id)[0] == 1_200


def test_a_reversal_after_a_partial_clearing_releases_only_what_is_held(api_v2):
    f = funded(api_v2)
    authorization = approved(api_v2, f.card_id, AUTHORIZED)
    created(present(api_v2, authorization["authorizationId"], 400, False), "v2")

    reversed_ = created(reverse(api_v2, authorization["authorizationId"]), "v2")

    assert (reversed_["status"], reversed_["presentedAmount"]) == ("reversed", 400)
    assert balances(api_v2, f.account_id) == money(START - 400)
    assert usage(api_v2, f.card_id)[0] == 400
    assert ledger_breaches() == []


def test_what_a_presentment_that_is_not_final_must_say(api_v2, api_v1):
    f = funded(api_v2)
    authorization_id = approved(api_v2, f.card_id, AUTHORIZED)["authorizationId"]

    assert_validation_error(
        present(api_v2, authorization_id, final=False),
        "v2",
        {"amount": "A presentment that is not final names its amount."},
    )
    assert_error(
        present(api_v2, authorization_id, AUTHORIZED, False),
        "v2",
        422,
        "amount_exceeds_remaining",
        details={"amount": AUTHORIZED, "held": AUTHORIZED},
        message="A presentment that is not final leaves part of the hold: present the rest as "
        "final.",
    )
    assert_validation_error(
        present(api_v1, authorization_id, 100, False), "v1", {"final": "Unknown field."}
    )
    # Nothing of those moved anything.
    assert authorization_of(api_v2, authorization_id)["status"] == "pending"
    assert balances(api_v2, f.account_id) == money(START, AUTHORIZED)


def test_the_atm_fee_is_charged_once(api_v2):
    set_card_fees(api_v2, atmFee=250)
    f = funded(api_v2)
    authorization = approved(api_v2, f.card_id, AUTHORIZED, type="Cash", merchant=ATM)

    created(present(api_v2, authorization["authorizationId"], 600, False), "v2")
    created(present(api_v2, authorization["authorizationId"]), "v2")

    assert [(fee["kind"], fee["amount"]) for fee in fees_of(api_v2, f.account_id)] == [("atm", 250)]
    assert balances(api_v2, f.account_id) == money(START - AUTHORIZED - 250)


def test_the_foreign_transaction_fee_is_charged_once_at_the_final_one_on_everything(api_v2):
    set_card_fees(api_v2, foreignTransactionFeeBps=200)  # 2%
    f = funded(api_v2)
    abroad = {**MERCHANT, "countryCode": "840"}
    authorization = approved(api_v2, f.card_id, AUTHORIZED, merchant=abroad)

    created(present(api_v2, authorization["authorizationId"], 300, False), "v2")
    assert fees_of(api_v2, f.account_id) == []
    created(present(api_v2, authorization["authorizationId"], 500), "v2")

    assert [(fee["kind"], fee["amount"]) for fee in fees_of(api_v2, f.account_id)] == [
        ("foreign_transaction", 16)  # 2% of 800
    ]
