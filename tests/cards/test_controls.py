"""Security settings (`card_security_settings_set`): booleans and lists, lists sorted without
duplicates, an event only when something changed."""

import pytest

from cards.models import Card
from cards.services import card_security_settings_set
from core.exceptions import CardNotActive

from .helpers import card_events, force_status, fresh_card, make_institution, new_card, refused

pytestmark = pytest.mark.django_db

S = Card.Status
FIELDS = (
    "ecommerce",
    "contactless",
    "atm",
    "international",
    "magstripe",
    "blocked_mccs",
    "blocked_countries",
)


@pytest.fixture
def card():
    return new_card(make_institution(), status=S.ACTIVE)


def controls(card) -> dict:
    stored = fresh_card(card)
    return {field: getattr(stored, field) for field in FIELDS}


def change(card, **changes):
    return card_security_settings_set(card=card, changes=changes)


def changed_fields(card) -> list[list[str]]:
    return [
        data["changedFields"] for _, data in card_events(card, "card.security_settings_changed")
    ]


def test_a_new_card_has_the_default_controls(card):
    assert controls(card) == {
        "ecommerce": True,
        "contactless": True,
        "atm": True,
        "international": True,
        "magstripe": False,
        "blocked_mccs": [],
        "blocked_countries": [],
    }


def test_changes_are_stored_and_emitted_with_the_changed_fields_only(card):
    change(card, ecommerce=False, contactless=True, magstripe=True, blocked_countries=["RUS"])
    assert controls(card) == {
        "ecommerce": False,
        "contactless": True,
        "atm": True,
        "international": True,
        "magstripe": True,
        "blocked_mccs": [],
        "blocked_countries": ["RUS"],
    }
    assert changed_fields(card) == [["blockedCountries", "ecommerce", "magstripe"]]


def test_lists_are_sorted_without_duplicates_and_replace_the_stored_list(card):
    change(card, blocked_mccs=["7995", "5967", "7995", "4829"])
    assert controls(card)["blocked_mccs"] == ["4829", "5967", "7995"]
    change(card, blocked_mccs=["6011"])
    assert controls(card)["blocked_mccs"] == ["6011"]
    change(card, blocked_mccs=[])
    assert controls(card)["blocked_mccs"] == []
    assert changed_fields(card) == [["blockedMccs"]] * 3


def test_no_change_emits_nothing(card):
    change(card, atm=False, blocked_countries=["USA", "GBR"])
    updated_at = fresh_card(card).updated_at
    change(card, atm=False, blocked_countries=["GBR", "USA", "GBR"])  # the same, reordered
    change(card)
    assert fresh_card(card).updated_at == updated_at
    assert changed_fields(card) == [["atm", "blockedCountries"]]


def test_unknown_settings_are_a_programming_error(card):
    with pytest.raises(ValueError, match="Not security settings"):
        change(card, limit_daily=1)


@pytest.mark.parametrize("status", [S.INACTIVE, S.SUSPENDED])
def test_a_live_card_that_is_not_active_takes_changes(card, status):
    card = force_status(card, status)
    change(card, international=False)
    assert controls(card)["international"] is False


@pytest.mark.parametrize("status", [S.CLOSED, S.LOST, S.STOLEN, S.EXPIRED])
def test_the_controls_of_a_final_card_do_not_change(card, status):
    card = force_status(card, status)
    with refused(CardNotActive) as excinfo:
        change(card, atm=False)
    assert excinfo.value.details == {"card_id": card.pk, "status": status}
