"""Incremental authorizations (v2; docs/card-transactions.md, "Incremental authorizations"):
`POST /card-authorizations/{id}/increments` raises a pending authorization by `amount`, checked
like a new authorization of that amount at the same merchant.

Approved: the authorization's `amount` (and `requestedAmount` only when it was set) grows, its
hold is replaced by one of the new total with the old one's expiry (the old one released), its
one `Unsettled` line follows the new hold and total, the increment counts once against the
card's limits, `authorization.incremented`; the 201 body is the increment with the
authorization as it now stands. Declined, for each reason an increment can hit (the card, its
settings changed since, perTransaction on the new total, daily on the increment, a monitoring
rule, the account's status and funds): the authorization, its hold, line and usage unchanged,
`authorization.increment_declined`. Then what follows an incremented authorization gives back
or clears exactly the total (presentment, reversal, expiry); a foreign-currency line drops its
merchant amount; the listing; the 409s, the 400s, v1's missing route, the scope, an idempotent
retry; and increments racing a transfer never spend more than the account has."""

import time
import uuid
from datetime import datetime, timedelta

import pytest
from django.db import connection

from accounts.verification import ledger_breaches
from authorizations.models import Authorization, AuthorizationIncrement
from authorizations.services import authorization_increment
from cards.models import Card
from core import operations
from core.actors import SYSTEM
from institutions import scopes
from tests.accounts.api.helpers import (
    assert_validation_error,
    load,
    transfer,
)
from tests.accounts.api.helpers import set_status as set_account_status
from tests.cards.api.helpers import backdate, set_limits, set_status
from tests.conftest import Api
from tests.decisioning.helpers import InThread
from tests.factories import DEFAULT_TEST_SCOPES, issue_key
from tests.transfers.test_concurrency_http import run_threads

from .helpers import (
    MERCHANT,
    START,
    approved,
    assert_error,
    authorization_of,
    awaiting_program,
    balances,
    card_lines,
    created,
    declined,
    event_data,
    expire_holds,
    funded,
    hold_of,
    increment,
    incremented,
    increments_of,
    items_of,
    line_of,
    money,
    past_due,
    present,
    presented,
    resource,
    reverse,
    settings,
    usage,
)

pytestmark = pytest.mark.django_db

ABROAD = {**MERCHANT, "name": "Boutique", "countryCode": "250"}  # the cardholder's is 276
ECOMMERCE = {**MERCHANT, "channel": "ecommerce"}


def request(api, card_id: str, amount: int, merchant=MERCHANT, **fields):
    """POST /card-authorizations with v2's body fields (`partialApproval`, `merchantAmount`...)."""
    body = {"cardId": card_id, "amount": amount, "currency": "EUR", "type": "Goods"}
    return api.post("/card-authorizations", {**body, "merchant": merchant, **fields})


def decline_rule(api, amount: int) -> str:
    body = {
        "name": "big payments",
        "kind": "amount_threshold",
        "action": "decline",
        "amount": amount,
        "currency": "EUR",
    }
    return created(api.post("/monitoring-rules", body), api.version)["ruleId"]


# --- approved --------------------------------------------------------------------------------
def instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_an_approved_increment_replaces_the_hold_and_follows_the_line_and_usage(api_v2):
    f = funded(api_v2)
    auth = approved(api_v2, f.card_id, 1_000)
    authorization_id = auth["authorizationId"]
    old_hold = hold_of(api_v2, auth["holdId"])

    body = created(increment(api_v2, authorization_id, 500), "v2")

    new_hold_id = body["holdId"]
    assert new_hold_id != auth["holdId"]
    assert body["incrementId"].startswith("ainc_")
    standing = body["authorization"]
    assert body == {
        "incrementId": body["incrementId"],
        "authorizationId": authorization_id,
        "amount": 500,
        "approved": True,
        "decision": "approved",
        "decidedBy": "tx",
        "decidedAt": body["createdAt"],
        "program": None,
        "declineCode": None,
        "declineReason": None,
        "declineDetails": None,
        "holdId": new_hold_id,
        "createdAt": body["createdAt"],
        "authorization": {
            **auth,
            "amount": 1_500,
            "requestedAmount": 1_500,
            "holdId": new_hold_id,
            "updatedAt": standing["updatedAt"],
        },
    }
    assert standing["updatedAt"] > auth["updatedAt"]
    assert authorization_of(api_v2, authorization_id) == standing
    # requestedAmount follows the amount: the authorization was not approved in part.
    assert Authorization.objects.get(pk=authorization_id).requested_amount is None

    new_hold = hold_of(api_v2, new_hold_id)
    assert (new_hold["status"], new_hold["amount"]) == ("active", 1_500)
    # The schemes count an authorization's validity from its latest approved increment: held
    # AUTHORIZATION_HOLD_DAYS from the increment, later than the authorization's own expiry.
    assert new_hold["expiresAt"] > old_hold["expiresAt"]
    held_for = instant(new_hold["expiresAt"]) - instant(body["createdAt"])
    assert timedelta(days=7) <= held_for < timedelta(days=7, seconds=5)
    released = hold_of(api_v2, auth["holdId"])
    assert (released["status"], released["amount"], released["capturedAmount"]) == (
        "released",
        1_000,
        0,
    )
    assert balances(api_v2, f.account_id) == money(START, 1_500)
    [line] = card_lines(api_v2, f.card_id)
    assert line == {
        **line_of(api_v2, auth["transactionId"]),
        "transactionId": auth["transactionId"],
        "settlementStatus": "Unsettled",
        "status": "pending",
        "amount": 1_500,
        "holdId": new_hold_id,
    }
    assert usage(api_v2, f.card_id) == (1_500, 0, 1_500)

    assert event_data(api_v2, "authorization.incremented", authorization_id) == [
        {
            "cardId": f.card_id,
            "accountId": f.account_id,
            "type": "Goods",
            "amount": 1_500,
            "currency": "EUR",
            "merchant": MERCHANT,
            "incrementId": body["incrementId"],
            "incrementAmount": 500,
        }
    ]
    assert len(event_data(api_v2, "authorization.approved", authorization_id)) == 1
    assert len(event_data(api_v2, "hold.released", auth["holdId"])) == 1
    assert len(event_data(api_v2, "hold.created", new_hold_id)) == 1

    # A second one: the same again, on the new hold.
    second = incremented(api_v2, authorization_id, 250)
    assert second["authorization"]["amount"] == 1_750
    assert hold_of(api_v2, new_hold_id)["status"] == "released"
    assert hold_of(api_v2, second["holdId"])["expiresAt"] > new_hold["expiresAt"]  # pushed again
    assert balances(api_v2, f.account_id) == money(START, 1_750)
    assert usage(api_v2, f.card_id) == (1_750, 0, 1_750)
    [line] = card_lines(api_v2, f.card_id)
    assert (line["amount"], line["holdId"]) == (1_750, second["holdId"])


def test_requested_amount_follows_only_when_the_authorization_was_approved_in_part(api_v2):
    f = funded(api_v2)
    asked = START + 2_500
    auth = created(request(api_v2, f.card_id, asked, partialApproval=True), "v2")
    assert (auth["amount"], auth["requestedAmount"]) == (START, asked)
    load(api_v2, f.account_id, 1_000)

    body = incremented(api_v2, auth["authorizationId"], 600)

    standing = body["authorization"]
    assert (standing["amount"], standing["requestedAmount"]) == (START + 600, asked + 600)
    stored = Authorization.objects.get(pk=auth["authorizationId"])
    assert (stored.amount, stored.requested_amount) == (START + 600, asked + 600)
    assert balances(api_v2, f.account_id) == money(START + 1_000, START + 600)
    [event] = event_data(api_v2, "authorization.incremented", auth["authorizationId"])
    assert (event["amount"], event["requestedAmount"], event["incrementAmount"]) == (
        START + 600,
        asked + 600,
        600,
    )


# --- declined --------------------------------------------------------------------------------
# Each case: (the authorization's merchant, how to break the one condition, the increment's
# amount, declineReason, declineDetails). The authorization is 1,000 on a funded card.
def _card_not_active(api, f):
    resource(set_status(api, f.card_id, "suspended"), api.version)
    return "The card is suspended.", {"status": "suspended"}


def _card_expired(api, f):
    backdate(f.card_id)
    card = Card.objects.get(pk=f.card_id)
    return "The card is past its expiry date.", {
        "expiryMonth": card.expiry_month,
        "expiryYear": card.expiry_year,
    }


def _channel_not_allowed(api, f):
    settings(api, f.card_id, ecommerce=False)
    return "The card does not allow ecommerce payments.", {"channel": "ecommerce"}


def _international_not_allowed(api, f):
    settings(api, f.card_id, international=False)
    return "The card does not allow payments abroad.", {
        "merchantCountry": "250",
        "cardholderCountry": "276",
    }


def _mcc_blocked(api, f):
    settings(api, f.card_id, blockedMccs=["5411"])
    return "The card blocks this merchant category.", {"mcc": "5411"}


def _country_blocked(api, f):
    settings(api, f.card_id, blockedCountries=["276"])
    return "The card blocks this merchant country.", {"countryCode": "276"}


def _per_transaction(api, f):
    # 1,400 per transaction: the increment alone (500) fits, the new total (1,500) does not.
    set_limits(api, f.card_id, perTransaction=1_400)
    return "The card's perTransaction limit does not allow this amount.", {
        "limit": "perTransaction",
        "value": 1_400,
        "used": 1_000,
        "amount": 500,
        "remaining": 400,
    }


def _monitoring(api, f):
    # A rule made after the authorization: it screens the increment (500), not the total.
    rule_id = decline_rule(api, 499)
    return "A transaction monitoring rule declined this payment.", {"ruleIds": [rule_id]}


def _account_frozen(api, f):
    resource(set_account_status(api, f.account_id, "frozen"), api.version)
    return "The card's account is frozen.", {"status": "frozen"}


def _insufficient_funds(api, f):
    # START - 1,000 available: one more than that is declined.
    return "The account's available balance does not cover this amount.", {
        "available": START - 1_000,
        "amount": START - 1_000 + 1,
    }


DECLINES = {
    "card_not_active": (MERCHANT, _card_not_active, 500),
    "card_expired": (MERCHANT, _card_expired, 500),
    "channel_not_allowed": (ECOMMERCE, _channel_not_allowed, 500),
    "international_not_allowed": (ABROAD, _international_not_allowed, 500),
    "mcc_blocked": (MERCHANT, _mcc_blocked, 500),
    "country_blocked": (MERCHANT, _country_blocked, 500),
    "limit_exceeded": (MERCHANT, _per_transaction, 500),
    "declined_by_monitoring": (MERCHANT, _monitoring, 500),
    "account_not_active": (MERCHANT, _account_frozen, 500),
    "insufficient_funds": (MERCHANT, _insufficient_funds, START - 1_000 + 1),
}


def assert_unchanged(api, f, auth: dict, amount: int = 1_000, used: tuple | None = None):
    """The authorization, its hold, its line and the card's usage as approved."""
    assert authorization_of(api, auth["authorizationId"]) == auth
    hold = hold_of(api, auth["holdId"])
    assert (hold["status"], hold["amount"]) == ("active", amount)
    assert balances(api, f.account_id) == money(START, amount)
    [line] = card_lines(api, f.card_id)
    assert (line["transactionId"], line["amount"], line["holdId"], line["status"]) == (
        auth["transactionId"],
        amount,
        auth["holdId"],
        "pending",
    )
    assert usage(api, f.card_id) == (used or (amount, 0, amount))


@pytest.mark.parametrize("code", list(DECLINES))
def test_a_declined_increment_changes_nothing_but_its_record(api_v2, code):
    merchant, breaks, amount = DECLINES[code]
    f = funded(api_v2)
    auth = approved(api_v2, f.card_id, 1_000, merchant=merchant)
    reason, details = breaks(api_v2, f)

    body = created(increment(api_v2, auth["authorizationId"], amount), "v2")

    assert body == {
        "incrementId": body["incrementId"],
        "authorizationId": auth["authorizationId"],
        "amount": amount,
        "approved": False,
        "decision": "declined",
        "decidedBy": "tx",
        "decidedAt": body["createdAt"],
        "program": None,
        "declineCode": code,
        "declineReason": reason,
        "declineDetails": details,
        "holdId": None,
        "createdAt": body["createdAt"],
        "authorization": auth,
    }
    assert_unchanged(api_v2, f, auth)
    assert event_data(api_v2, "authorization.incremented", auth["authorizationId"]) == []
    assert event_data(api_v2, "authorization.increment_declined", auth["authorizationId"]) == [
        {
            "cardId": f.card_id,
            "accountId": f.account_id,
            "type": "Goods",
            "amount": 1_000,
            "currency": "EUR",
            "merchant": merchant,
            "incrementId": body["incrementId"],
            "incrementAmount": amount,
            "incrementDeclineCode": code,
        }
    ]
    items, _ = increments_of(api_v2, auth["authorizationId"])
    assert items == [{key: value for key, value in body.items() if key != "authorization"}]
    if code == "declined_by_monitoring":  # the hit raised its alert, about the increment
        [alert] = items_of(api_v2, "/monitoring-alerts", cardId=f.card_id)
        assert (alert["action"], alert["subjectType"], alert["subjectId"], alert["amount"]) == (
            "decline",
            "authorization",
            auth["authorizationId"],
            amount,
        )


def test_the_daily_limit_judges_the_increment_on_top_of_the_day(api_v2):
    f = funded(api_v2)
    earlier = approved(api_v2, f.card_id, 1_000)
    auth = approved(api_v2, f.card_id, 1_000)
    # 2,000 per transaction: the new total (1,500) fits; the day has spent 2,000 of 2,400.
    set_limits(api_v2, f.card_id, perTransaction=2_000, daily=2_400, dailyCash=0)

    body = created(increment(api_v2, auth["authorizationId"], 500), "v2")

    assert (body["approved"], body["declineCode"], body["declineDetails"]) == (
        False,
        "limit_exceeded",
        {"limit": "daily", "value": 2_400, "used": 2_000, "amount": 500, "remaining": 400},
    )
    assert authorization_of(api_v2, auth["authorizationId"]) == auth
    assert balances(api_v2, f.account_id) == money(START, 2_000)
    assert usage(api_v2, f.card_id) == (2_000, 0, 2_000)
    # Exactly up to the limit passes, and counts once.
    ok = incremented(api_v2, auth["authorizationId"], 400)
    assert ok["authorization"]["amount"] == 1_400
    assert usage(api_v2, f.card_id) == (2_400, 0, 2_400)
    assert authorization_of(api_v2, earlier["authorizationId"]) == earlier


def test_a_monitoring_rule_screens_the_increment_not_the_total(api_v2):
    f = funded(api_v2)
    auth = approved(api_v2, f.card_id, 1_000)
    decline_rule(api_v2, 600)  # the total 1,500 is above it; the increment 500 is not

    body = incremented(api_v2, auth["authorizationId"], 500)

    assert body["authorization"]["amount"] == 1_500
    assert items_of(api_v2, "/monitoring-alerts", cardId=f.card_id) == []


# --- what follows an incremented authorization -----------------------------------------------
def test_the_presentment_defaults_to_the_new_total_and_may_go_20_percent_above_it(api_v2):
    f = funded(api_v2)
    first = approved(api_v2, f.card_id, 1_000)
    incremented(api_v2, first["authorizationId"], 500)

    body = presented(api_v2, first["authorizationId"])

    assert (body["amount"], body["presentedAmount"]) == (1_500, 1_500)
    assert balances(api_v2, f.account_id) == money(START - 1_500)
    [line] = card_lines(api_v2, f.card_id)
    assert (line["settlementStatus"], line["amount"], line["status"]) == (
        "Presentment",
        1_500,
        "posted",
    )
    assert usage(api_v2, f.card_id) == (1_500, 0, 1_500)

    second = approved(api_v2, f.card_id, 1_000)
    incremented(api_v2, second["authorizationId"], 500)
    # 20% above the new total (1,500) is 1,800; one more is refused.
    assert_error(
        present(api_v2, second["authorizationId"], 1_801),
        "v2",
        422,
        "amount_exceeds_remaining",
        {"amount": 1_801, "held": 1_500, "maximum": 1_800},
    )
    body = presented(api_v2, second["authorizationId"], 1_800)
    assert body["presentedAmount"] == 1_800
    assert balances(api_v2, f.account_id) == money(START - 1_500 - 1_800)
    assert usage(api_v2, f.card_id) == (3_300, 0, 3_300)
    assert ledger_breaches() == []


def test_a_reversal_gives_back_the_whole_total(api_v2):
    f = funded(api_v2)
    auth = approved(api_v2, f.card_id, 1_000)
    body = incremented(api_v2, auth["authorizationId"], 500)

    reversed_ = created(reverse(api_v2, auth["authorizationId"]), "v2")

    assert (reversed_["status"], reversed_["amount"], reversed_["holdId"]) == (
        "reversed",
        1_500,
        body["holdId"],
    )
    assert balances(api_v2, f.account_id) == money(START)
    assert usage(api_v2, f.card_id) == (0, 0, 0)
    [line] = card_lines(api_v2, f.card_id)
    assert (line["amount"], line["status"], line["settlementStatus"]) == (
        1_500,
        "reversed",
        "Unsettled",
    )
    [event] = event_data(api_v2, "authorization.reversed", auth["authorizationId"])
    assert event["amount"] == 1_500


def test_the_expiry_job_gives_back_the_whole_total(api_v2):
    f = funded(api_v2)
    auth = approved(api_v2, f.card_id, 1_000)
    body = incremented(api_v2, auth["authorizationId"], 500)
    past_due(body["holdId"])

    assert expire_holds() == (
        "Expired 0 hold(s), 1 card authorization(s) and 0 pending transfer(s)."
    )

    assert authorization_of(api_v2, auth["authorizationId"])["status"] == "expired"
    assert hold_of(api_v2, body["holdId"])["status"] == "expired"
    assert balances(api_v2, f.account_id) == money(START)
    assert usage(api_v2, f.card_id) == (0, 0, 0)
    [line] = card_lines(api_v2, f.card_id)
    assert (line["amount"], line["status"]) == (1_500, "expired")
    assert event_data(api_v2, "authorization.expired", auth["authorizationId"]) == [
        {"cardId": f.card_id, "accountId": f.account_id, "amount": 1_500, "currency": "EUR"}
    ]


def test_a_foreign_currency_line_drops_its_merchant_amount_the_authorization_keeps_it(api_v2):
    f = funded(api_v2)
    auth = created(
        request(
            api_v2, f.card_id, 1_000, merchant=ABROAD, merchantAmount=1_600, merchantCurrency="JPY"
        ),
        "v2",
    )
    [line] = card_lines(api_v2, f.card_id)
    assert (line["merchantAmount"], line["merchantCurrency"]) == (1_600, "JPY")

    body = incremented(api_v2, auth["authorizationId"], 500)

    standing = body["authorization"]
    assert (
        standing["amount"],
        standing["merchantAmount"],
        standing["merchantCurrency"],
        standing["conversionRate"],
    ) == (1_500, 1_600, "JPY", "0.00625")
    [line] = card_lines(api_v2, f.card_id)
    assert (line["amount"], line["merchantAmount"], line["merchantCurrency"]) == (
        1_500,
        None,
        None,
    )


# --- the listing -----------------------------------------------------------------------------
def test_increments_are_listed_newest_first_with_a_cursor(api_v2):
    f = funded(api_v2)
    auth = approved(api_v2, f.card_id, 1_000)
    first = incremented(api_v2, auth["authorizationId"], 100)
    second = created(increment(api_v2, auth["authorizationId"], START), "v2")  # declined
    assert second["declineCode"] == "insufficient_funds"
    third = incremented(api_v2, auth["authorizationId"], 300)
    other = approved(api_v2, f.card_id, 50)
    incremented(api_v2, other["authorizationId"], 5)  # another authorization's

    def plain(body):
        return {key: value for key, value in body.items() if key != "authorization"}

    page, cursor = increments_of(api_v2, auth["authorizationId"], limit=2)
    assert page == [plain(third), plain(second)]
    assert cursor is not None
    page, cursor = increments_of(api_v2, auth["authorizationId"], limit=2, cursor=cursor)
    assert (page, cursor) == ([plain(first)], None)
    assert increments_of(api_v2, other["authorizationId"])[0][0]["amount"] == 5


# --- refused ---------------------------------------------------------------------------------
def _declined(api, f):
    return declined(api, f.card_id, START + 1, "insufficient_funds")


def _presented(api, f):
    return presented(api, approved(api, f.card_id, 1_000)["authorizationId"])


def _reversed(api, f):
    return created(reverse(api, approved(api, f.card_id, 1_000)["authorizationId"]), "v2")


def _expired(api, f):
    auth = approved(api, f.card_id, 1_000)
    past_due(auth["holdId"])
    expire_holds()
    return authorization_of(api, auth["authorizationId"])


NOT_PENDING = {
    "declined": _declined,
    "presented": _presented,
    "reversed": _reversed,
    "expired": _expired,
    "awaiting_program": lambda api, f: awaiting_program(api, f.card_id, 1_000),
}


@pytest.mark.parametrize("status", list(NOT_PENDING))
def test_only_a_pending_authorization_takes_an_increment(api_v2, status):
    f = funded(api_v2)
    auth = NOT_PENDING[status](api_v2, f)
    assert auth["status"] == status
    before = (
        balances(api_v2, f.account_id),
        usage(api_v2, f.card_id),
        card_lines(api_v2, f.card_id),
    )

    assert_error(
        increment(api_v2, auth["authorizationId"], 100),
        "v2",
        409,
        "invalid_state_transition",
        {"from": status, "to": "incremented"},
    )

    assert authorization_of(api_v2, auth["authorizationId"]) == auth
    assert (
        balances(api_v2, f.account_id),
        usage(api_v2, f.card_id),
        card_lines(api_v2, f.card_id),
    ) == before
    assert increments_of(api_v2, auth["authorizationId"]) == ([], None)
    assert event_data(api_v2, "authorization.increment_declined", auth["authorizationId"]) == []


@pytest.mark.parametrize(
    ("body", "details"),
    [
        ({"amount": 0}, {"amount": "Ensure this value is greater than or equal to 1."}),
        ({"amount": -5}, {"amount": "Ensure this value is greater than or equal to 1."}),
        ({}, {"amount": "This field is required."}),
        ({"amount": 100, "pin": "1234"}, {"pin": "Unknown field."}),
    ],
    ids=["zero", "negative", "missing", "unknown field"],
)
def test_an_invalid_body_is_400_and_changes_nothing(api_v2, body, details):
    f = funded(api_v2)
    auth = approved(api_v2, f.card_id, 1_000)
    response = api_v2.post(f"/card-authorizations/{auth['authorizationId']}/increments", body)
    assert_validation_error(response, "v2", details)
    assert_unchanged(api_v2, f, auth)
    assert increments_of(api_v2, auth["authorizationId"]) == ([], None)


def test_v1_has_no_increments(api_v1):
    f = funded(api_v1)
    auth = approved(api_v1, f.card_id, 1_000)
    assert increment(api_v1, auth["authorizationId"], 100).status_code == 404
    assert api_v1.get(f"/card-authorizations/{auth['authorizationId']}/increments").status_code == (
        404
    )
    assert AuthorizationIncrement.objects.count() == 0
    assert balances(api_v1, f.account_id) == money(START, 1_000)


def test_a_key_without_the_network_scope_is_refused(api_v2, institution):
    f = funded(api_v2)
    auth = approved(api_v2, f.card_id, 1_000)
    without = Api(
        "v2", issue_key(institution, scopes=[s for s in DEFAULT_TEST_SCOPES if s != "network"])[1]
    )

    assert_error(
        increment(without, auth["authorizationId"], 100),
        "v2",
        403,
        "permission_denied",
        {"requiredScope": scopes.NETWORK},
    )

    assert_unchanged(api_v2, f, auth)
    assert AuthorizationIncrement.objects.count() == 0
    # Reading the increments needs `read` only.
    assert increments_of(without, auth["authorizationId"]) == ([], None)


def test_the_same_idempotency_key_replays_the_increment_once(api_v2):
    f = funded(api_v2)
    auth = approved(api_v2, f.card_id, 1_000)
    key = uuid.uuid4()

    first = increment(api_v2, auth["authorizationId"], 500, idempotency_key=key)
    again = increment(api_v2, auth["authorizationId"], 500, idempotency_key=key)

    assert not first.has_header("Idempotent-Replayed")
    assert again["Idempotent-Replayed"] == "true"
    assert (again.status_code, again.content) == (first.status_code, first.content)
    body = created(first, "v2")
    assert body["authorization"]["amount"] == 1_500
    assert (
        AuthorizationIncrement.objects.filter(authorization_id=auth["authorizationId"]).count() == 1
    )
    assert authorization_of(api_v2, auth["authorizationId"])["amount"] == 1_500
    assert balances(api_v2, f.account_id) == money(START, 1_500)
    assert usage(api_v2, f.card_id) == (1_500, 0, 1_500)
    assert len(event_data(api_v2, "authorization.incremented", auth["authorizationId"])) == 1


# --- concurrency -----------------------------------------------------------------------------


def lock_waiters() -> int:
    """Lock requests of the database not granted now (pg_locks is read live, where
    pg_stat_activity is a snapshot for the rest of the transaction)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE NOT granted")
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_an_increment_that_waited_for_another_raises_the_new_total(api_v2):
    """One increment holds the authorization's row (its transaction open); a second, sent
    meanwhile, waits for the row, then is decided on what the first left: the new hold."""
    f = funded(api_v2)
    auth = approved(api_v2, f.card_id, 1_000)
    with operations.operation(SYSTEM):
        first = authorization_increment(
            authorization=Authorization.objects.get(pk=auth["authorizationId"]),
            amount=100,
            actor=SYSTEM,
        )
        second = InThread(api_v2, lambda client: increment(client, auth["authorizationId"], 200))
        deadline = time.monotonic() + 10
        while lock_waiters() == 0:
            assert time.monotonic() < deadline, "the second increment never waited"
            time.sleep(0.02)
    response = second.result()

    body = created(response, "v2")
    assert (body["approved"], body["authorization"]["amount"]) == (True, 1_300)
    assert hold_of(api_v2, first.hold_id)["status"] == "released"
    assert hold_of(api_v2, body["holdId"])["amount"] == 1_300
    assert balances(api_v2, f.account_id) == money(START, 1_300)
    assert usage(api_v2, f.card_id) == (1_300, 0, 1_300)
    assert ledger_breaches() == []


THREADS = 8
STEP = 100
FUNDS = 1_000
TRANSFER = 500


@pytest.mark.django_db(transaction=True)
def test_increments_racing_a_transfer_never_spend_more_than_the_funds(api_v2, key):
    """THREADS increments of STEP on one authorization of STEP and a transfer of TRANSFER out of
    the same account, released together: FUNDS cover the authorization with 9 increments, or
    the transfer with 4; whatever the order, what is held and paid never passes FUNDS."""
    f = funded(api_v2, load=FUNDS)
    bob = funded(api_v2, load=0, first="Bob")
    auth = approved(api_v2, f.card_id, STEP)

    def work(index):
        client = Api("v2", key[1])
        if index == 0:
            return ("transfer", transfer(client, f.account_id, bob.account_id, TRANSFER))
        return ("increment", increment(client, auth["authorizationId"], STEP))

    results = run_threads(THREADS + 1, work)

    [(_, sent)] = [result for result in results if result[0] == "transfer"]
    increments = [response for kind, response in results if kind == "increment"]
    assert {response.status_code for response in increments} == {201}
    bodies = [response.json() for response in increments]
    ok = [body for body in bodies if body["approved"]]
    refused = [body for body in bodies if not body["approved"]]
    assert {body["declineCode"] for body in refused} <= {"insufficient_funds"}
    paid = TRANSFER if sent.status_code == 201 else 0
    if not paid:
        assert_error(sent, "v2", 422, "insufficient_funds", details=sent.json().get("details"))
    total = STEP + STEP * len(ok)
    assert total + paid <= FUNDS
    # Nothing was refused while the funds covered it: the one who lost had no room left.
    for body in refused:
        assert body["declineDetails"]["available"] < STEP
    if not paid:
        assert FUNDS - total < TRANSFER
    stored = Authorization.objects.get(pk=auth["authorizationId"])
    assert stored.amount == total
    assert balances(api_v2, f.account_id) == money(FUNDS - paid, total)
    assert balances(api_v2, bob.account_id) == money(paid)
    [active] = [
        h for h in items_of(api_v2, "/holds", accountId=f.account_id) if h["status"] == "active"
    ]
    assert (active["holdId"], active["amount"]) == (stored.hold_id, total)
    [line] = card_lines(api_v2, f.card_id)
    assert (line["amount"], line["holdId"]) == (total, stored.hold_id)
    assert usage(api_v2, f.card_id) == (total, 0, total)
    assert AuthorizationIncrement.objects.filter(authorization=stored).count() == THREADS
    assert ledger_breaches() == []
