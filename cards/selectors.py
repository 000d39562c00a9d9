"""Reads of card products and cards, always scoped to one institution: another institution's
object answers the same 404 as an unknown id."""

from functools import partial

from core.actors import Actor
from core.exceptions import NotFound
from institutions.models import Institution

from .models import Card, CardProduct
from .secrets import pan_fingerprint
from .services.pan_guard import pan_failure_record, pan_guard_check


def card_product_list(*, institution: Institution):
    return CardProduct.objects.filter(institution=institution)


def card_product_get(*, institution: Institution, product_id: str) -> CardProduct:
    product = CardProduct.objects.filter(institution=institution, id=product_id).first()
    if product is None:
        raise NotFound("No card product with this rid.")
    return product


def card_list(
    *,
    institution: Institution,
    account_id: str | None = None,
    customer_id: str | None = None,
    status: str | None = None,
):
    cards = Card.objects.filter(institution=institution)
    if account_id:
        cards = cards.filter(account_id=account_id)
    if customer_id:
        cards = cards.filter(customer_id=customer_id)
    if status:
        cards = cards.filter(status=status)
    return cards.select_related("successor")


def card_get(*, institution: Institution, card_id: str) -> Card:
    card = (
        Card.objects.select_related("institution", "product", "account", "successor")
        .filter(institution=institution, id=card_id)
        .first()
    )
    if card is None:
        raise NotFound("No card with this id.")
    return card


def card_by_pan(*, institution: Institution, pan: str, actor: Actor) -> Card:
    """The card holding `pan`: the live one, else the newest that held it (a renewed, reissued
    or closed card keeps its PAN fingerprint). Every operation that takes a PAN resolves it here.

    For an API key (`actor.api_key`), card-number guessing is stopped (`services.pan_guard`): a
    key with too many failed resolutions in the window is refused first (429 `rate_limited`,
    nothing resolved), and a failure is counted. 404 `not_found` when none of the institution's
    cards has the PAN: another institution's PAN answers and counts exactly as an unknown one."""
    api_key = actor.api_key
    if api_key is not None:
        pan_guard_check(api_key=api_key)
    cards = Card.objects.select_related("institution", "product", "account", "successor").filter(
        institution=institution, pan_fingerprint=pan_fingerprint(pan)
    )
    card = cards.filter(status__in=Card.LIVE).first() or cards.order_by("-id").first()
    if card is None:
        error = NotFound("No card with this PAN.")
        if api_key is not None:
            # The 404 rolls the request back; the failure must outlive it (`TXView`).
            error.survivors.append(partial(pan_failure_record, api_key_id=api_key.pk))
        raise error
    return card
