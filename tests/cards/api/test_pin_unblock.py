"""PINs cannot be brute-forced, over HTTP in both versions: wrong PINs through verifications,
PIN changes and card authorizations share one count (three block the PIN, `card.pin_blocked`);
the API may unblock a card (and its renewals and replacements) twice in a rolling 30 days, the
third is 422 `pin_unblock_limit` and changes nothing; staff can still unblock in the admin, with
a reason, recorded and logged."""

import re
from datetime import timedelta

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.urls import reverse
from django.utils import timezone

from backoffice.models import ApprovalThreshold
from cards.models import Card, PinUnblock
from cards.services import card_pin_unblock
from core.actors import Actor
from core.exceptions import ValidationFailed
from institutions import scopes as api_scopes
from institutions.keys import split
from tests.authorizations.helpers import declined, funded
from tests.conftest import Api
from tests.factories import issue_key

from .helpers import assert_error, card_of, created, items_of, resource, set_status

PIN = "482915"
WRONG = "591736"
LIMIT_DETAILS = {"limit": 2, "windowDays": 30}


@pytest.fixture
def card_id(api):
    card_id = funded(api).card_id
    assert api.patch(f"/cards/{card_id}/pin", {"pin": PIN}).status_code == 200
    return card_id


def verify(api, card_id, pin):
    return api.post(f"/cards/{card_id}/pin-verifications", {"pin": pin})


def unblock(api, card_id):
    return api.patch(f"/cards/{card_id}/pin", {"blocked": False})


def pin_state(api, card_id) -> dict:
    return card_of(api, card_id)["pin"]


def events(api, type, card_id) -> list:
    return [e["data"] for e in items_of(api, "/events", type=type, objectId=card_id, limit=100)]


def block(api, card_id) -> None:
    """Three wrong verifications: the third blocks the PIN."""
    for remaining in (2, 1, 0):
        body = created(verify(api, card_id, WRONG), api.version)
        assert (body["verified"], body["remainingTries"]) == (False, remaining)
    assert pin_state(api, card_id) == {"set": True, "blocked": True, "remainingTries": 0}


def unblocked(api, card_id) -> None:
    body = resource(unblock(api, card_id), api.version)
    assert body == {"cardId": card_id, "set": True, "blocked": False, "remainingTries": 3}


def assert_capped(api, card_id) -> None:
    """The API's third unblock in 30 days: 422, and nothing changed."""
    unblocks = PinUnblock.objects.count()
    pin_events = events(api, "card.pin_changed", card_id)
    assert_error(unblock(api, card_id), api.version, 422, "pin_unblock_limit", LIMIT_DETAILS)
    assert pin_state(api, card_id) == {"set": True, "blocked": True, "remainingTries": 0}
    assert PinUnblock.objects.count() == unblocks
    assert events(api, "card.pin_changed", card_id) == pin_events


def age_unblocks(days: float, **filters) -> None:
    PinUnblock.objects.filter(**filters).update(created_at=timezone.now() - timedelta(days=days))


def test_three_wrong_tries_block_and_emit_card_pin_blocked(api, card_id):
    block(api, card_id)
    assert events(api, "card.pin_blocked", card_id) == [
        {"failedAttempts": 3, "via": "pin_verification"}
    ]
    # The existing event stays as it was.
    assert {"action": "blocked"} in events(api, "card.pin_changed", card_id)
    assert_error(verify(api, card_id, PIN), api.version, 422, "pin_blocked", {"remainingTries": 0})


def test_the_api_unblocks_twice_in_30_days_then_422(api, card_id):
    for _ in range(2):
        block(api, card_id)
        unblocked(api, card_id)
        assert created(verify(api, card_id, PIN), api.version)["verified"] is True
    block(api, card_id)
    assert_capped(api, card_id)
    # Still blocked: even the right PIN is refused.
    assert_error(verify(api, card_id, PIN), api.version, 422, "pin_blocked", {"remainingTries": 0})
    recorded = PinUnblock.objects.filter(card_id=card_id).order_by("id")
    prefix, _ = split(api.key)
    assert [(u.unblocked_by_api_key.prefix, u.unblocked_by_user_id) for u in recorded] == [
        (prefix, None),
        (prefix, None),
    ]
    assert events(api, "card.pin_changed", card_id).count({"action": "unblocked"}) == 2
    assert len(events(api, "card.pin_blocked", card_id)) == 3


def test_unblocking_a_pin_that_is_not_blocked_does_not_count(api, card_id):
    for _ in range(3):
        unblocked(api, card_id)
    assert PinUnblock.objects.count() == 0
    block(api, card_id)
    unblocked(api, card_id)
    assert PinUnblock.objects.count() == 1


def test_after_30_days_the_api_may_unblock_again(api, card_id):
    for _ in range(2):
        block(api, card_id)
        unblocked(api, card_id)
    block(api, card_id)
    assert_capped(api, card_id)
    # The oldest unblock is one second short of 30 days old: still within the window.
    oldest = PinUnblock.objects.order_by("id").first()
    age_unblocks(30 - 1 / 86400, pk=oldest.pk)
    assert_capped(api, card_id)
    age_unblocks(30, pk=oldest.pk)
    unblocked(api, card_id)
    # Two within the window again (the newest of the first two and this one).
    block(api, card_id)
    assert_capped(api, card_id)


def test_the_cap_counts_per_card_chain(api, card_id):
    for _ in range(2):
        block(api, card_id)
        unblocked(api, card_id)
    block(api, card_id)
    # A replacement carries the blocked PIN over: its unblock is the chain's third.
    replacement = created(
        api.post(f"/cards/{card_id}/replacements", {"reason": "damaged"}), api.version
    )
    assert replacement["pin"] == {"set": True, "blocked": True, "remainingTries": 0}
    assert_capped(api, replacement["cardId"])
    renewal = created(api.post(f"/cards/{replacement['cardId']}/renewals", {}), api.version)
    assert_capped(api, renewal["cardId"])
    # Once the window has passed, the chain's newest card may be unblocked again.
    age_unblocks(31)
    unblocked(api, renewal["cardId"])
    assert PinUnblock.objects.order_by("-id").first().lineage_id == card_id


def test_the_old_card_of_a_chain_cannot_be_unblocked(api, card_id):
    block(api, card_id)
    successor = created(api.post(f"/cards/{card_id}/renewals", {}), api.version)
    assert_error(
        unblock(api, card_id),
        api.version,
        422,
        "card_not_active",
        {"cardId": card_id, "status": "closed"},
    )
    assert pin_state(api, successor["cardId"])["blocked"] is True


def test_unblocking_needs_the_cards_pin_scope(api, institution, card_id):
    block(api, card_id)
    scopes = [scope for scope in api_scopes.ALL if scope != api_scopes.CARDS_PIN]
    without = Api(api.version, issue_key(institution, scopes=scopes)[1])
    assert_error(
        unblock(without, card_id),
        api.version,
        403,
        "permission_denied",
        {"requiredScope": "cards:pin"},
    )
    assert pin_state(api, card_id)["blocked"] is True
    assert PinUnblock.objects.count() == 0


def test_wrong_pins_through_authorizations_and_verifications_count_together(api):
    card_id = funded(api).card_id
    assert api.patch(f"/cards/{card_id}/pin", {"pin": PIN}).status_code == 200
    # Two wrong PINs at a terminal, one through the API: blocked.
    for remaining in (2, 1):
        body = declined(api, card_id, 100, "incorrect_pin", pin=WRONG)
        assert body["declineDetails"] == {"remainingTries": remaining}
    assert pin_state(api, card_id)["remainingTries"] == 1
    body = created(verify(api, card_id, WRONG), api.version)
    assert (body["verified"], body["pinBlocked"]) == (False, True)
    assert events(api, "card.pin_blocked", card_id) == [
        {"failedAttempts": 3, "via": "pin_verification"}
    ]
    declined(api, card_id, 100, "pin_blocked", pin=PIN)
    # And the other way round: two through the API, the third at a terminal.
    unblocked(api, card_id)
    for _ in range(2):
        assert created(verify(api, card_id, WRONG), api.version)["verified"] is False
    declined(api, card_id, 100, "pin_blocked", pin=WRONG)
    assert pin_state(api, card_id) == {"set": True, "blocked": True, "remainingTries": 0}
    assert events(api, "card.pin_blocked", card_id)[0] == {
        "failedAttempts": 3,
        "via": "authorization",
    }


def test_a_wrong_current_pin_counts_with_the_others(api, card_id):
    created(verify(api, card_id, WRONG), api.version)
    declined(api, card_id, 100, "incorrect_pin", pin=WRONG)
    response = api.patch(f"/cards/{card_id}/pin", {"pin": "730264", "currentPin": WRONG})
    assert_error(response, api.version, 422, "pin_blocked", {"remainingTries": 0})
    assert events(api, "card.pin_blocked", card_id) == [{"failedAttempts": 3, "via": "pin_change"}]
    set_status(api, card_id, "suspended")  # the block holds whatever the status
    assert pin_state(api, card_id)["blocked"] is True


# --- staff, in the admin ---------------------------------------------------------------------
CHANGELIST = "admin:cards_card_changelist"
HIDDEN_INPUT = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')


def staff_unblock(client, card_id, reason):
    """Choose "Unblock PIN" for the card, then submit its confirmation page with `reason`."""
    page = client.post(
        reverse(CHANGELIST),
        {"action": "unblock_pins", "index": "0", "_selected_action": [card_id]},
    )
    assert page.status_code == 200
    assert b"Unblock the PIN of 1 card(s)" in page.content
    data = {}
    for name, value in HIDDEN_INPUT.findall(page.content.decode()):
        data.setdefault(name, []).append(value)
    data.pop("csrfmiddlewaretoken", None)
    data["reason"] = reason
    return client.post(reverse(CHANGELIST), data, follow=True)


def test_staff_unblock_beyond_the_cap_with_a_reason(api, card_id, admin_client, admin_user):
    # The bank lets one staff user unblock a card's PIN alone up to ten times in 30 days
    # (without a threshold each unblock waits for a second user: tests/backoffice/
    # test_four_eyes_thresholds.py).
    ApprovalThreshold.objects.create(
        institution=Card.objects.get(pk=card_id).institution, kind="pin_unblock", up_to=10
    )
    for _ in range(2):
        block(api, card_id)
        unblocked(api, card_id)
    block(api, card_id)
    assert_capped(api, card_id)
    # Without a reason: the page again, nothing changed.
    response = staff_unblock(admin_client, card_id, "   ")
    assert response.context["form"].errors == {"reason": ["This field is required."]}
    assert pin_state(api, card_id)["blocked"] is True
    assert not LogEntry.objects.exists()
    reason = "Cardholder called, identity checked"
    response = staff_unblock(admin_client, card_id, reason)
    assert [str(m) for m in response.context["messages"]] == [
        "Made 1 change(s) at once (within the institution's approval threshold, or lowering a "
        "limit)."
    ]
    assert pin_state(api, card_id) == {"set": True, "blocked": False, "remainingTries": 3}
    assert created(verify(api, card_id, PIN), api.version)["verified"] is True
    latest = PinUnblock.objects.order_by("-id").first()
    assert (latest.unblocked_by_user, latest.unblocked_by_api_key, latest.reason) == (
        admin_user,
        None,
        reason,
    )
    page = admin_client.get(reverse("admin:cards_pinunblock_change", args=[latest.pk]))
    assert page.status_code == 200 and reason in page.content.decode()
    entry = LogEntry.objects.get(object_id=card_id)
    assert (entry.action_flag, entry.user, entry.content_type.model) == (CHANGE, admin_user, "card")
    assert f"reason: “{reason}”" in entry.get_change_message()
    assert events(api, "card.pin_changed", card_id)[0] == {"action": "unblocked"}
    # Staff again, still beyond the cap; the API stays capped (staff unblocks count too).
    block(api, card_id)
    assert_capped(api, card_id)
    staff_unblock(admin_client, card_id, "Second call, checked again")
    assert pin_state(api, card_id)["blocked"] is False
    assert PinUnblock.objects.filter(unblocked_by_user=admin_user).count() == 2
    # A PIN that is not blocked is left as it is, and nothing is recorded.
    response = staff_unblock(admin_client, card_id, "By mistake")
    assert [str(m) for m in response.context["messages"]] == [
        f"PIN not blocked, left as it was: {card_id}."
    ]
    assert PinUnblock.objects.count() == 4
    # The unblocks are visible to staff, per card chain.
    listed = admin_client.get(reverse("admin:cards_pinunblock_changelist"), {"lineage": card_id})
    assert listed.context["cl"].result_count == 4
    page = admin_client.get(reverse("admin:cards_card_change", args=[card_id]))
    assert b"4 unblock(s) of this card chain" in page.content
    assert Card.objects.get(pk=card_id).pin_failed_attempts == 0


def test_staff_must_give_a_reason_to_the_service(api, card_id, admin_user):
    block(api, card_id)
    with pytest.raises(ValidationFailed) as refused:
        card_pin_unblock(card=Card.objects.get(pk=card_id), actor=Actor(user=admin_user))
    assert refused.value.details == {"reason": "Staff must say why they unblock a PIN."}
    assert pin_state(api, card_id)["blocked"] is True
    assert PinUnblock.objects.count() == 0
