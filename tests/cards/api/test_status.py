"""Card status over HTTP, in both versions: every (from, to) pair through PATCH /cards/{cardId}
(the allowed ones move the card and record the reason; every other one is 409
`invalid_state_transition` with `from` and `to` and changes nothing), risk levels, and v1's POST
alias of PATCH."""

import pytest

from tests.accounts.api.helpers import events

from .helpers import (
    STATUSES,
    account,
    assert_error,
    assert_validation_error,
    backdate,
    card_in,
    card_of,
    customer,
    issue,
    resource,
    set_status,
)

# What a client may ask for (docs/design.md section 8): everything else is 409, `expired` is the
# system's.
ALLOWED = {
    "inactive": {"active"},
    "active": {"suspended", "lost", "stolen", "closed"},
    "suspended": {"active", "lost", "stolen", "closed"},
    "lost": set(),
    "stolen": set(),
    "closed": set(),
    "expired": set(),
}


@pytest.fixture
def holder(api):
    ada = customer(api)
    return ada, account(api, ada)


@pytest.mark.parametrize("start", STATUSES)
def test_every_transition_from(api, holder, start):
    ada, acc = holder
    # Forbidden moves change nothing: one card takes all of them.
    card = card_in(api, start, acc, ada)
    for target in STATUSES:
        if target in ALLOWED[start] or target == start:
            continue
        response = set_status(api, card["cardId"], target, reason="try")
        error = assert_error(
            response,
            api.version,
            409,
            "invalid_state_transition",
            {"from": start, "to": target},
        )
        assert error["message"] == f"A card cannot go from {start} to {target}."
    assert card_of(api, card["cardId"]) == card
    # Asking for the status the card has changes nothing (not even the reason).
    unchanged = resource(set_status(api, card["cardId"], start, reason="again"), api.version)
    assert unchanged == card
    # Every allowed move, each on a card of its own, with its reason recorded.
    for target in sorted(ALLOWED[start]):
        card = card_in(api, start, acc, ada)
        response = set_status(api, card["cardId"], target, reason=f"to {target}")
        moved = resource(response, api.version)
        assert (moved["status"], moved["statusReason"]) == (target, f"to {target}")
        assert moved == {
            **card,
            "status": target,
            "statusReason": f"to {target}",
            "updatedAt": moved["updatedAt"],
        }
        assert moved["updatedAt"] > card["updatedAt"]
        assert card_of(api, card["cardId"]) == moved
        [event] = events(api, "card.status_changed", card["cardId"])[:1]
        assert event["data"] == {"from": start, "to": target, "reason": f"to {target}"}


def test_the_whole_walk_of_one_card(api, holder):
    ada, acc = holder
    card = issue(api, acc, ada)
    walk = ["active", "suspended", "active", "suspended", "stolen"]
    for target in walk:
        assert resource(set_status(api, card["cardId"], target), api.version)["status"] == target
    changes = [event["data"] for event in events(api, "card.status_changed", card["cardId"])]
    assert [(c["from"], c["to"]) for c in reversed(changes)] == list(
        zip(["inactive", *walk[:-1]], walk, strict=True)
    )
    assert_error(
        set_status(api, card["cardId"], "active"),
        api.version,
        409,
        "invalid_state_transition",
        {"from": "stolen", "to": "active"},
    )


def test_reason_is_stored_as_status_reason(api, holder):
    ada, acc = holder
    card = issue(api, acc, ada, status="active")
    moved = resource(
        set_status(api, card["cardId"], "suspended", reason="Customer travelling"), api.version
    )
    assert moved["statusReason"] == "Customer travelling"
    # Without a reason the next move clears it.
    back = resource(set_status(api, card["cardId"], "active"), api.version)
    assert back["statusReason"] == ""
    assert_validation_error(
        set_status(api, card["cardId"], "suspended", reason="x" * 501),
        api.version,
        {"reason": "Ensure this field has no more than 500 characters."},
    )
    assert card_of(api, card["cardId"])["status"] == "active"


def test_a_card_past_its_expiry_cannot_be_activated(api, holder):
    ada, acc = holder
    card = issue(api, acc, ada, status="active")
    assert set_status(api, card["cardId"], "suspended").status_code == 200
    backdate(card["cardId"])
    response = set_status(api, card["cardId"], "active")
    assert_error(
        response,
        api.version,
        409,
        "invalid_state_transition",
        {"from": "suspended", "to": "active"},
        message="The card is past its expiry date.",
    )
    assert card_of(api, card["cardId"])["status"] == "suspended"
    # It can still be closed.
    assert resource(set_status(api, card["cardId"], "closed"), api.version)["status"] == "closed"


def test_risk_level(api, holder):
    ada, acc = holder
    card = issue(api, acc, ada)
    assert card["riskLevel"] == "low"
    for level in ("high", "medium", "low", "high"):
        changed = resource(api.patch(f"/cards/{card['cardId']}", {"riskLevel": level}), api.version)
        assert changed["riskLevel"] == level
        assert changed["status"] == "inactive"
    assert card_of(api, card["cardId"])["riskLevel"] == "high"
    [event] = events(api, "card.updated", card["cardId"])[:1]
    assert event["data"] == {"changedFields": ["riskLevel"], "riskLevel": "high"}
    assert_validation_error(
        api.patch(f"/cards/{card['cardId']}", {"riskLevel": "extreme"}),
        api.version,
        {"riskLevel": '"extreme" is not a valid choice.'},
    )
    # Status and risk level at once.
    both = resource(
        api.patch(f"/cards/{card['cardId']}", {"status": "active", "riskLevel": "medium"}),
        api.version,
    )
    assert (both["status"], both["riskLevel"]) == ("active", "medium")
    # A closed card's risk level no longer changes.
    assert set_status(api, card["cardId"], "closed").status_code == 200
    assert_error(
        api.patch(f"/cards/{card['cardId']}", {"riskLevel": "low"}),
        api.version,
        422,
        "card_not_active",
        {"cardId": card["cardId"], "status": "closed"},
    )
    assert card_of(api, card["cardId"])["riskLevel"] == "medium"


def test_a_refused_combined_change_changes_nothing(api, holder):
    ada, acc = holder
    card = issue(api, acc, ada, status="active")
    # Closing works, then the risk level of a closed card is refused: the close is undone too.
    response = api.patch(f"/cards/{card['cardId']}", {"status": "closed", "riskLevel": "high"})
    assert_error(
        response,
        api.version,
        422,
        "card_not_active",
        {"cardId": card["cardId"], "status": "closed"},
    )
    after = card_of(api, card["cardId"])
    assert (after["status"], after["riskLevel"]) == ("active", "low")


def test_invalid_bodies(api, holder):
    ada, acc = holder
    card = issue(api, acc, ada)
    path = f"/cards/{card['cardId']}"
    assert_validation_error(
        api.patch(path, {}),
        api.version,
        {
            "body": "Give `status` (with an optional `reason`) or `riskLevel`."
            if api.version == "v1"
            else "Give `status` (with an optional `reason`), `riskLevel` or `metadata`."
        },
    )
    assert_validation_error(
        api.patch(path, {"reason": "why", "riskLevel": "high"}),
        api.version,
        {"reason": "Only with `status`."},
    )
    assert_validation_error(
        api.patch(path, {"status": "melted"}),
        api.version,
        {"status": '"melted" is not a valid choice.'},
    )
    assert_validation_error(
        api.patch(path, {"status": "active", "pan": "4000020000000000"}),
        api.version,
        {"pan": "Unknown field."},
    )
    assert card_of(api, card["cardId"]) == card


def test_v1_post_is_an_alias_of_patch(api_v1, api_v2):
    ada = customer(api_v1)
    acc = account(api_v1, ada)
    card = issue(api_v1, acc, ada)
    response = api_v1.post(f"/cards/{card['cardId']}", {"status": "active", "reason": "go"})
    moved = resource(response, "v1")
    assert (moved["status"], moved["statusReason"]) == ("active", "go")
    response = api_v1.post(f"/cards/{card['cardId']}", {"riskLevel": "high"})
    assert resource(response, "v1")["riskLevel"] == "high"
    assert_error(
        api_v1.post(f"/cards/{card['cardId']}", {"status": "inactive"}),
        "v1",
        409,
        "invalid_state_transition",
        {"from": "active", "to": "inactive"},
    )
    # v2 has no such alias.
    assert_error(
        api_v2.post(f"/cards/{card['cardId']}", {"status": "suspended"}),
        "v2",
        405,
        "method_not_allowed",
    )
    assert card_of(api_v2, card["cardId"])["status"] == "active"


def test_a_refused_transition_is_replayed_with_its_key(api, holder):
    ada, acc = holder
    card = issue(api, acc, ada)
    key = "5b0e7f43-9d1c-4c69-a3a1-2f0f8f1b9c11"
    first = set_status(api, card["cardId"], "closed", idempotency_key=key)
    assert first.status_code == 409
    # The card becomes active meanwhile; the replay still tells the stored answer.
    assert set_status(api, card["cardId"], "active").status_code == 200
    replay = set_status(api, card["cardId"], "closed", idempotency_key=key)
    assert (replay.status_code, replay.content) == (409, first.content)
    assert replay["Idempotent-Replayed"] == "true"
    assert card_of(api, card["cardId"])["status"] == "active"
