"""What the card-transaction tests share: a funded account with an active card, and the card
network's requests (authorize, present, reverse, return) with the reads that show their effect:
balances, the hold, the statement line, the card's usage, events.

Everything goes through the API in the test's version, except what no endpoint does: moving an
authorization's hold past its expiry (the expiry job's input) and a card's expiry date."""

from dataclasses import dataclass
from datetime import timedelta
from io import StringIO

from django.core.management import call_command
from django.utils import timezone

from accounts.models import Hold
from authorizations.services import authorization_create
from cards.models import Card
from core import operations
from core.actors import SYSTEM
from decisioning import calls
from tests.accounts.api.helpers import (
    CREATED,
    assert_error,
    balances,
    created,
    events,
    items_of,
    listed,
    money,
    resource,
)
from tests.cards.api.helpers import account, customer, issue, usage_of
from tests.decisioning.helpers import create_endpoint, free_port, url_at

__all__ = [
    "CREATED",
    "assert_error",
    "balances",
    "created",
    "events",
    "items_of",
    "money",
    "resource",
]

MERCHANT = {"name": "Corner Shop", "mcc": "5411", "countryCode": "276", "channel": "pos"}
ATM = {"name": "Sparkasse ATM", "mcc": "6011", "countryCode": "276", "channel": "atm"}
START = 10_000  # what `funded` loads
# The prepaid product's limits (cards.services.products).
PER_TRANSACTION, DAILY, MONTHLY, DAILY_CASH = 100_000, 200_000, 1_000_000, 50_000


@dataclass
class Funded:
    customer_id: str
    account_id: str
    card_id: str


def funded(api, load: int = START, first: str = "Ada") -> Funded:
    """A new customer (cardholder country 276) with a prepaid EUR account loaded with `load`
    and an active virtual prepaid card on it."""
    holder = customer(api, first)
    account_id = account(api, holder, load=load)
    card = issue(api, account_id, holder, status="active")
    return Funded(holder, account_id, card["cardId"])


# --- the network's requests
def authorize(
    api,
    card_id: str,
    amount: int,
    *,
    currency: str = "EUR",
    type: str = "Goods",
    merchant: dict | None = None,
    pin: str | None = None,
    partial_approval: bool | None = None,
    **kwargs,
):
    body = {
        "cardId": card_id,
        "amount": amount,
        "currency": currency,
        "type": type,
        "merchant": merchant or MERCHANT,
    }
    if pin is not None:
        body["pin"] = pin
    if partial_approval is not None:
        body["partialApproval"] = partial_approval
    return api.post("/card-authorizations", body, **kwargs)


def approved(api, card_id: str, amount: int, **fields) -> dict:
    """An authorization that must be approved."""
    body = created(authorize(api, card_id, amount, **fields), api.version)
    assert (body["approved"], body["status"], body["declineCode"]) == (True, "pending", None), body
    return body


def declined(api, card_id: str, amount: int, code: str, **fields) -> dict:
    """An authorization that must be declined with `code` (a result: 201, v1 200)."""
    body = created(authorize(api, card_id, amount, **fields), api.version)
    assert (body["approved"], body["status"], body["declineCode"]) == (False, "declined", code), (
        body
    )
    return body


def awaiting_program(api, card_id: str, amount: int, mode: str = "live") -> dict:
    """An authorization left awaiting its live (or `jit`) program: the request's first
    transaction, by the service, the call never made (an endpoint at a port nothing listens
    on). Its call's slot is given back when the scope a request would hold ends."""
    create_endpoint(api, url=url_at(free_port()), mode=mode)
    with calls.scope(), operations.operation(SYSTEM):
        authorization = authorization_create(
            card=Card.objects.get(pk=card_id),
            amount=amount,
            currency="EUR",
            type="Goods",
            merchant={
                "name": "Corner Shop",
                "mcc": "5411",
                "country_code": "276",
                "channel": "pos",
            },
            actor=SYSTEM,
            ask_program=True,
        )
    return authorization_of(api, authorization.pk)


def present(api, authorization_id: str, amount: int | None = None):
    body = {} if amount is None else {"amount": amount}
    return api.post(f"/card-authorizations/{authorization_id}/presentments", body)


def presented(api, authorization_id: str, amount: int | None = None) -> dict:
    body = created(present(api, authorization_id, amount), api.version)
    assert body["status"] == "presented", body
    return body


def reverse(api, authorization_id: str):
    return api.post(f"/card-authorizations/{authorization_id}/reversals", {})


def increment(api, authorization_id: str, amount, **kwargs):
    body = {} if amount is None else {"amount": amount}
    return api.post(f"/card-authorizations/{authorization_id}/increments", body, **kwargs)


def incremented(api, authorization_id: str, amount: int) -> dict:
    """An increment that must be approved."""
    body = created(increment(api, authorization_id, amount), "v2")
    assert (body["approved"], body["declineCode"]) == (True, None), body
    return body


def increments_of(api, authorization_id: str, **params) -> tuple[list, str | None]:
    return listed(api.get(f"/card-authorizations/{authorization_id}/increments", params))


def card_return(api, card_id: str, amount: int, *, currency="EUR", authorization_id=None):
    body = {"cardId": card_id, "amount": amount, "currency": currency, "merchant": MERCHANT}
    if authorization_id is not None:
        body["authorizationId"] = authorization_id
    return api.post("/card-returns", body)


def settings(api, card_id: str, **changes) -> None:
    """Change the card's security settings."""
    response = api.patch(f"/cards/{card_id}/security-settings", changes)
    assert response.status_code == 200, response.content


# --- the expiry job's input and run
def past_due(hold_id: str) -> None:
    """Move a hold past its expiry (no endpoint does)."""
    Hold.objects.filter(pk=hold_id).update(expires_at=timezone.now() - timedelta(seconds=1))


def expire_holds() -> str:
    """Run the expiry job's command; what it printed."""
    out = StringIO()
    call_command("expire_holds", stdout=out)
    return out.getvalue().strip()


# --- reads
def authorization_of(api, authorization_id: str) -> dict:
    return resource(api.get(f"/card-authorizations/{authorization_id}"), api.version)


def hold_of(api, hold_id: str) -> dict:
    return resource(api.get(f"/holds/{hold_id}"), api.version)


def holds_of(api, account_id: str) -> list:
    return items_of(api, "/holds", accountId=account_id, limit=100)


def line_of(api, transaction_id: str) -> dict:
    return resource(api.get(f"/transactions/{transaction_id}"), api.version)


def card_lines(api, card_id: str, **params) -> list:
    return items_of(api, f"/cards/{card_id}/transactions", limit=100, **params)


def usage(api, card_id: str) -> tuple[int, int, int]:
    """(daily, dailyCash, monthly) the card has used today."""
    used = usage_of(api, card_id)
    return used["daily"], used["dailyCash"], used["monthly"]


def event_data(api, type: str, object_id: str) -> list:
    """The `data` of each event of `type` about `object_id`, newest first."""
    return [event["data"] for event in events(api, type, object_id)]
