"""Reads of card products and cards, always scoped to one institution: another institution's
object answers the same 404 as an unknown id."""

from core.selectors import get_of_institution
from institutions.models import Institution

from .models import Card, CardProduct


def card_product_list(*, institution: Institution):
    return CardProduct.objects.filter(institution=institution)


def card_product_get(*, institution: Institution, product_id: str) -> CardProduct:
    return get_of_institution(
        CardProduct,
        institution=institution,
        id=product_id,
        missing="No card product with this rid.",
    )


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
    return get_of_institution(
        Card.objects.select_related("institution", "product", "account", "successor"),
        institution=institution,
        id=card_id,
        missing="No card with this id.",
    )
