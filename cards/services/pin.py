"""PINs: set, change (with the current PIN), verify, block after three wrong tries, unblock.

A PIN is stored only as a keyed hash (`cards.secrets`); it is never returned or logged. A wrong
try must be counted even though the request is refused, so these functions do not raise on a
wrong PIN: they record the try and return a `PinCheck`, and the view answers the refusal
without rolling the count back (`TXView.refuse`).
"""

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from api.actors import Actor
from api.exceptions import IncorrectPin, PinBlocked, ValidationFailed
from events.services import emit

from ..models import Card
from ..secrets import pin_hash, pin_matches
from .status import lock_card, require_not_final

MAX_TRIES = 3


@dataclass(frozen=True)
class PinCheck:
    verified: bool
    blocked: bool
    remaining_tries: int


def card_pin_set(*, card: Card, pin: str, current_pin: str | None, actor: Actor) -> PinCheck:
    """Set the PIN; when one is set, `current_pin` must match (a wrong one counts as a try and
    changes nothing). 422 `pin_blocked` while blocked. Emits `card.pin_changed`."""
    with transaction.atomic(savepoint=False):
        card = lock_card(card.pk)
        require_not_final(card)
        _require_not_blocked(card)
        if card.pin_hash is not None:
            if current_pin is None:
                raise ValidationFailed(
                    details={"currentPin": "Required to change a PIN that is set."}
                )
            check = _try(card, current_pin)
            if not check.verified:
                return check
            action = "changed"
        else:
            action = "set"
        card.pin_hash = pin_hash(pin)
        card.pin_failed_attempts = 0
        card.pin_changed_at = card.updated_at = timezone.now()
        card.save(update_fields=["pin_hash", "pin_failed_attempts", "pin_changed_at", "updated_at"])
        _emit(card, action)
    return PinCheck(verified=True, blocked=False, remaining_tries=MAX_TRIES)


def card_pin_verify(*, card: Card, pin: str, actor: Actor) -> PinCheck:
    """Check `pin`: a match resets the count of wrong tries; the third wrong try in a row
    blocks the PIN. 422 `pin_blocked` while blocked, `incorrect_pin` when no PIN is set."""
    with transaction.atomic(savepoint=False):
        card = lock_card(card.pk)
        require_not_final(card)
        _require_not_blocked(card)
        if card.pin_hash is None:
            raise IncorrectPin("No PIN is set on this card.", details={"pinSet": False})
        return _try(card, pin)


def card_pin_unblock(*, card: Card, actor: Actor) -> Card:
    """Unblock the PIN and forget the wrong tries. Emits `card.pin_changed` (`unblocked`);
    unblocking a PIN that is not blocked changes nothing."""
    with transaction.atomic(savepoint=False):
        card = lock_card(card.pk)
        require_not_final(card)
        if card.pin_blocked:
            card.pin_blocked = False
            card.pin_failed_attempts = 0
            card.updated_at = timezone.now()
            card.save(update_fields=["pin_blocked", "pin_failed_attempts", "updated_at"])
            _emit(card, "unblocked")
    return card


def card_pin_try(card: Card, pin: str) -> PinCheck:
    """Check `pin` on a card the caller has locked (a card authorization with a PIN): counted
    like a verification. The caller checks `pin_blocked` and `pin_is_set` first."""
    return _try(card, pin)


def refusal(check: PinCheck) -> IncorrectPin | PinBlocked:
    """The error a failed check answers: `pin_blocked` when this try blocked the PIN."""
    details = {"remainingTries": check.remaining_tries}
    if check.blocked:
        return PinBlocked("Three wrong PINs in a row: the PIN is now blocked.", details=details)
    return IncorrectPin(details=details)


def _try(card: Card, pin: str) -> PinCheck:
    if pin_matches(card.pin_hash, pin):
        if card.pin_failed_attempts:
            card.pin_failed_attempts = 0
            card.save(update_fields=["pin_failed_attempts"])
        return PinCheck(verified=True, blocked=False, remaining_tries=MAX_TRIES)
    card.pin_failed_attempts += 1
    card.pin_blocked = card.pin_failed_attempts >= MAX_TRIES
    card.updated_at = timezone.now()
    card.save(update_fields=["pin_failed_attempts", "pin_blocked", "updated_at"])
    if card.pin_blocked:
        _emit(card, "blocked")
    return PinCheck(
        verified=False,
        blocked=card.pin_blocked,
        remaining_tries=MAX_TRIES - card.pin_failed_attempts,
    )


def _require_not_blocked(card: Card) -> None:
    if card.pin_blocked:
        raise PinBlocked(details={"remainingTries": 0})


def _emit(card: Card, action: str) -> None:
    emit(
        institution=card.institution,
        type="card.pin_changed",
        object_type="card",
        object_id=card.pk,
        data={"action": action},
    )
