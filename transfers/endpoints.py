"""The two ends of a transfer: each names an account by `account_id` or `account_number`, or a
card by `card_id` or `pan` (the card's account moves the money, the card is recorded)."""

from dataclasses import dataclass

from accounts.models import Account
from accounts.selectors import accounts_of_endpoints
from cards.models import Card
from cards.selectors import card_get
from cards.services import card_by_pan
from core.actors import Actor
from core.exceptions import TXError
from core.operations import part
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
    account_endpoints = [e for e in endpoints if _names_account(e)]
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


def endpoint_pairs_resolve(
    *, institution: Institution, pairs: list[list[dict]], actor: Actor
) -> list[list[Resolved] | TXError]:
    """`endpoints_resolve` for many (source, destination) pairs, each resolved or failed on its
    own (the error in its place): the accounts named by id or number in one query for all
    pairs; a pair through a card or PAN on its own, as a part of the operation
    (`core.operations.part`: a failed PAN lookup is still counted)."""
    by_account = [all(_names_account(end) for end in pair) for pair in pairs]
    named = [end for pair, plain in zip(pairs, by_account, strict=True) if plain for end in pair]
    accounts = iter(accounts_of_endpoints(institution=institution, endpoints=named, refuse=False))
    resolved = []
    for pair, plain in zip(pairs, by_account, strict=True):
        if plain:
            ends = [next(accounts), next(accounts)]
            missing = next((end for end in ends if isinstance(end, TXError)), None)
            resolved.append(missing or [Resolved(account) for account in ends])
            continue
        try:
            with part():
                resolved.append(
                    endpoints_resolve(institution=institution, endpoints=pair, actor=actor)
                )
        except TXError as error:
            resolved.append(error)
    return resolved


def _names_account(endpoint: dict) -> bool:
    return "account_id" in endpoint or "account_number" in endpoint
