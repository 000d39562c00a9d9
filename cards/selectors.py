"""Reads of card products and cards, always scoped to one institution: another institution's
object answers the same 404 as an unknown id."""

from api.exceptions import NotFound
from api.models import Institution

from .models import Card, CardProduct
from .secrets import pan_fingerprint


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


def card_by_pan(*, institution: Institution, pan: str) -> Card:
    """The card holding `pan`: the live one, else the newest that held it (a renewed, reissued
    or closed card keeps its PAN fingerprint)."""
    cards = Card.objects.select_related("institution", "product", "account", "successor").filter(
        institution=institution, pan_fingerprint=pan_fingerprint(pan)
    )
    card = cards.filter(status__in=Card.LIVE).first() or cards.order_by("-id").first()
    if card is None:
        raise NotFound("No card with this PAN.")
    return card
