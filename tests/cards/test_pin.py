"""PINs (`card_pin_set`, `card_pin_verify`, `card_pin_unblock`): set, change with the current
PIN, three wrong tries block, unblock; stored only as a salted keyed hash."""

import hashlib
import hmac

import pytest
from django.conf import settings

from cards.models import Card
from cards.secrets import pin_matches
from cards.services import card_pin_set, card_pin_unblock, card_pin_verify
from cards.services.pin import PinCheck, refusal
from core import operations
from core.actors import SYSTEM
from core.exceptions import CardNotActive, IncorrectPin, PinBlocked, ValidationFailed

from .helpers import card_events, force_status, fresh_card, make_institution, new_card, refused

pytestmark = pytest.mark.django_db

S = Card.Status
VERIFIED = PinCheck(verified=True, blocked=False, remaining_tries=3)


@pytest.fixture
def card():
    return new_card(make_institution(), status=S.ACTIVE)


def set_pin(card, pin, current=None):
    return card_pin_set(card=card, pin=pin, current_pin=current)


def change_pin(card, pin, current):
    """As every entry point calls it: one operation, which keeps the wrong try of a refused
    change (`core.operations.keep_if_refused`)."""
    return operations.run(card_pin_set, actor=SYSTEM, card=card, pin=pin, current_pin=current)


def verify(card, pin):
    return card_pin_verify(card=card, pin=pin)


def pin_state(card) -> tuple:
    stored = fresh_card(card)
    return stored.pin_hash, stored.pin_failed_attempts, stored.pin_blocked


def pin_events(card) -> list[str]:
    return [data["action"] for _, data in card_events(card, "card.pin_changed")]


def test_a_first_pin_is_set_without_a_current_pin(card):
    assert set_pin(card, "1234") == VERIFIED
    stored = fresh_card(card)
    assert stored.pin_hash and pin_matches(stored.pin_hash, "1234")
    assert not pin_matches(stored.pin_hash, "1235")
    assert (stored.pin_failed_attempts, stored.pin_blocked) == (0, False)
    assert stored.pin_changed_at is not None
    assert pin_events(card) == ["set"]


def test_changing_a_pin_needs_the_current_one(card):
    set_pin(card, "1234")
    before = pin_state(card)
    with refused(ValidationFailed) as excinfo:
        set_pin(card, "9999")
    assert list(excinfo.value.details) == ["current_pin"]
    assert pin_state(card) == before

    assert set_pin(card, "9999", current="1234") == VERIFIED
    assert verify(card, "9999").verified
    assert not verify(card, "1234").verified
    assert pin_events(card) == ["set", "changed"]


def test_a_wrong_current_pin_counts_a_try_and_changes_nothing_else(card):
    set_pin(card, "1234")
    stored_hash = fresh_card(card).pin_hash
    with pytest.raises(IncorrectPin) as excinfo:
        change_pin(card, "9999", current="0000")
    assert (excinfo.value.status, excinfo.value.details) == (422, {"remaining_tries": 2})
    assert pin_state(card) == (stored_hash, 1, False)
    assert verify(card, "1234").verified  # still the old PIN; the right one resets the count
    assert pin_state(card) == (stored_hash, 0, False)
    assert pin_events(card) == ["set"]


def test_a_right_pin_resets_the_wrong_tries(card):
    set_pin(card, "1234")
    assert verify(card, "1111") == PinCheck(verified=False, blocked=False, remaining_tries=2)
    assert verify(card, "2222") == PinCheck(verified=False, blocked=False, remaining_tries=1)
    assert verify(card, "1234") == VERIFIED
    assert pin_state(card)[1:] == (0, False)
    assert verify(card, "3333").remaining_tries == 2  # counting starts over


def test_three_wrong_tries_in_a_row_block_the_pin(card):
    set_pin(card, "1234")
    verify(card, "1111")
    verify(card, "2222")
    third = verify(card, "3333")
    assert third == PinCheck(verified=False, blocked=True, remaining_tries=0)
    assert pin_state(card)[1:] == (3, True)
    assert pin_events(card) == ["set", "blocked"]
    assert isinstance(refusal(third), PinBlocked)

    for attempt in ("1234", "4444"):  # not even the right PIN gets through, and nothing counts
        with refused(PinBlocked) as excinfo:
            verify(card, attempt)
        assert (excinfo.value.status, excinfo.value.code) == (422, "pin_blocked")
    with refused(PinBlocked):
        set_pin(card, "5555", current="1234")


def test_wrong_current_pins_block_too(card):
    set_pin(card, "1234")
    for remaining in (2, 1):
        with pytest.raises(IncorrectPin) as excinfo:
            change_pin(card, "5555", current="0000")
        assert excinfo.value.details == {"remaining_tries": remaining}
    with pytest.raises(PinBlocked) as excinfo:
        change_pin(card, "5555", current="0000")
    assert excinfo.value.details == {"remaining_tries": 0}
    assert pin_state(card)[1:] == (3, True)
    assert pin_events(card) == ["set", "blocked"]
    with refused(PinBlocked):
        verify(card, "1234")


def test_unblocking_resets_the_tries_and_keeps_the_pin(card):
    set_pin(card, "1234")
    for wrong in ("1111", "2222", "3333"):
        verify(card, wrong)
    stored_hash = fresh_card(card).pin_hash
    card_pin_unblock(card=card, actor=SYSTEM)
    assert pin_state(card) == (stored_hash, 0, False)
    assert verify(card, "1234") == VERIFIED
    assert pin_events(card) == ["set", "blocked", "unblocked"]

    card_pin_unblock(card=card, actor=SYSTEM)  # not blocked: nothing changes, nothing emitted
    assert pin_events(card) == ["set", "blocked", "unblocked"]


def test_verifying_without_a_pin_set_is_refused(card):
    with refused(IncorrectPin) as excinfo:
        verify(card, "1234")
    assert excinfo.value.details == {"pin_set": False}


def test_a_wrong_pin_gives_its_refusal_with_the_remaining_tries(card):
    set_pin(card, "1234")
    error = refusal(verify(card, "0000"))
    assert isinstance(error, IncorrectPin)
    assert error.details == {"remaining_tries": 2}


def test_the_pin_is_stored_only_as_a_salted_keyed_hash():
    fi = make_institution()
    first, second = new_card(fi), new_card(fi)
    pin = "907153"
    set_pin(first, pin)
    set_pin(second, pin)
    one, two = fresh_card(first).pin_hash, fresh_card(second).pin_hash
    assert pin not in one and pin not in two
    assert one != two  # salted: equal PINs do not show
    salt, _, digest = one.partition("$")
    assert len(salt) == 32 and len(digest) == 64
    assert digest != hashlib.sha256(f"{salt}{pin}".encode()).hexdigest()
    assert digest != hashlib.sha256(pin.encode()).hexdigest()
    keyed = hmac.new(settings.PIN_KEY.encode(), f"{salt}{pin}".encode(), hashlib.sha256)
    assert digest == keyed.hexdigest()


@pytest.mark.parametrize("status", [S.CLOSED, S.LOST, S.STOLEN, S.EXPIRED])
def test_pin_operations_on_a_final_card_are_refused(card, status):
    set_pin(card, "1234")
    card = force_status(card, status)
    for operation in (
        lambda: set_pin(card, "9999", current="1234"),
        lambda: verify(card, "1234"),
        lambda: card_pin_unblock(card=card, actor=SYSTEM),
    ):
        with refused(CardNotActive) as excinfo:
            operation()
        assert excinfo.value.details == {"card_id": card.pk, "status": status}


@pytest.mark.parametrize("status", [S.INACTIVE, S.SUSPENDED])
def test_a_live_card_that_is_not_active_takes_a_pin(card, status):
    card = force_status(card, status)
    assert set_pin(card, "1234") == VERIFIED
    assert verify(card, "1234").verified
