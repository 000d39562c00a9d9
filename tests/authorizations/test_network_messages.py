"""Messages the network does not ask (v2; docs/card-transactions.md, "Messages the network does
not ask: advices and force posts"): `POST /card-authorizations` with `kind: advice` (approved
in stand-in by the network) or `kind: force_post` (a presentment with no live authorization).

Neither is declined nor checked: an advice is held and `pending`, `decidedBy: network`, on a
blocked card, a frozen account, over the card's limits or at an ATM without a PIN; what it takes
the account below zero available is its `overdrawnBy` and the account's `networkOverdraft`,
during which every debit that needs funds is refused, until money coming in pays it back. It is
then presented, reversed and expired like any pending authorization. A force post is held and
presented at once (`transaction.settled`, its ATM and foreign fees). Refused with nothing
written: a closed account, another currency; `pin` or `partialApproval` with a kind is 400, and
v1 has no `kind`. Their events carry `kind` and `overdrawnBy`; monitoring rules raise alerts and
decline nothing."""

import pytest

from accounts.models import StatementLine
from accounts.verification import ledger_breaches
from authorizations.models import Authorization
from tests.accounts.api.helpers import assert_validation_error, load, transfer
from tests.accounts.api.helpers import set_status as set_account_status
from tests.accounts.api.test_fees import fees_of, set_card_fees
from tests.cards.api.helpers import set_limits, set_status

from .helpers import (
    ATM,
    MERCHANT,
    START,
    approved,
    assert_error,
    authorization_of,
    balances,
    card_lines,
    created,
    declined,
    event_data,
    expire_holds,
    funded,
    hold_of,
    holds_of,
    items_of,
    money,
    past_due,
    presented,
    resource,
    reverse,
    settings,
    usage,
)

pytestmark = pytest.mark.django_db

ABROAD = {**MERCHANT, "name": "Boutique", "countryCode": "250"}  # the cardholder's is 276


def message(api, card_id: str, amount: int, kind: str, *, merchant=MERCHANT, **fields):
    body = {
        "cardId": card_id,
        "amount": amount,
        "currency": "EUR",
        "type": "Goods",
        "merchant": merchant,
        "kind": kind,
    }
    return api.post("/card-authorizations", {**body, **fields})


def advice(api, card_id: str, amount: int, **fields) -> dict:
    body = created(message(api, card_id, amount, "advice", **fields), "v2")
    assert (body["approved"], body["status"], body["decidedBy"], body["kind"]) == (
        True,
        "pending",
        "network",
        "advice",
    ), body
    return body


def force_post(api, card_id: str, amount: int, **fields) -> dict:
    body = created(message(api, card_id, amount, "force_post", **fields), "v2")
    assert (body["approved"], body["status"], body["decidedBy"], body["kind"]) == (
        True,
        "presented",
        "network",
        "force_post",
    ), body
    return body


def network_overdraft(api, account_id: str) -> int:
    return resource(api.get(f"/accounts/{account_id}"), "v2")["networkOverdraft"]


# --- advice ------------------------------------------------------------------------------------
def test_a_covered_advice_is_approved_by_the_network_and_held(api_v2):
    f = funded(api_v2)

    body = advice(api_v2, f.card_id, 1_000)

    assert body == {
        "authorizationId": body["authorizationId"],
        "cardId": f.card_id,
        "accountId": f.account_id,
        "type": "Goods",
        "amount": 1_000,
        "currency": "EUR",
        "merchant": MERCHANT,
        "approved": True,
        "status": "pending",
        "declineCode": None,
        "declineReason": None,
        "declineDetails": None,
        "holdId": body["holdId"],
        "transactionId": body["transactionId"],
        "presentedAmount": None,
        "presentedAt": None,
        "metadata": {},
        "merchantAmount": None,
        "merchantCurrency": None,
        "conversionRate": None,
        "decidedBy": "network",
        "decidedAt": body["createdAt"],
        "kind": "advice",
        "overdrawnBy": 0,
        "requestedAmount": 1_000,
        "partialApproval": False,
        "program": None,
        "programFunding": None,
        "createdAt": body["createdAt"],
        "updatedAt": body["updatedAt"],
    }
    hold = hold_of(api_v2, body["holdId"])
    assert (hold["status"], hold["amount"]) == ("active", 1_000)
    assert balances(api_v2, f.account_id) == money(START, 1_000)
    assert network_overdraft(api_v2, f.account_id) == 0
    [line] = card_lines(api_v2, f.card_id)
    assert (
        line["transactionId"],
        line["settlementStatus"],
        line["status"],
        line["amount"],
        line["holdId"],
    ) == (body["transactionId"], "Unsettled", "pending", 1_000, body["holdId"])
    assert usage(api_v2, f.card_id) == (1_000, 0, 1_000)
    assert event_data(api_v2, "authorization.approved", body["authorizationId"]) == [
        {
            "cardId": f.card_id,
            "accountId": f.account_id,
            "type": "Goods",
            "amount": 1_000,
            "currency": "EUR",
            "merchant": MERCHANT,
            "decidedBy": "network",
            "kind": "advice",
        }
    ]
    assert ledger_breaches() == []


def test_an_advice_beyond_the_funds_overdraws_until_money_in_pays_it_back(api_v2):
    f = funded(api_v2)
    bob = funded(api_v2, load=0, first="Bob")
    amount = START + 2_500

    body = advice(api_v2, f.card_id, amount)

    assert body["overdrawnBy"] == 2_500
    assert balances(api_v2, f.account_id) == money(START, amount)  # available -2,500
    assert network_overdraft(api_v2, f.account_id) == 2_500
    [event] = event_data(api_v2, "authorization.approved", body["authorizationId"])
    assert (event["kind"], event["overdrawnBy"], event["decidedBy"], event["amount"]) == (
        "advice",
        2_500,
        "network",
        amount,
    )
    assert usage(api_v2, f.card_id) == (amount, 0, amount)
    assert ledger_breaches() == []

    # Nothing that needs funds passes while it is below zero.
    refused = declined(api_v2, f.card_id, 1, "insufficient_funds")
    assert refused["declineDetails"] == {"available": -2_500, "amount": 1}
    assert_error(
        transfer(api_v2, f.account_id, bob.account_id, 1),
        "v2",
        422,
        "insufficient_funds",
        {"accountId": f.account_id, "available": -2_500, "amount": 1},
    )
    assert balances(api_v2, f.account_id) == money(START, amount)

    # Money in repays it: what is still below zero, then nothing.
    load(api_v2, f.account_id, 1_000)
    assert network_overdraft(api_v2, f.account_id) == 1_500
    assert balances(api_v2, f.account_id) == money(START + 1_000, amount)
    load(api_v2, f.account_id, 2_000)
    assert network_overdraft(api_v2, f.account_id) == 0
    assert balances(api_v2, f.account_id) == money(START + 3_000, amount)  # 500 available
    approved(api_v2, f.card_id, 500)
    assert balances(api_v2, f.account_id) == money(START + 3_000, amount + 500)
    assert ledger_breaches() == []


def _blocked_card(api, f):
    resource(set_status(api, f.card_id, "suspended"), api.version)
    return {}


def _frozen_account(api, f):
    resource(set_account_status(api, f.account_id, "frozen"), api.version)
    return {}


def _over_the_limits(api, f):
    set_limits(api, f.card_id, perTransaction=100, daily=100, dailyCash=0)
    return {}


def _pinless_atm(api, f):
    settings(api, f.card_id, atm=False)
    return {"type": "Cash", "merchant": ATM}


@pytest.mark.parametrize(
    "breaks",
    [_blocked_card, _frozen_account, _over_the_limits, _pinless_atm],
    ids=lambda case: case.__name__.strip("_"),
)
def test_an_advice_is_approved_whatever_the_card_and_account_say(api_v2, breaks):
    f = funded(api_v2)
    fields = breaks(api_v2, f)
    cash = fields.get("type") == "Cash"

    body = advice(api_v2, f.card_id, 1_000, **fields)

    assert (body["overdrawnBy"], body["amount"]) == (0, 1_000)
    assert hold_of(api_v2, body["holdId"])["status"] == "active"
    assert balances(api_v2, f.account_id) == money(START, 1_000)
    assert usage(api_v2, f.card_id) == (1_000, 1_000 if cash else 0, 1_000)
    assert ledger_breaches() == []


def test_an_advice_on_a_closed_account_is_refused_and_writes_nothing(api_v2):
    f = funded(api_v2, load=0)
    resource(set_account_status(api_v2, f.account_id, "closed"), "v2")

    assert_error(
        message(api_v2, f.card_id, 1_000, "advice"),
        "v2",
        422,
        "account_not_active",
        {"accountId": f.account_id, "status": "closed"},
    )

    assert balances(api_v2, f.account_id) == money(0)
    assert network_overdraft(api_v2, f.account_id) == 0
    assert items_of(api_v2, "/card-authorizations", cardId=f.card_id) == []
    assert holds_of(api_v2, f.account_id) == []
    assert card_lines(api_v2, f.card_id) == []
    assert usage(api_v2, f.card_id) == (0, 0, 0)
    assert Authorization.objects.filter(card_id=f.card_id).count() == 0


def test_an_advice_in_another_currency_is_refused_and_writes_nothing(api_v2):
    f = funded(api_v2)

    assert_error(
        message(api_v2, f.card_id, 1_000, "advice", currency="USD"),
        "v2",
        422,
        "currency_mismatch",
        {"accountId": f.account_id, "accountCurrency": "EUR", "currency": "USD"},
    )

    assert balances(api_v2, f.account_id) == money(START)
    assert items_of(api_v2, "/card-authorizations", cardId=f.card_id) == []
    assert holds_of(api_v2, f.account_id) == []
    assert usage(api_v2, f.card_id) == (0, 0, 0)


@pytest.mark.parametrize("kind", ["advice", "force_post"])
@pytest.mark.parametrize(
    ("fields", "names"),
    [
        ({"pin": "482915"}, ["pin"]),
        ({"partialApproval": True}, ["partialApproval"]),
        ({"pin": "482915", "partialApproval": False}, ["pin", "partialApproval"]),
    ],
    ids=["pin", "partialApproval", "both"],
)
def test_pin_or_partial_approval_with_a_kind_is_400(api_v2, kind, fields, names):
    f = funded(api_v2)
    assert_validation_error(
        message(api_v2, f.card_id, 1_000, kind, **fields),
        "v2",
        {name: f"Not with kind {kind}: the network decided." for name in names},
    )
    assert items_of(api_v2, "/card-authorizations", cardId=f.card_id) == []
    assert balances(api_v2, f.account_id) == money(START)


def test_a_request_kind_takes_a_pin_and_v1_has_no_kind(api_v2, api_v1):
    f = funded(api_v2)
    body = created(message(api_v2, f.card_id, 100, "request", partialApproval=True), "v2")
    assert (body["kind"], body["decidedBy"], body["status"]) == ("request", "tx", "pending")
    g = funded(api_v1)
    assert_validation_error(
        message(api_v1, g.card_id, 100, "advice"), "v1", {"kind": "Unknown field."}
    )
    assert items_of(api_v1, "/card-authorizations", cardId=g.card_id) == []


def test_an_advice_is_presented_like_a_pending_authorization(api_v2):
    f = funded(api_v2)
    body = advice(api_v2, f.card_id, 1_000)

    done = presented(api_v2, body["authorizationId"], 1_200)

    assert (done["presentedAmount"], done["kind"], done["decidedBy"]) == (
        1_200,
        "advice",
        "network",
    )
    assert balances(api_v2, f.account_id) == money(START - 1_200)
    [line] = card_lines(api_v2, f.card_id)
    assert (line["settlementStatus"], line["amount"], line["status"]) == (
        "Presentment",
        1_200,
        "posted",
    )
    assert usage(api_v2, f.card_id) == (1_200, 0, 1_200)
    assert len(event_data(api_v2, "transaction.settled", body["transactionId"])) == 1
    assert ledger_breaches() == []


def test_reversing_an_overdrawing_advice_gives_back_and_clears_the_network_overdraft(api_v2):
    f = funded(api_v2)
    amount = START + 2_500
    body = advice(api_v2, f.card_id, amount)
    assert network_overdraft(api_v2, f.account_id) == 2_500

    reversed_ = created(reverse(api_v2, body["authorizationId"]), "v2")

    assert (reversed_["status"], reversed_["overdrawnBy"]) == ("reversed", 2_500)  # the flag
    assert network_overdraft(api_v2, f.account_id) == 0
    assert balances(api_v2, f.account_id) == money(START)
    assert usage(api_v2, f.card_id) == (0, 0, 0)
    [line] = card_lines(api_v2, f.card_id)
    assert (line["status"], line["amount"]) == ("reversed", amount)
    assert ledger_breaches() == []


def test_an_overdrawing_advice_expires_like_a_pending_authorization(api_v2):
    f = funded(api_v2)
    amount = START + 500
    body = advice(api_v2, f.card_id, amount)
    past_due(body["holdId"])

    assert expire_holds() == (
        "Expired 0 hold(s), 1 card authorization(s) and 0 pending transfer(s)."
    )

    assert authorization_of(api_v2, body["authorizationId"])["status"] == "expired"
    assert network_overdraft(api_v2, f.account_id) == 0
    assert balances(api_v2, f.account_id) == money(START)
    assert usage(api_v2, f.card_id) == (0, 0, 0)
    assert event_data(api_v2, "authorization.expired", body["authorizationId"]) == [
        {"cardId": f.card_id, "accountId": f.account_id, "amount": amount, "currency": "EUR"}
    ]
    assert ledger_breaches() == []


def test_monitoring_rules_raise_alerts_and_decline_no_advice(api_v2):
    f = funded(api_v2)
    rule = {
        "name": "big payments",
        "kind": "amount_threshold",
        "action": "decline",
        "amount": 100,
        "currency": "EUR",
    }
    rule_id = created(api_v2.post("/monitoring-rules", rule), "v2")["ruleId"]

    body = advice(api_v2, f.card_id, 1_000)
    posted = force_post(api_v2, f.card_id, 2_000)

    alerts = items_of(api_v2, "/monitoring-alerts", cardId=f.card_id)
    assert sorted(
        (alert["subjectId"], alert["ruleId"], alert["action"], alert["amount"]) for alert in alerts
    ) == sorted(
        [
            (body["authorizationId"], rule_id, "decline", 1_000),
            (posted["authorizationId"], rule_id, "decline", 2_000),
        ]
    )
    assert balances(api_v2, f.account_id) == money(START - 2_000, 1_000)


# --- force post --------------------------------------------------------------------------------
def test_a_force_post_is_held_and_presented_at_once(api_v2):
    f = funded(api_v2)

    body = force_post(api_v2, f.card_id, 1_000)

    assert (body["amount"], body["presentedAmount"], body["overdrawnBy"]) == (1_000, 1_000, 0)
    assert body["presentedAt"] is not None
    hold = hold_of(api_v2, body["holdId"])
    assert (hold["status"], hold["amount"], hold["capturedAmount"]) == ("captured", 1_000, 1_000)
    assert balances(api_v2, f.account_id) == money(START - 1_000)
    [line] = card_lines(api_v2, f.card_id)
    assert (
        line["transactionId"],
        line["settlementStatus"],
        line["status"],
        line["amount"],
        line["authorizationId"],
    ) == (body["transactionId"], "Presentment", "posted", 1_000, body["authorizationId"])
    stored = StatementLine.objects.select_related("hold").get(pk=body["transactionId"])
    assert stored.journal_id is not None
    assert stored.journal_id == stored.hold.capture_journal_id
    assert usage(api_v2, f.card_id) == (1_000, 0, 1_000)
    assert event_data(api_v2, "transaction.settled", body["transactionId"]) == [
        {
            "authorizationId": body["authorizationId"],
            "cardId": f.card_id,
            "accountId": f.account_id,
            "type": "Goods",
            "amount": 1_000,
            "authorizedAmount": 1_000,
            "currency": "EUR",
        }
    ]
    [event] = event_data(api_v2, "authorization.approved", body["authorizationId"])
    assert (event["kind"], event["decidedBy"], "overdrawnBy" in event) == (
        "force_post",
        "network",
        False,
    )
    # Presented: it takes nothing more.
    assert_error(
        reverse(api_v2, body["authorizationId"]),
        "v2",
        409,
        "invalid_state_transition",
        {"from": "presented", "to": "reversed"},
    )
    assert ledger_breaches() == []


def test_a_force_post_beyond_the_funds_overdraws(api_v2):
    f = funded(api_v2)
    amount = START + 700

    body = force_post(api_v2, f.card_id, amount)

    assert body["overdrawnBy"] == 700
    assert balances(api_v2, f.account_id) == money(-700)
    assert network_overdraft(api_v2, f.account_id) == 700
    [event] = event_data(api_v2, "authorization.approved", body["authorizationId"])
    assert (event["kind"], event["overdrawnBy"]) == ("force_post", 700)
    declined(api_v2, f.card_id, 1, "insufficient_funds")
    load(api_v2, f.account_id, 700)
    assert network_overdraft(api_v2, f.account_id) == 0
    assert balances(api_v2, f.account_id) == money(0)
    assert ledger_breaches() == []


def test_a_force_post_is_charged_the_atm_fee(api_v2):
    set_card_fees(api_v2, atmFee=250)
    f = funded(api_v2)

    body = force_post(api_v2, f.card_id, 2_000, type="Cash", merchant=ATM)

    (fee,) = fees_of(api_v2, f.account_id)
    assert (fee["kind"], fee["amount"], fee["status"], fee["authorizationId"]) == (
        "atm",
        250,
        "charged",
        body["authorizationId"],
    )
    assert balances(api_v2, f.account_id) == money(START - 2_000 - 250)
    assert usage(api_v2, f.card_id) == (2_000, 2_000, 2_000)
    assert ledger_breaches() == []


def test_a_force_post_abroad_is_charged_the_foreign_fee(api_v2):
    set_card_fees(api_v2, foreignTransactionFeeBps=150)
    f = funded(api_v2)

    body = force_post(api_v2, f.card_id, 1_000, merchant=ABROAD)

    (fee,) = fees_of(api_v2, f.account_id)
    assert (fee["kind"], fee["amount"], fee["authorizationId"]) == (
        "foreign_transaction",
        15,
        body["authorizationId"],
    )
    assert balances(api_v2, f.account_id) == money(START - 1_000 - 15)
    assert ledger_breaches() == []


def test_a_force_post_after_its_authorization_expired_leaves_that_one_expired(api_v2):
    f = funded(api_v2)
    stale = approved(api_v2, f.card_id, 1_000)
    past_due(stale["holdId"])
    expire_holds()
    assert_error(
        api_v2.post(f"/card-authorizations/{stale['authorizationId']}/presentments", {}),
        "v2",
        409,
        "invalid_state_transition",
        {"from": "expired", "to": "presented"},
    )

    body = force_post(api_v2, f.card_id, 1_000)

    assert body["authorizationId"] != stale["authorizationId"]
    assert authorization_of(api_v2, stale["authorizationId"])["status"] == "expired"
    assert hold_of(api_v2, stale["holdId"])["status"] == "expired"
    assert balances(api_v2, f.account_id) == money(START - 1_000)
    lines = card_lines(api_v2, f.card_id)
    assert [(line["authorizationId"], line["status"]) for line in lines] == [
        (body["authorizationId"], "posted"),
        (stale["authorizationId"], "expired"),
    ]
    assert usage(api_v2, f.card_id) == (1_000, 0, 1_000)
    assert ledger_breaches() == []
