"""Security settings (controls): where and how a card may be used. Checked by card
authorizations; changed here."""

from django.db import transaction
from django.utils import timezone

from events.services import emit_for

from ..locks import lock_card
from ..models import Card
from .status import require_not_final

# A card's security settings (the API's names of these: `api.names`).
SECURITY_FIELDS = frozenset(
    {
        "ecommerce",
        "contactless",
        "atm",
        "international",
        "magstripe",
        "blocked_mccs",
        "blocked_countries",
    }
)


def card_security_settings_set(*, card: Card, changes: dict) -> Card:
    """Change some security settings; lists replace the stored list (sorted, without
    duplicates). Emits `card.security_settings_changed`; no change emits nothing."""
    unknown = set(changes) - SECURITY_FIELDS
    if unknown:
        raise ValueError(f"Not security settings: {sorted(unknown)}")
    changes = {
        field: sorted(set(value)) if isinstance(value, list) else value
        for field, value in changes.items()
    }
    with transaction.atomic(savepoint=False):
        card = lock_card(card.pk)
        require_not_final(card)
        changed = [field for field, value in changes.items() if getattr(card, field) != value]
        if changed:
            for field in changed:
                setattr(card, field, changes[field])
            card.updated_at = timezone.now()
            card.save(update_fields=[*changed, "updated_at"])
            emit_for(
                card,
                "card.security_settings_changed",
                data={"changed_fields": sorted(changed)},
            )
    return card
