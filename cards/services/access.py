"""Reading a card's full PAN and CVV: only for a live card, and every read is recorded."""

from django.db import transaction

from core.actors import Actor

from ..locks import lock_card
from ..models import Card, SensitiveDetailsAccess
from .status import require_not_final


def card_sensitive_details(
    *, card: Card, actor: Actor, request_id: str = "", client_ip: str | None = None
) -> dict:
    """The PAN, CVV and expiry of a live card (422 `card_not_active` otherwise), after writing
    the access record (who, when, from where) in the same transaction."""
    with transaction.atomic():
        # The stored status, locked against a concurrent status change: a card being closed
        # right now has its secrets read before the close or not at all.
        card = lock_card(card.pk)
        require_not_final(card)
        SensitiveDetailsAccess.objects.create(
            institution_id=card.institution_id,
            card=card,
            api_key=actor.api_key,
            user=actor.user,
            request_id=request_id,
            client_ip=client_ip,
        )
        return {
            "pan": card.pan(),
            "cvv": card.cvv(),
            "expiry_month": card.expiry_month,
            "expiry_year": card.expiry_year,
        }
