"""PINs: set, change (with the current PIN), verify, block after three wrong tries, unblock.

A PIN is stored only as a keyed hash (`cards.secrets`); it is never returned or logged. A
verification answers `verified` true or false (a `PinCheck`, not a refusal). A wrong `currentPin`
refuses the change (422) but must stay counted: the try is kept through the operation
(`core.operations.keep_if_refused`), which counts it again after undoing the refused change,
and answers the refusal as the count then stands.

Every wrong PIN counts through one function, `_try`: a verification, a wrong `currentPin` and a
card authorization with a PIN (`card_pin_try`) share the card's one count, so two wrong PINs at
a terminal and one through the API block it. Each block emits `card.pin_blocked` (besides the
`card.pin_changed` with `action: blocked` that subscribers already get).

Unblocking is capped so that it cannot be used to brute-force a PIN: the API may unblock a card
`UNBLOCK_MAX` times in a rolling `UNBLOCK_WINDOW`, counted per card chain (the PIN, its tries
and its block carry over to a renewal, reissue or replacement, so a new card must not restart
the count); beyond that only staff can, with a reason. Every unblock is a `PinUnblock` row.
"""

from dataclasses import dataclass
from datetime import timedelta
from functools import partial

from django.db import transaction
from django.utils import timezone

from core.actors import Actor
from core.exceptions import IncorrectPin, PinBlocked, PinUnblockLimit, ValidationFailed
from core.operations import Outcome, changed, keep_if_refused, unchanged
from events.services import emit_for

from ..locks import lock_card
from ..models import Card, PinUnblock
from ..secrets import pin_hash, pin_matches
from .status import require_not_final

MAX_TRIES = 3
UNBLOCK_MAX = 2
UNBLOCK_WINDOW = timedelta(days=30)


@dataclass(frozen=True)
class PinCheck:
    verified: bool
    blocked: bool
    remaining_tries: int


def card_pin_set(*, card: Card, pin: str, current_pin: str | None) -> PinCheck:
    """Set the PIN; when one is set, `current_pin` must match: a wrong one is 422
    `incorrect_pin` (or `pin_blocked` when it was the third wrong try), counts as a try and
    changes nothing else. 422 `pin_blocked` while blocked. Emits `card.pin_changed`."""
    with transaction.atomic(savepoint=False):
        card = lock_card(card.pk)
        require_not_final(card)
        _require_not_blocked(card)
        if card.pin_hash is not None:
            if current_pin is None:
                raise ValidationFailed(
                    details={"current_pin": "Required to change a PIN that is set."}
                )
            check = _try(card, current_pin, via="pin_change")
            if not check.verified:
                keep_if_refused(partial(_count_wrong_try, card.pk, current_pin, "pin_change"))
                raise refusal(check)
            action = "changed"
        else:
            action = "set"
        card.pin_hash = pin_hash(pin)
        card.pin_failed_attempts = 0
        card.pin_changed_at = card.updated_at = timezone.now()
        card.save(update_fields=["pin_hash", "pin_failed_attempts", "pin_changed_at", "updated_at"])
        _emit(card, action)
    return PinCheck(verified=True, blocked=False, remaining_tries=MAX_TRIES)


def card_pin_verify(*, card: Card, pin: str) -> PinCheck:
    """Check `pin`: a match resets the count of wrong tries; the third wrong try in a row
    blocks the PIN. 422 `pin_blocked` while blocked, `incorrect_pin` when no PIN is set."""
    with transaction.atomic(savepoint=False):
        card = lock_card(card.pk)
        require_not_final(card)
        _require_not_blocked(card)
        if card.pin_hash is None:
            raise IncorrectPin("No PIN is set on this card.", details={"pin_set": False})
        return _try(card, pin, via="pin_verification")


def card_pin_unblock(*, card: Card, actor: Actor, reason: str = "") -> Outcome[Card]:
    """Unblock the PIN and forget the wrong tries; records a `PinUnblock` and emits
    `card.pin_changed` (`unblocked`). Unblocking a PIN that is not blocked changes nothing
    (`Outcome.changed` false).

    Anyone but staff (an API key) may unblock a card chain at most `UNBLOCK_MAX` times in the
    rolling `UNBLOCK_WINDOW`, every unblock of the chain counted, whoever made it: the next is
    422 `pin_unblock_limit` and nothing changes. Staff (`actor.user`) are not capped but must
    give a `reason` (400 `validation_error` without one). 422 `card_not_active` for a lost,
    stolen, closed or expired card."""
    staff = actor.user is not None
    if staff and not reason.strip():
        raise ValidationFailed(details={"reason": "Staff must say why they unblock a PIN."})
    with transaction.atomic(savepoint=False):
        # Of a card chain only its newest card can be live (a successor retires its
        # predecessor), and final cards are refused here: this lock serializes the count.
        card = lock_card(card.pk)
        require_not_final(card)
        if not card.pin_blocked:
            return unchanged(card)
        now = timezone.now()
        if not staff:
            recent = PinUnblock.objects.filter(
                lineage_id=card.lineage_root_id, created_at__gt=now - UNBLOCK_WINDOW
            )
            if recent.count() >= UNBLOCK_MAX:
                raise PinUnblockLimit(
                    details={"limit": UNBLOCK_MAX, "window_days": UNBLOCK_WINDOW.days}
                )
        PinUnblock.objects.create(
            card=card,
            lineage_id=card.lineage_root_id,
            reason=reason,
            created_at=now,
            **actor.stamp("unblocked_by"),
        )
        card.pin_blocked = False
        card.pin_failed_attempts = 0
        card.updated_at = now
        card.save(update_fields=["pin_blocked", "pin_failed_attempts", "updated_at"])
        _emit(card, "unblocked")
    return changed(card)


def card_pin_try(card: Card, pin: str) -> PinCheck:
    """Check `pin` on a card the caller has locked (a card authorization with a PIN): counted
    like a verification, in the same count. The caller checks `pin_blocked` and `pin_is_set`
    first."""
    return _try(card, pin, via="authorization")


def refusal(check: PinCheck) -> IncorrectPin | PinBlocked:
    """The error a failed check answers: `pin_blocked` when this try blocked the PIN."""
    details = {"remaining_tries": check.remaining_tries}
    if check.blocked:
        return PinBlocked("Three wrong PINs in a row: the PIN is now blocked.", details=details)
    return IncorrectPin(details=details)


def _count_wrong_try(card_id: str, pin: str, via: str) -> IncorrectPin | PinBlocked | None:
    """Count again, after the refused operation was undone, the wrong try it made; the refusal
    to answer is the one of the count as it now stands (another try may have come between)."""
    with transaction.atomic():
        check = _try(lock_card(card_id), pin, via=via)
    return None if check.verified else refusal(check)


def _try(card: Card, pin: str, *, via: str) -> PinCheck:
    """The one place a PIN is checked against the card's count of wrong tries."""
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
        emit_for(
            card, "card.pin_blocked", data={"failed_attempts": card.pin_failed_attempts, "via": via}
        )
    return PinCheck(
        verified=False,
        blocked=card.pin_blocked,
        remaining_tries=MAX_TRIES - card.pin_failed_attempts,
    )


def _require_not_blocked(card: Card) -> None:
    if card.pin_blocked:
        raise PinBlocked(details={"remaining_tries": 0})


def _emit(card: Card, action: str) -> None:
    emit_for(card, "card.pin_changed", data={"action": action})
