"""Card status: `inactive -> active <-> suspended`, `active | suspended -> lost | stolen | closed`,
`active -> expired` at validity end (the system only). lost, stolen, closed, expired are final."""

from django.db import transaction
from django.utils import timezone

from core.exceptions import CardNotActive, InvalidStateTransition, ValidationFailed
from core.metadata import metadata_merge
from core.operations import Outcome, changed, unchanged
from events.services import emit_for

from ..dates import is_past_expiry
from ..locks import lock_card
from ..models import Card

S = Card.Status
# What a client (API, admin) may ask for. `expired` is the system's: see `cards_expire`.
TRANSITIONS = {
    S.INACTIVE: {S.ACTIVE},
    S.ACTIVE: {S.SUSPENDED, S.LOST, S.STOLEN, S.CLOSED},
    S.SUSPENDED: {S.ACTIVE, S.LOST, S.STOLEN, S.CLOSED},
    S.LOST: set(),
    S.STOLEN: set(),
    S.CLOSED: set(),
    S.EXPIRED: set(),
}


def card_set_status(
    *, card: Card, status: str, reason: str = "", reason_code: str = ""
) -> Outcome[Card]:
    """Move a card to `status` (409 `invalid_state_transition` for any move not in TRANSITIONS;
    asking for the current status changes nothing: `Outcome.changed` false). Emits
    `card.status_changed`, with `reason_code` (one of `Card.StatusReasonCode`, 400 otherwise)
    when one is given. `Outcome.previous` is the status it moved from."""
    if reason_code and reason_code not in Card.StatusReasonCode.values:
        raise ValidationFailed(
            details={"reason_code": f"One of {', '.join(Card.StatusReasonCode.values)}."}
        )
    with transaction.atomic(savepoint=False):
        card = lock_card(card.pk)
        previous = card.status
        if status == previous:
            return unchanged(card)
        if status not in TRANSITIONS[card.status]:
            raise InvalidStateTransition(
                f"A card cannot go from {card.status} to {status}.",
                from_state=card.status,
                to_state=status,
            )
        if status == S.ACTIVE and is_past_expiry(card):
            raise InvalidStateTransition(
                "The card is past its expiry date.", from_state=card.status, to_state=status
            )
        change_status(card, status, reason, reason_code)
    return changed(card, previous)


def card_update(*, card: Card, risk_level: str | None = None, metadata: dict | None = None) -> Card:
    """Set the card's risk level (monitoring rules read it; a live card only, 422
    `card_not_active` otherwise) and merge `metadata` into its client metadata
    (`core.metadata.metadata_merge`, on a card of any status; 400 `validation_error`). Emits
    one `card.updated` naming the fields that changed (`changedFields`, with the new
    `riskLevel` when it changed); nothing changed, no event."""
    with transaction.atomic(savepoint=False):
        card = lock_card(card.pk)
        changed_fields = []
        data = {}
        if risk_level is not None:
            require_not_final(card)
            if card.risk_level != risk_level:
                card.risk_level = risk_level
                changed_fields.append("risk_level")
                data["risk_level"] = risk_level
        if metadata is not None:
            merged = metadata_merge(card.metadata, metadata)
            if merged != card.metadata:
                card.metadata = merged  # the event carries it (emit_for)
                changed_fields.append("metadata")
        if changed_fields:
            card.updated_at = timezone.now()
            card.save(update_fields=["risk_level", "metadata", "updated_at"])
            emit_for(card, "card.updated", data={"changed_fields": sorted(changed_fields), **data})
    return card


def change_status(card: Card, status: str, reason: str = "", reason_code: str = "") -> None:
    """Record a status move on a locked card and emit `card.status_changed` (no rule checked:
    callers have checked theirs); its data has `reason_code` only when one is given."""
    previous = card.status
    card.status = status
    card.status_reason = reason[:500]
    card.updated_at = timezone.now()
    card.save(update_fields=["status", "status_reason", "updated_at"])
    data = {"from": previous, "to": status, "reason": card.status_reason}
    if reason_code:
        data["reason_code"] = reason_code
    emit_for(card, "card.status_changed", data=data)


def require_not_final(card: Card) -> None:
    """Settings of a lost, stolen, closed or expired card no longer change (422)."""
    if not card.is_live:
        raise CardNotActive(
            f"The card is {card.status}.", details={"card_id": card.pk, "status": card.status}
        )
