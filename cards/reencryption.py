"""Card PANs and CVVs under key rotation (`core.reencryption`; registered by CardsConfig)."""

from django.core.exceptions import ImproperlyConfigured
from django.db.models import Q, QuerySet

from cards.models import Card
from core.reencryption import EncryptedRows, decrypting


def _stale(key_id: str) -> QuerySet:
    current = f"{key_id}:"
    return Card.objects.filter(
        ~Q(pan_encrypted__startswith=current) | ~Q(cvv_encrypted__startswith=current)
    )


def _reseal(card: Card) -> None:
    pan, cvv = decrypting(card, lambda: (card.pan(), card.cvv()))
    fingerprint = card.pan_fingerprint
    card.seal(pan=pan, cvv=cvv)
    if card.pan_fingerprint != fingerprint:
        # PAN_FINGERPRINT_KEY changed: saving would break lookups; nothing to do with rotation.
        raise ImproperlyConfigured(
            f"Card {card.pk}: its PAN fingerprint does not match PAN_FINGERPRINT_KEY."
        )
    card.save(update_fields=["pan_encrypted", "cvv_encrypted"])


CARDS = EncryptedRows(
    name="cards", describe="{n} card(s) (PAN and CVV)", stale=_stale, reseal=_reseal
)
