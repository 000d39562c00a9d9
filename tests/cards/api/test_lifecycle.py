"""Renewals, reissues and replacements over HTTP, in both versions. The PAN, CVV and expiry of
old and new card are compared through /sensitive-details (a key with `cards:sensitive`):

| operation   | PAN  | expiry                          | CVV  | new status    | old card           |
|-------------|------|---------------------------------|------|---------------|--------------------|
| renewal     | same | max(old, this month) + validity | new  | old's if live | closed "renewed"   |
| reissue     | same | same                            | same | old's         | closed "reissued"  |
| replacement | new  | this month + validity           | new  | inactive      | lost/stolen/closed |
"""

import pytest

from tests.accounts.api.helpers import events

from .helpers import (
    CREATED,
    DEBIT,
    PREPAID,
    VALIDITY,
    account,
    address,
    assert_error,
    assert_validation_error,
    card_in,
    card_of,
    created,
    customer,
    expire,
    expiry_after,
    issue,
    resource,
    secrets_of,
    sensitive_api,
    set_status,
)

MONTHS = 12 * VALIDITY[PREPAID]
# Fields a successor takes from its predecessor unchanged.
CARRIED = [
    "accountId",
    "customerId",
    "cardProductRid",
    "kind",
    "form",
    "riskLevel",
    "deliveryAddress",
    "primaryCardId",
    "securitySettings",
    "limits",
    "pin",
]


@pytest.fixture
def holder(api):
    ada = customer(api)
    return ada, account(api, ada)


@pytest.fixture
def sensitive(api, institution):
    return sensitive_api(api, institution)


def customised(api, holder, **fields) -> dict:
    """An active card with controls, limits, a risk level and a PIN that are not the
    defaults, so that carrying them over shows."""
    ada, acc = holder
    card = issue(api, acc, ada, status="active", **fields)
    path = f"/cards/{card['cardId']}"
    assert (
        api.patch(f"{path}/security-settings", {"atm": False, "blockedMccs": ["7995"]}).status_code
        == 200
    )
    assert api.patch(f"{path}/limits", {"perTransaction": 777, "dailyCash": 0}).status_code == 200
    assert api.patch(path, {"riskLevel": "high"}).status_code == 200
    assert api.patch(f"{path}/pin", {"pin": "2580"}).status_code == 200
    return card_of(api, card["cardId"])


def lookup(sensitive, pan: str) -> str:
    return resource(sensitive.post("/card-lookups", {"pan": pan}), sensitive.version)["cardId"]


def check_linked(api, old_id: str, new: dict, succession: str) -> dict:
    """Old and new card point at each other; returns the old card as read back."""
    assert (new["predecessorCardId"], new["succession"]) == (old_id, succession)
    assert new["successorCardId"] is None
    old = card_of(api, old_id)
    assert old["successorCardId"] == new["cardId"]
    assert card_of(api, new["cardId"]) == new
    return old


# --- renewals
def test_renewal_keeps_the_pan_with_a_new_expiry_and_cvv(api, holder, sensitive):
    card = customised(api, holder)
    before = secrets_of(sensitive, card["cardId"])
    response = api.post(f"/cards/{card['cardId']}/renewals", {})
    assert response.status_code == CREATED[api.version], response.content
    new = created(response, api.version)
    after = secrets_of(sensitive, new["cardId"])
    assert after["pan"] == before["pan"]
    assert after["cvv"] != before["cvv"]
    assert (before["expiryYear"], before["expiryMonth"]) == expiry_after(MONTHS)
    assert (after["expiryYear"], after["expiryMonth"]) == expiry_after(2 * MONTHS)
    assert (new["expiryYear"], new["expiryMonth"]) == expiry_after(2 * MONTHS)
    assert new["cardId"] != card["cardId"]
    assert (new["status"], new["maskedPan"], new["last4"]) == (
        "active",
        card["maskedPan"],
        card["last4"],
    )
    assert {f: new[f] for f in CARRIED} == {f: card[f] for f in CARRIED}
    assert new["pin"] == {"set": True, "blocked": False, "remainingTries": 3}
    old = check_linked(api, card["cardId"], new, "renewal")
    assert (old["status"], old["statusReason"]) == ("closed", "renewed")
    # The PAN now names the new card; the old card's secrets are no longer readable.
    assert lookup(sensitive, before["pan"]) == new["cardId"]
    assert_error(
        sensitive.get(f"/cards/{card['cardId']}/sensitive-details"),
        api.version,
        422,
        "card_not_active",
        {"cardId": card["cardId"], "status": "closed"},
    )
    # The PIN carried over.
    verified = api.post(f"/cards/{new['cardId']}/pin-verifications", {"pin": "2580"})
    assert created(verified, api.version) == {
        "cardId": new["cardId"],
        "verified": True,
        "pinBlocked": False,
        "remainingTries": 3,
    }
    [event] = events(api, "card.renewed", new["cardId"])
    assert event["data"]["predecessorCardId"] == card["cardId"]


def test_renewal_keeps_a_live_status(api, holder):
    ada, acc = holder
    for status in ("inactive", "suspended"):
        card = card_in(api, status, acc, ada)
        new = created(api.post(f"/cards/{card['cardId']}/renewals", {}), api.version)
        assert new["status"] == status
        assert check_linked(api, card["cardId"], new, "renewal")["status"] == "closed"


def test_renewal_of_an_expired_card(api, holder, sensitive):
    ada, acc = holder
    card = issue(api, acc, ada, status="active")
    pan = secrets_of(sensitive, card["cardId"])["pan"]
    expire(card["cardId"])
    new = created(api.post(f"/cards/{card['cardId']}/renewals", {}), api.version)
    # From this month: the old expiry is in the past.
    assert (new["expiryYear"], new["expiryMonth"]) == expiry_after(MONTHS)
    assert new["status"] == "inactive"
    assert secrets_of(sensitive, new["cardId"])["pan"] == pan
    old = check_linked(api, card["cardId"], new, "renewal")
    assert (old["status"], old["statusReason"]) == ("expired", "validity ended")
    # Renewed once only.
    assert_error(
        api.post(f"/cards/{card['cardId']}/renewals", {}),
        api.version,
        409,
        "invalid_state_transition",
        {"from": "expired", "to": "renewed", "successorCardId": new["cardId"]},
        message="This card already has a successor.",
    )


def test_no_renewal_of_a_final_card(api, holder):
    ada, acc = holder
    for status in ("lost", "stolen", "closed"):
        card = card_in(api, status, acc, ada)
        assert_error(
            api.post(f"/cards/{card['cardId']}/renewals", {}),
            api.version,
            409,
            "invalid_state_transition",
            {"from": status, "to": "renewed"},
        )
        assert card_of(api, card["cardId"]) == card


def test_renewal_to_a_new_address(api, holder):
    ada, acc = holder
    card = issue(api, acc, ada, form="physical", deliveryAddress=address(api.version))
    moved = address(api.version, "040")
    new = created(
        api.post(f"/cards/{card['cardId']}/renewals", {"deliveryAddress": moved}), api.version
    )
    assert new["deliveryAddress"] == {**moved, "line2": None}
    assert card_of(api, card["cardId"])["deliveryAddress"] == card["deliveryAddress"]
    # The other version's country key is refused.
    other = address("v2" if api.version == "v1" else "v1")
    wrong = "countryCode" if api.version == "v1" else "countryId"
    assert_validation_error(
        api.post(f"/cards/{new['cardId']}/renewals", {"deliveryAddress": other}),
        api.version,
        {f"deliveryAddress.{wrong}": "Unknown field."},
    )


def test_a_virtual_card_is_not_delivered(api, holder):
    ada, acc = holder
    card = issue(api, acc, ada)
    for operation, body in (("renewals", {}), ("replacements", {"reason": "damaged"})):
        assert_validation_error(
            api.post(
                f"/cards/{card['cardId']}/{operation}",
                {**body, "deliveryAddress": address(api.version)},
            ),
            api.version,
            {"deliveryAddress": "A virtual card is not delivered: leave this out."},
        )
    assert card_of(api, card["cardId"]) == card


def test_no_renewal_on_a_closed_account(api):
    ada = customer(api)
    acc = account(api, ada)
    card = issue(api, acc, ada, status="active")
    assert api.patch(f"/accounts/{acc}", {"status": "closed"}).status_code == 200
    assert_error(
        api.post(f"/cards/{card['cardId']}/renewals", {}),
        api.version,
        422,
        "account_not_active",
        {"accountId": acc, "status": "closed"},
    )
    assert card_of(api, card["cardId"])["successorCardId"] is None


# --- reissues
def test_reissue_keeps_pan_expiry_and_cvv(api, holder, sensitive):
    card = customised(api, holder, form="physical", deliveryAddress=address(api.version))
    before = secrets_of(sensitive, card["cardId"])
    response = api.post(
        f"/cards/{card['cardId']}/reissues",
        {"embossedName": "Ada King", "reason": "name change"},
    )
    assert response.status_code == CREATED[api.version], response.content
    new = created(response, api.version)
    after = secrets_of(sensitive, new["cardId"])
    assert {k: v for k, v in after.items() if k != "cardId"} == {
        k: v for k, v in before.items() if k != "cardId"
    }
    assert (new["expiryYear"], new["expiryMonth"]) == (card["expiryYear"], card["expiryMonth"])
    assert (new["embossedName"], new["status"]) == ("ADA KING", "active")
    assert {f: new[f] for f in CARRIED} == {f: card[f] for f in CARRIED}
    old = check_linked(api, card["cardId"], new, "reissue")
    assert (old["status"], old["statusReason"]) == ("closed", "reissued: name change")
    assert old["embossedName"] == "ADA LOVELACE"
    assert lookup(sensitive, before["pan"]) == new["cardId"]
    # The damaged plastic of a suspended card: the name stays, the status too.
    ada, acc = holder
    suspended = card_in(
        api, "suspended", acc, ada, form="physical", deliveryAddress=address(api.version)
    )
    again = created(api.post(f"/cards/{suspended['cardId']}/reissues", {}), api.version)
    assert (again["status"], again["embossedName"]) == ("suspended", "ADA LOVELACE")
    assert card_of(api, suspended["cardId"])["statusReason"] == "reissued"


def test_no_reissue_of_a_virtual_card(api, holder):
    ada, acc = holder
    card = issue(api, acc, ada, status="active")
    assert_error(
        api.post(f"/cards/{card['cardId']}/reissues", {}),
        api.version,
        400,
        "validation_error",
        {"form": "virtual"},
        message="A virtual card has no plastic to reissue.",
    )
    assert card_of(api, card["cardId"]) == card


def test_no_reissue_of_a_card_no_longer_live(api, holder):
    ada, acc = holder
    for status in ("expired", "lost", "stolen", "closed"):
        card = card_in(api, status, acc, ada, form="physical", deliveryAddress=address(api.version))
        assert_error(
            api.post(f"/cards/{card['cardId']}/reissues", {}),
            api.version,
            409,
            "invalid_state_transition",
            {"from": status, "to": "reissued"},
        )
        assert card_of(api, card["cardId"]) == card


# --- replacements
@pytest.mark.parametrize(
    ("reason", "old_status"),
    [("lost", "lost"), ("stolen", "stolen"), ("damaged", "closed"), ("compromised", "closed")],
)
def test_replacement_has_a_new_pan(api, holder, sensitive, reason, old_status):
    card = customised(api, holder)
    before = secrets_of(sensitive, card["cardId"])
    response = api.post(f"/cards/{card['cardId']}/replacements", {"reason": reason})
    assert response.status_code == CREATED[api.version], response.content
    new = created(response, api.version)
    after = secrets_of(sensitive, new["cardId"])
    assert after["pan"] != before["pan"]
    assert after["pan"][:6] == before["pan"][:6] == "400002"
    assert new["maskedPan"] == "400002******" + after["pan"][-4:]
    assert (new["expiryYear"], new["expiryMonth"]) == expiry_after(MONTHS)
    assert new["status"] == "inactive"
    assert {f: new[f] for f in CARRIED} == {f: card[f] for f in CARRIED}
    old = check_linked(api, card["cardId"], new, "replacement")
    assert (old["status"], old["statusReason"]) == (old_status, f"replaced: {reason}")
    # Each PAN names its own card.
    assert lookup(sensitive, before["pan"]) == card["cardId"]
    assert lookup(sensitive, after["pan"]) == new["cardId"]
    [event] = events(api, "card.replaced", new["cardId"])
    assert (event["data"]["predecessorCardId"], event["data"]["reason"]) == (
        card["cardId"],
        reason,
    )


def test_replacing_a_card_already_lost(api, holder):
    ada, acc = holder
    card = card_in(api, "lost", acc, ada)
    new = created(
        api.post(f"/cards/{card['cardId']}/replacements", {"reason": "stolen"}), api.version
    )
    old = check_linked(api, card["cardId"], new, "replacement")
    assert (old["status"], old["statusReason"]) == ("lost", "")
    # Replaced once only.
    assert_error(
        api.post(f"/cards/{card['cardId']}/replacements", {"reason": "lost"}),
        api.version,
        409,
        "invalid_state_transition",
        {"from": "lost", "to": "lost", "successorCardId": new["cardId"]},
    )


def test_no_replacement_of_a_closed_or_expired_card(api, holder):
    ada, acc = holder
    for status in ("closed", "expired"):
        card = card_in(api, status, acc, ada)
        assert_error(
            api.post(f"/cards/{card['cardId']}/replacements", {"reason": "damaged"}),
            api.version,
            409,
            "invalid_state_transition",
            {"from": status, "to": "closed"},
        )
        assert card_of(api, card["cardId"]) == card


def test_replacement_reason_is_required_and_known(api, holder):
    ada, acc = holder
    card = issue(api, acc, ada, status="active")
    path = f"/cards/{card['cardId']}/replacements"
    assert_validation_error(api.post(path, {}), api.version, {"reason": "This field is required."})
    assert_validation_error(
        api.post(path, {"reason": "bored"}),
        api.version,
        {"reason": '"bored" is not a valid choice.'},
    )
    assert card_of(api, card["cardId"]) == card


def test_a_debit_replacement_keeps_its_product(api, sensitive):
    ada = customer(api)
    acc = account(api, ada, "CBSFinancialContractTypeAPI")
    card = issue(api, acc, ada, DEBIT, status="active")
    new = created(
        api.post(f"/cards/{card['cardId']}/replacements", {"reason": "compromised"}), api.version
    )
    assert (new["kind"], new["cardProductRid"]) == ("debit", card["cardProductRid"])
    assert secrets_of(sensitive, new["cardId"])["pan"].startswith("400001")
    assert (new["expiryYear"], new["expiryMonth"]) == expiry_after(12 * VALIDITY[DEBIT])


def test_lifecycle_on_unknown_or_foreign_cards(api, other_api):
    theirs = customer(other_api)
    their_card = issue(other_api, account(other_api, theirs), theirs, status="active")
    for operation, body in (
        ("renewals", {}),
        ("reissues", {}),
        ("replacements", {"reason": "lost"}),
    ):
        assert_error(
            api.post(f"/cards/{their_card['cardId']}/{operation}", body),
            api.version,
            404,
            "not_found",
            message="No card with this id.",
        )
    assert card_of(other_api, their_card["cardId"]) == their_card


def test_a_successor_can_be_renewed_in_turn(api, holder, sensitive):
    ada, acc = holder
    card = issue(api, acc, ada, status="active")
    pan = secrets_of(sensitive, card["cardId"])["pan"]
    first = created(api.post(f"/cards/{card['cardId']}/renewals", {}), api.version)
    second = created(api.post(f"/cards/{first['cardId']}/renewals", {}), api.version)
    assert secrets_of(sensitive, second["cardId"])["pan"] == pan
    assert (second["expiryYear"], second["expiryMonth"]) == expiry_after(3 * MONTHS)
    assert card_of(api, first["cardId"])["successorCardId"] == second["cardId"]
    assert second["predecessorCardId"] == first["cardId"]
    assert set_status(api, second["cardId"], "suspended").status_code == 200
