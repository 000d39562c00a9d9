"""The expiry of unpresented authorizations, in both versions: `expire_holds` (the periodic job)
releases an approved authorization whose hold's time has come; its line stays `Unsettled` with
`status: expired`, its usage is given back, `hold.expired` and `authorization.expired` are
emitted, and it can no longer be presented or reversed."""

from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from accounts.models import Hold

from .helpers import (
    ATM,
    START,
    approved,
    assert_error,
    authorization_of,
    balances,
    event_data,
    expire_holds,
    funded,
    hold_of,
    line_of,
    money,
    present,
    reverse,
    usage,
)

pytestmark = pytest.mark.django_db


def test_an_unpresented_authorization_expires(api):
    f = funded(api)
    stale = approved(api, f.card_id, 1_000)
    fresh = approved(api, f.card_id, 500, type="Cash", merchant=ATM)
    expires_at = datetime.fromisoformat(hold_of(api, stale["holdId"])["expiresAt"])
    week = timezone.now() + timedelta(days=7)  # AUTHORIZATION_HOLD_DAYS
    assert week - timedelta(minutes=1) < expires_at <= week
    assert balances(api, f.account_id) == money(START, 1_500)
    assert usage(api, f.card_id) == (1_500, 500, 1_500)
    # Nothing is due yet.
    assert expire_holds() == "Expired 0 hold(s), 0 card authorization(s) and 0 pending transfer(s)."

    Hold.objects.filter(pk=stale["holdId"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert expire_holds() == "Expired 0 hold(s), 1 card authorization(s) and 0 pending transfer(s)."

    body = authorization_of(api, stale["authorizationId"])
    assert body == {**stale, "status": "expired", "updatedAt": body["updatedAt"]}
    hold = hold_of(api, stale["holdId"])
    assert (hold["status"], hold["capturedAmount"]) == ("expired", 0)
    assert hold["closedAt"] is not None
    line = line_of(api, stale["transactionId"])
    assert (line["settlementStatus"], line["status"], line["amount"]) == (
        "Unsettled",
        "expired",
        1_000,
    )
    assert balances(api, f.account_id) == money(START, 500)
    assert usage(api, f.card_id) == (500, 500, 500)
    assert event_data(api, "authorization.expired", stale["authorizationId"]) == [
        {"cardId": f.card_id, "accountId": f.account_id, "amount": 1_000, "currency": "EUR"}
    ]
    assert len(event_data(api, "hold.expired", stale["holdId"])) == 1
    # The other one is untouched.
    assert authorization_of(api, fresh["authorizationId"])["status"] == "pending"
    assert line_of(api, fresh["transactionId"])["status"] == "pending"

    # Expired is final; running the job again does nothing more.
    for response, to in [
        (present(api, stale["authorizationId"]), "presented"),
        (reverse(api, stale["authorizationId"]), "reversed"),
    ]:
        assert_error(
            response, api.version, 409, "invalid_state_transition", {"from": "expired", "to": to}
        )
    assert expire_holds() == "Expired 0 hold(s), 0 card authorization(s) and 0 pending transfer(s)."
    assert balances(api, f.account_id) == money(START, 500)
    assert usage(api, f.card_id) == (500, 500, 500)


def test_presented_and_reversed_authorizations_do_not_expire(api):
    f = funded(api)
    done = approved(api, f.card_id, 1_000)
    undone = approved(api, f.card_id, 2_000)
    assert present(api, done["authorizationId"]).status_code in (200, 201)
    assert reverse(api, undone["authorizationId"]).status_code in (200, 201)
    Hold.objects.filter(pk__in=[done["holdId"], undone["holdId"]]).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert expire_holds() == "Expired 0 hold(s), 0 card authorization(s) and 0 pending transfer(s)."
    assert authorization_of(api, done["authorizationId"])["status"] == "presented"
    assert authorization_of(api, undone["authorizationId"])["status"] == "reversed"
    assert balances(api, f.account_id) == money(START - 1_000)
    assert usage(api, f.card_id) == (1_000, 0, 1_000)
