"""A row's actions as buttons on its page (issue 33 item 2; backoffice.kit.ActionsOnlyModelAdmin,
docs/back-office.md "Actions on a page"): the button leads to the action's own confirmation
(its reason), runs it as the list's action would, and comes back to the page; a user who may
not run an action sees no button for it."""

import re

import pytest
from django.urls import reverse

from cards.models import Card
from monitoring.models import MonitoringAlert
from tests.backoffice.helpers import populated, staff
from tests.cards.helpers import make_institution
from tests.staff import sign_in

pytestmark = pytest.mark.django_db

BUTTON = re.compile(
    r'<button type="submit" class="[^"]*object-action-button"[^>]*value="([a-z_]+)"'
)


@pytest.fixture
def bank():
    return make_institution()


@pytest.fixture
def world(bank):
    return populated(bank)


def buttons(client, url) -> list[str]:
    response = client.get(url)
    assert response.status_code == 200
    return BUTTON.findall(response.content.decode())


def test_a_card_page_has_its_actions_as_buttons_and_they_run_with_a_reason(client, bank, world):
    sign_in(client, staff("ops", roles=["operations"], institutions=[bank]))
    card_id = world["card"]
    page = reverse("admin:cards_card_change", args=[card_id])

    # An active card with its PIN not blocked: no Activate, no Unblock the PIN.
    assert buttons(client, page) == [
        "suspend_cards",
        "close_cards",
        "change_limits",
        "freeze_cards",
        "block_cards",
    ]
    changelist = reverse("admin:cards_card_changelist")
    pressed = {
        "action": "suspend_cards",
        "_selected_action": card_id,
        "index": "0",
        "return_to_object": card_id,
    }
    confirmation = client.post(changelist, pressed)
    assert confirmation.status_code == 200
    assert 'name="return_to_object"' in confirmation.content.decode()
    assert Card.objects.get(pk=card_id).status == "active"  # nothing yet: the reason first

    done = client.post(
        changelist, {**pressed, "confirm": "yes", "reason": "Lost, said the cardholder."}
    )

    assert (done.status_code, done["Location"]) == (302, page)
    card = Card.objects.get(pk=card_id)
    assert (card.status, card.status_reason) == ("suspended", "Lost, said the cardholder.")
    messages = [str(m) for m in client.get(page).context["messages"]]
    assert any("Suspended 1 card" in m for m in messages), messages


@pytest.mark.parametrize(
    ("role", "model", "key", "expected"),
    [
        (
            "operations",
            "accounts_account",
            "account",
            # An active account: no Unfreeze.
            ["freeze_accounts", "close_accounts", "request_adjustment", "change_overdraft_limit"],
        ),
        ("operations", "accounts_hold", "hold", ["release_holds"]),
        (
            "compliance",
            "monitoring_monitoringalert",
            "alert",
            ["resolve_alerts", "add_notes", "assign_to_me", "assign"],
        ),
        # Support protects a card (an active one: freeze, block), and has no other button.
        ("support", "cards_card", "card", ["freeze_cards", "block_cards"]),
    ],
)
def test_each_page_offers_what_the_role_may_run(client, bank, world, role, model, key, expected):
    sign_in(client, staff(role, roles=[role], institutions=[bank]))
    object_id = MonitoringAlert.objects.get().pk if key == "alert" else world[key]
    assert buttons(client, reverse(f"admin:{model}_change", args=[object_id])) == expected
