"""The two ends of a transfer: each names an account by `account_id` or `account_number`, or a
card by `card_id` or `pan` (the card's account moves the money, the card is recorded)."""

from dataclasses import dataclass

from accounts.models import Account
from accounts.selectors import accounts_of_endpoints
from cards.models import Card
from cards.selectors import card_by_pan, card_get
from core.actors import Actor
from institutions.models import Institution


@dataclass(frozen=True)
class Resolved:
    account: Account
    card: Card | None = None


def endpoints_resolve(
    *, institution: Institution, endpoints: list[dict], actor: Actor
) -> list[Resolved]:
    """The accounts (and cards) the endpoints name, in their order; 404 when one does not
    exist in the institution. Account-only transfers (the hot path) take one query. A `pan`
    is resolved by `card_by_pan`, which counts and throttles an API key's failed guesses."""
    account_endpoints = [e for e in endpoints if "account_id" in e or "account_number" in e]
    accounts = iter(accounts_of_endpoints(institution=institution, endpoints=account_endpoints))
    resolved = []
    for endpoint in endpoints:
        if "card_id" in endpoint:
            card = card_get(institution=institution, card_id=endpoint["card_id"])
        elif "pan" in endpoint:
            card = card_by_pan(institution=institution, pan=endpoint["pan"], actor=actor)
        else:
            resolved.append(Resolved(next(accounts)))
            continue
        resolved.append(Resolved(card.account, card))
    return resolved
