"""Retries and the ledger, in both versions: the same `Idempotency-Key` on
`POST /card-authorizations` replays the same decision (an approval or a decline) without a
second hold, a second try of a wrong PIN or a second event; after a mixed day of approvals,
presentments, reversals, expiries, returns and card transfers `verify_ledger` passes."""

import uuid
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from accounts.models import Hold
from accounts.verification import CHECKS
from authorizations.models import Authorization
from tests.cards.api.helpers import card_of, send

from .helpers import (
    ATM,
    START,
    approved,
    authorize,
    balances,
    card_return,
    created,
    event_data,
    funded,
    holds_of,
    money,
    presented,
    reverse,
    usage,
)

pytestmark = pytest.mark.django_db


def replayed(api, card_id, amount, **fields):
    """The same authorization sent twice with one key: (first, replay) responses."""
    key = uuid.uuid4()
    first = authorize(api, card_id, amount, idempotency_key=key, **fields)
    again = authorize(api, card_id, amount, idempotency_key=key, **fields)
    assert not first.has_header("Idempotent-Replayed")
    assert again["Idempotent-Replayed"] == "true"
    assert (again.status_code, again.content) == (first.status_code, first.content)
    return created(first, api.version)


def test_an_approval_is_replayed_without_a_second_hold(api):
    f = funded(api)
    body = replayed(api, f.card_id, 1_000)
    assert body["approved"] is True
    assert [hold["holdId"] for hold in holds_of(api, f.account_id)] == [body["holdId"]]
    assert balances(api, f.account_id) == money(START, 1_000)
    assert usage(api, f.card_id) == (1_000, 0, 1_000)
    assert Authorization.objects.filter(card_id=f.card_id).count() == 1
    assert len(event_data(api, "authorization.approved", body["authorizationId"])) == 1


def test_a_decline_is_replayed_as_it_was(api):
    f = funded(api)
    body = replayed(api, f.card_id, START + 1)
    assert (body["approved"], body["declineCode"]) == (False, "insufficient_funds")
    assert Authorization.objects.filter(card_id=f.card_id).count() == 1
    assert len(event_data(api, "authorization.declined", body["authorizationId"])) == 1
    # Once the money is there, the same key still answers the decline; a new key is approved.
    created(
        api.post(
            f"/accounts/{f.account_id}/adjustments",
            {"direction": "credit", "amount": 1, "currency": "EUR"},
        ),
        api.version,
    )
    again = replayed(api, f.card_id, START + 1)
    assert again["approved"] is True
    assert holds_of(api, f.account_id)[0]["holdId"] == again["holdId"]


def test_a_replayed_wrong_pin_counts_once(api):
    f = funded(api)
    assert api.patch(f"/cards/{f.card_id}/pin", {"pin": "482915"}).status_code == 200
    body = replayed(api, f.card_id, 100, pin="591736")
    assert (body["declineCode"], body["declineDetails"]) == ("incorrect_pin", {"remainingTries": 2})
    assert card_of(api, f.card_id)["pin"]["remainingTries"] == 2


def test_verify_ledger_after_a_mixed_day(api):
    f = funded(api, load=50_000)
    bob = funded(api, load=1_000, first="Bob")
    lower = approved(api, f.card_id, 4_000)
    higher = approved(api, f.card_id, 2_500)
    undone = approved(api, f.card_id, 3_000, type="Cash", merchant=ATM)
    stale = approved(api, f.card_id, 1_500)
    open_ = approved(api, f.card_id, 700)
    presented(api, lower["authorizationId"], 3_600)
    presented(api, higher["authorizationId"], 3_000)
    created(reverse(api, undone["authorizationId"]), api.version)
    Hold.objects.filter(pk=stale["holdId"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    call_command("expire_holds", stdout=StringIO())
    created(
        card_return(api, f.card_id, 1_000, authorization_id=lower["authorizationId"]), api.version
    )
    created(card_return(api, f.card_id, 250), api.version)
    created(card_return(api, bob.card_id, 80), api.version)
    created(send(api, {"cardId": f.card_id}, {"cardId": bob.card_id}, 1_200), api.version)
    bob_pays = approved(api, bob.card_id, 2_000)
    presented(api, bob_pays["authorizationId"], 2_280)

    posted = 50_000 - 3_600 - 3_000 + 1_000 + 250 - 1_200
    assert balances(api, f.account_id) == money(posted, 700)
    assert balances(api, bob.account_id) == money(1_000 + 80 + 1_200 - 2_280)
    assert usage(api, f.card_id) == (3_600 + 3_000 + 700 + 1_200, 0, 3_600 + 3_000 + 700 + 1_200)
    assert {h["status"] for h in holds_of(api, f.account_id)} == {
        "captured",
        "released",
        "expired",
        "active",
    }
    assert open_["status"] == "pending"
    out = StringIO()
    call_command("verify_ledger", stdout=out)  # SystemExit(1) on a breach
    assert out.getvalue().strip() == f"Ledger OK: {len(CHECKS)} checks passed."
