"""PINs over HTTP, in both versions: set, change (with the current PIN), verify, three wrong
tries block, unblock. A wrong try is refused and still counted (the count survives the 422),
weak PINs are refused, and no PIN ever comes back in a response."""

import pytest

from .helpers import (
    account,
    assert_error,
    assert_validation_error,
    card_of,
    created,
    customer,
    issue,
    new_key,
    resource,
    set_status,
)

PIN = "482915"
NEW_PIN = "730264"
WRONG = "591736"


@pytest.fixture
def card(api):
    ada = customer(api)
    return issue(api, account(api, ada), ada, status="active")


class Responses:
    """Every response of a test, to search them for a PIN at the end."""

    def __init__(self):
        self.bodies: list[bytes] = []

    def __call__(self, response):
        self.bodies.append(response.content)
        return response


@pytest.fixture
def seen():
    return Responses()


def set_pin(api, card_id, pin, current=None, **kwargs):
    body = {"pin": pin} | ({"currentPin": current} if current is not None else {})
    return api.patch(f"/cards/{card_id}/pin", body, **kwargs)


def verify(api, card_id, pin, **kwargs):
    return api.post(f"/cards/{card_id}/pin-verifications", {"pin": pin}, **kwargs)


def pin_state(api, card_id) -> dict:
    return card_of(api, card_id)["pin"]


def verification(card_id, verified, blocked, remaining) -> dict:
    return {
        "cardId": card_id,
        "verified": verified,
        "pinBlocked": blocked,
        "remainingTries": remaining,
    }


def test_set_verify_change(api, card, seen):
    card_id = card["cardId"]
    assert pin_state(api, card_id) == {"set": False, "blocked": False, "remainingTries": 3}
    # No PIN yet: nothing to verify against.
    assert_error(
        seen(verify(api, card_id, PIN)), api.version, 422, "incorrect_pin", {"pinSet": False}
    )
    body = resource(seen(set_pin(api, card_id, PIN)), api.version)
    assert body == {"cardId": card_id, "set": True, "blocked": False, "remainingTries": 3}
    assert pin_state(api, card_id) == {"set": True, "blocked": False, "remainingTries": 3}
    assert created(seen(verify(api, card_id, PIN)), api.version) == verification(
        card_id, True, False, 3
    )
    # Changing a PIN that is set needs the current one.
    assert_validation_error(
        seen(set_pin(api, card_id, NEW_PIN)),
        api.version,
        {"currentPin": "Required to change a PIN that is set."},
    )
    body = resource(seen(set_pin(api, card_id, NEW_PIN, current=PIN)), api.version)
    assert body == {"cardId": card_id, "set": True, "blocked": False, "remainingTries": 3}
    assert created(seen(verify(api, card_id, NEW_PIN)), api.version)["verified"] is True
    assert created(seen(verify(api, card_id, PIN)), api.version) == verification(
        card_id, False, False, 2
    )
    for response in seen.bodies:
        for pin in (PIN, NEW_PIN):
            assert pin.encode() not in response


def test_three_wrong_verifications_block_and_unblock(api, card, seen):
    card_id = card["cardId"]
    assert set_pin(api, card_id, PIN).status_code == 200
    # Each wrong try is answered and counted, request after request.
    for remaining in (2, 1):
        body = created(seen(verify(api, card_id, WRONG)), api.version)
        assert body == verification(card_id, False, False, remaining)
        assert pin_state(api, card_id) == {
            "set": True,
            "blocked": False,
            "remainingTries": remaining,
        }
    body = created(seen(verify(api, card_id, WRONG)), api.version)
    assert body == verification(card_id, False, True, 0)
    assert pin_state(api, card_id) == {"set": True, "blocked": True, "remainingTries": 0}
    # Blocked: even the right PIN is refused, and so is a change.
    assert_error(
        seen(verify(api, card_id, PIN)), api.version, 422, "pin_blocked", {"remainingTries": 0}
    )
    assert_error(
        seen(set_pin(api, card_id, NEW_PIN, current=PIN)),
        api.version,
        422,
        "pin_blocked",
        {"remainingTries": 0},
    )
    # Unblock: three tries again, the same PIN.
    body = resource(seen(api.patch(f"/cards/{card_id}/pin", {"blocked": False})), api.version)
    assert body == {"cardId": card_id, "set": True, "blocked": False, "remainingTries": 3}
    assert created(seen(verify(api, card_id, PIN)), api.version) == verification(
        card_id, True, False, 3
    )
    # Unblocking a PIN that is not blocked changes nothing.
    body = resource(api.patch(f"/cards/{card_id}/pin", {"blocked": False}), api.version)
    assert body == {"cardId": card_id, "set": True, "blocked": False, "remainingTries": 3}
    for response in seen.bodies:
        assert PIN.encode() not in response and WRONG.encode() not in response


def test_a_right_pin_resets_the_count(api, card):
    card_id = card["cardId"]
    assert set_pin(api, card_id, PIN).status_code == 200
    for _ in range(2):
        assert created(verify(api, card_id, WRONG), api.version)["verified"] is False
    assert pin_state(api, card_id)["remainingTries"] == 1
    assert created(verify(api, card_id, PIN), api.version) == verification(card_id, True, False, 3)
    assert pin_state(api, card_id)["remainingTries"] == 3
    # So two more wrong tries do not block it.
    for remaining in (2, 1):
        assert created(verify(api, card_id, WRONG), api.version)["remainingTries"] == remaining
    assert pin_state(api, card_id)["blocked"] is False


def test_wrong_current_pin_is_422_and_still_counted(api, card, seen):
    card_id = card["cardId"]
    assert set_pin(api, card_id, PIN).status_code == 200
    for remaining in (2, 1):
        assert_error(
            seen(set_pin(api, card_id, NEW_PIN, current=WRONG)),
            api.version,
            422,
            "incorrect_pin",
            {"remainingTries": remaining},
        )
        # The refusal did not roll the try back.
        assert pin_state(api, card_id)["remainingTries"] == remaining
    assert_error(
        seen(set_pin(api, card_id, NEW_PIN, current=WRONG)),
        api.version,
        422,
        "pin_blocked",
        {"remainingTries": 0},
        message="Three wrong PINs in a row: the PIN is now blocked.",
    )
    assert pin_state(api, card_id) == {"set": True, "blocked": True, "remainingTries": 0}
    # The PIN did not change: after unblocking, the old PIN is the one that verifies.
    assert api.patch(f"/cards/{card_id}/pin", {"blocked": False}).status_code == 200
    assert created(verify(api, card_id, NEW_PIN), api.version)["verified"] is False
    assert created(verify(api, card_id, PIN), api.version)["verified"] is True
    for response in seen.bodies:
        for pin in (PIN, NEW_PIN, WRONG):
            assert pin.encode() not in response


def test_a_replayed_wrong_try_counts_once(api, card):
    card_id = card["cardId"]
    assert set_pin(api, card_id, PIN).status_code == 200
    key = new_key()
    first = verify(api, card_id, WRONG, idempotency_key=key)
    replay = verify(api, card_id, WRONG, idempotency_key=key)
    assert (replay.status_code, replay.content) == (first.status_code, first.content)
    assert replay["Idempotent-Replayed"] == "true"
    assert pin_state(api, card_id)["remainingTries"] == 2
    key = new_key()
    first = set_pin(api, card_id, NEW_PIN, current=WRONG, idempotency_key=key)
    replay = set_pin(api, card_id, NEW_PIN, current=WRONG, idempotency_key=key)
    assert first.status_code == replay.status_code == 422
    assert replay.content == first.content
    assert pin_state(api, card_id)["remainingTries"] == 1


def test_weak_pins_are_refused(api, card):
    for weak in ("1111", "0000", "1234", "9876", "123456", "7890", "3210", "999999", "890123"):
        response = set_pin(api, card["cardId"], weak)
        assert_validation_error(
            response, api.version, {"pin": "Too easy to guess: repeated or consecutive digits."}
        )
        assert weak.encode() not in response.content
    assert pin_state(api, card["cardId"])["set"] is False
    # Not weak: a step that is not one up or one down somewhere.
    current = None
    for fine in ("1235", "2468", "1212"):
        assert set_pin(api, card["cardId"], fine, current=current).status_code == 200
        current = fine
    assert created(verify(api, card["cardId"], "1212"), api.version)["verified"] is True


def test_malformed_pins_and_bodies(api, card):
    card_id = card["cardId"]
    path = f"/cards/{card_id}/pin"
    for pin in ("123", "1234567890123", "12a4", ""):
        response = api.patch(path, {"pin": pin})
        assert response.status_code == 400, (pin, response.content)
        error = response.json()["error"] if api.version == "v1" else response.json()
        assert error["code"] == "validation_error"
        assert list(error["details"]) == ["pin"]
    assert_validation_error(
        api.patch(path, {"pin": 482915}), api.version, {"pin": "Not a valid string."}
    )
    assert_validation_error(api.patch(path, {}), api.version, {"pin": "This field is required."})
    refusal = {"body": 'To unblock send exactly {"blocked": false}.'}
    assert_validation_error(api.patch(path, {"blocked": True}), api.version, refusal)
    assert_validation_error(api.patch(path, {"blocked": False, "pin": PIN}), api.version, refusal)
    assert_validation_error(
        api.post(f"/cards/{card_id}/pin-verifications", {}),
        api.version,
        {"pin": "This field is required."},
    )
    assert pin_state(api, card_id) == {"set": False, "blocked": False, "remainingTries": 3}


def test_no_pin_operation_on_a_closed_card(api, card):
    card_id = card["cardId"]
    assert set_pin(api, card_id, PIN).status_code == 200
    assert set_status(api, card_id, "closed").status_code == 200
    for response in (
        set_pin(api, card_id, NEW_PIN, current=PIN),
        verify(api, card_id, PIN),
        api.patch(f"/cards/{card_id}/pin", {"blocked": False}),
    ):
        assert_error(
            response, api.version, 422, "card_not_active", {"cardId": card_id, "status": "closed"}
        )


def test_pin_works_on_an_inactive_and_a_suspended_card(api):
    ada = customer(api)
    acc = account(api, ada)
    for status in ("inactive", "suspended"):
        card = issue(api, acc, ada, status="active" if status == "suspended" else "inactive")
        if status == "suspended":
            assert set_status(api, card["cardId"], "suspended").status_code == 200
        assert set_pin(api, card["cardId"], PIN).status_code == 200
        assert created(verify(api, card["cardId"], PIN), api.version)["verified"] is True


def test_v1_post_sets_the_pin(api_v1):
    ada = customer(api_v1)
    card = issue(api_v1, account(api_v1, ada), ada)
    response = api_v1.post(f"/cards/{card['cardId']}/pin", {"pin": PIN})
    assert resource(response, "v1") == {
        "cardId": card["cardId"],
        "set": True,
        "blocked": False,
        "remainingTries": 3,
    }
    assert created(verify(api_v1, card["cardId"], PIN), "v1")["verified"] is True


def test_pin_of_another_institutions_card_is_404(api, other_api):
    theirs = customer(other_api)
    their_card = issue(other_api, account(other_api, theirs), theirs)
    assert_error(set_pin(api, their_card["cardId"], PIN), api.version, 404, "not_found")
    assert_error(verify(api, their_card["cardId"], PIN), api.version, 404, "not_found")
    assert pin_state(other_api, their_card["cardId"])["set"] is False
