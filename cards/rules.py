"""What a card must be to move money: checked on a locked card by the services that move it."""

from core.exceptions import CardNotActive

from .dates import is_past_expiry
from .models import Card


def check_card_can_send(card: Card) -> None:
    """Only an `active` card within its validity sends money (422 `card_not_active`)."""
    if card.status != Card.Status.ACTIVE:
        raise CardNotActive(
            f"The card is {card.status}: it cannot send money.",
            details={"card_id": card.pk, "status": card.status},
        )
    if is_past_expiry(card):
        raise CardNotActive(
            "The card is past its expiry date.",
            details={"card_id": card.pk, "status": card.status, "expired": True},
        )


def check_card_can_receive(card: Card) -> None:
    """Money may reach an account through a live card (inactive, active or suspended), not
    through a lost, stolen, closed or expired one: a PAN that names a dead card is a mistake."""
    if not card.is_live:
        raise CardNotActive(
            f"The card is {card.status}: it cannot receive money.",
            details={"card_id": card.pk, "status": card.status},
        )
