"""Reads of card products and cards, always scoped to one institution: another institution's
object answers the same 404 as an unknown id."""

from functools import partial

from core.actors import Actor
from core.exceptions import NotFound
from core.operations import keep_if_refused
from core.selectors import get_of_institution
from institutions.models import Institution

from .models import Card, CardProduct
from .secrets import pan_fingerprint
from .services.pan_guard import pan_failure_record, pan_guard_check


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
        if api_key is not None:
            # The 404 rolls the operation back; the failure must outlive it.
            keep_if_refused(partial(pan_failure_record, api_key_id=api_key.pk))
        raise NotFound("No card with this PAN.")
    return card
