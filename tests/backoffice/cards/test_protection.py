"""What support may do to a card (docs/back-office.md, "What support may do"): freeze,
unfreeze and block it as lost or stolen from the customer page, with a reason code and a
reason, alone (no second person), through `card_set_status` as the API's status change; the
code and the reason in the card.status_changed event (actor: the staff user) and the admin
history; a blocked card authorizes nothing."""

import re

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from backoffice.models import ApprovalRequest
from cards.models import Card
from events.models import Event
from tests.api.test_scopes import World, authorization_body
from tests.backoffice.helpers import staff
from tests.cards.helpers import make_institution
from tests.conftest import body_of
from tests.staff import sign_in

pytestmark = pytest.mark.django_db

FORM = re.compile(
    r'<form method="post" action="([^"]+)" class="object-action card-protection">(.*?)</form>', re.S
)
HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')


@pytest.fixture
def world():
    world = World("v2", make_institution())
    world.make("card")  # active, on a funded account of the customer
    return world


@pytest.fixture
def support(client, world):
    user = staff("sam", roles=["support"], institutions=[world_institution(world)])
    sign_in(client, user)
    return user


def world_institution(world):
    return Card.objects.select_related("institution").get(pk=world["card"]).institution


def customer_page(world) -> str:
    return reverse("admin:customers_customer_change", args=[world["customer"]])


def buttons(client, world) -> dict[str, tuple[str, dict]]:
    """The card's protective buttons on the customer page: action -> (where it posts, fields)."""
    html = client.get(customer_page(world)).content.decode()
    found = {}
    for action, inner in FORM.findall(html):
        fields = dict(HIDDEN.findall(inner))
        assert fields["_selected_action"] == world["card"]
        found[fields["action"]] = (action, fields)
    return found


def press(client, world, action: str, **answers):
    """Press the card's `action` button on the customer page and answer its confirmation page
    (`answers`: the reason code and the reason), as staff would; follows the redirects."""
    target, fields = buttons(client, world)[action]
    page = client.post(target, fields)
    assert page.status_code == 200
    assert page.templates[0].name == "admin/cards/card/protect_confirmation.html"
    data = {}
    for name, value in HIDDEN.findall(page.content.decode()):
        data.setdefault(name, []).append(value)
    data.pop("csrfmiddlewaretoken", None)
    return client.post(target, {**data, **answers}, follow=True)


def card(world) -> Card:
    return Card.objects.get(pk=world["card"])


def authorize(world) -> dict:
    return body_of(world.api.post("/card-authorizations", authorization_body(world)), "v2")


def status_events(world) -> list[Event]:
    return list(
        Event.objects.filter(type="card.status_changed", object_id=world["card"]).order_by("pk")
    )


def test_support_freezes_unfreezes_and_blocks_a_card_from_the_customer_page(client, world, support):
    assert set(buttons(client, world)) == {"freeze_cards", "block_cards"}  # active

    # Freeze: the reason code and the reason go in the event and the history; nothing asked of
    # a second person.
    response = press(
        client, world, "freeze_cards", reason_code="fraud_suspected", reason="Odd payments abroad"
    )
    assert response.redirect_chain[-1][0] == customer_page(world)  # back where they pressed
    assert [str(m) for m in response.context["messages"]] == ["Froze 1 card(s)."]
    assert (card(world).status, card(world).status_reason) == ("suspended", "Odd payments abroad")
    [event] = status_events(world)
    assert event.data == {
        "from": "active",
        "to": "suspended",
        "reason": "Odd payments abroad",
        "reason_code": "fraud_suspected",
    }
    assert (event.actor_type, event.actor_id) == ("staff", str(support.pk))
    entry = LogEntry.objects.get(object_id=world["card"])
    assert entry.user == support
    assert entry.get_change_message() == (
        "Status active → suspended (admin action “Freeze”; reason code: fraud suspected; "
        "reason: “Odd payments abroad”)."
    )
    assert not ApprovalRequest.objects.exists()
    declined = authorize(world)
    assert (declined["status"], declined["declineCode"]) == ("declined", "card_not_active")

    # Unfreeze: frozen cards only.
    assert set(buttons(client, world)) == {"unfreeze_cards", "block_cards"}
    press(client, world, "unfreeze_cards", reason_code="fraud_ruled_out", reason="Cardholder's")
    assert card(world).status == "active"
    assert authorize(world)["status"] == "pending"  # approved, held

    # Block as stolen: final, nothing authorizes any more, no button left.
    response = press(client, world, "block_cards", reason_code="stolen", reason="Bag stolen")
    assert [str(m) for m in response.context["messages"]] == ["Blocked 1 card(s)."]
    assert (card(world).status, card(world).status_reason) == ("stolen", "Bag stolen")
    assert status_events(world)[-1].data == {
        "from": "active",
        "to": "stolen",
        "reason": "Bag stolen",
        "reason_code": "stolen",
    }
    assert {(e.actor_type, e.actor_id) for e in status_events(world)} == {
        ("staff", str(support.pk))
    }
    blocked = authorize(world)
    assert (blocked["status"], blocked["declineCode"]) == ("declined", "card_not_active")
    assert buttons(client, world) == {}
    assert LogEntry.objects.filter(object_id=world["card"], user=support).count() == 3


def test_a_block_as_lost_is_the_status_lost(client, world, support):
    press(client, world, "block_cards", reason_code="lost", reason="Lost on the train")
    assert card(world).status == "lost"
    assert status_events(world)[-1].data["reason_code"] == "lost"
    assert authorize(world)["declineCode"] == "card_not_active"


@pytest.mark.parametrize(
    "answers, errors",
    [
        ({"reason": "Called"}, {"reason_code": ["This field is required."]}),
        ({"reason_code": "lost", "reason": "  "}, {"reason": ["This field is required."]}),
        # The reason goes to the institution in the event: never a card number.
        (
            {"reason_code": "lost", "reason": "Card 4111 1111 1111 1111 gone"},
            {
                "reason": [
                    "Must not hold a card or account number: write its last four digits instead."
                ]
            },
        ),
        # A code another action offers, not this one.
        (
            {"reason_code": "card_found", "reason": "Called"},
            {
                "reason_code": [
                    "Select a valid choice. card_found is not one of the available choices."
                ]
            },
        ),
    ],
)
def test_without_a_reason_code_and_a_reason_nothing_changes(
    client, world, support, answers, errors
):
    response = press(client, world, "freeze_cards", **answers)
    assert response.templates[0].name == "admin/cards/card/protect_confirmation.html"
    assert response.context["form"].errors == errors
    assert card(world).status == "active"
    assert status_events(world) == [] and not LogEntry.objects.exists()


def test_the_confirmation_offers_each_action_its_codes(client, world, support):
    target, fields = buttons(client, world)["freeze_cards"]
    page = client.post(target, fields)
    codes = [value for value, _ in page.context["form"].fields["reason_code"].choices]
    assert codes == ["customer_request", "lost", "stolen", "fraud_suspected", "other"]
    target, fields = buttons(client, world)["block_cards"]
    page = client.post(target, fields)
    assert [v for v, _ in page.context["form"].fields["reason_code"].choices] == ["lost", "stolen"]


def test_unfreeze_leaves_a_card_that_is_not_frozen(admin_client, world):
    url = reverse("admin:cards_card_changelist")
    start = {"action": "unfreeze_cards", "index": "0", "_selected_action": [world["card"]]}
    answers = {"confirm": "yes", "reason_code": "card_found", "reason": "Found it"}
    response = admin_client.post(url, {**start, **answers}, follow=True)
    assert [(m.level_tag, str(m)) for m in response.context["messages"]] == [
        ("warning", f"Not frozen, left as they were: {world['card']} (active).")
    ]
    assert status_events(world) == []


def test_a_final_card_cannot_be_blocked_and_a_blocked_one_is_left(admin_client, world):
    url = reverse("admin:cards_card_changelist")
    Card.objects.filter(pk=world["card"]).update(status="closed")
    start = {"action": "block_cards", "index": "0", "_selected_action": [world["card"]]}
    answers = {"confirm": "yes", "reason_code": "lost", "reason": "Lost"}
    response = admin_client.post(url, {**start, **answers}, follow=True)
    assert [str(m) for m in response.context["messages"]] == [
        f"{world['card']}: A card cannot go from closed to lost."
    ]
    Card.objects.filter(pk=world["card"]).update(status="lost")
    response = admin_client.post(url, {**start, **answers}, follow=True)
    assert [str(m) for m in response.context["messages"]] == [
        f"Already blocked so, left as they were: {world['card']}."
    ]
    assert status_events(world) == []


def test_who_may_not_protect_cards_sees_no_button_and_cannot_post_one(client, world):
    viewer = staff("viewer", institutions=[world_institution(world)])
    viewer.user_permissions.add(
        *Permission.objects.filter(
            codename__in=["view_customer", "view_card", "view_account"],
            content_type__app_label__in=["customers", "cards", "accounts"],
        )
    )
    viewer = User.objects.get(pk=viewer.pk)  # no permission cache
    sign_in(client, viewer)
    html = client.get(customer_page(world)).content.decode()
    assert "card-protection" not in html and world["card"] in html
    url = reverse("admin:cards_card_changelist")
    start = {"action": "freeze_cards", "index": "0", "_selected_action": [world["card"]]}
    answers = {"confirm": "yes", "reason_code": "lost", "reason": "Lost"}
    client.post(url, {**start, **answers})
    assert card(world).status == "active"


def test_the_way_back_is_a_page_of_the_back_office_only(admin_client, world):
    url = reverse("admin:cards_card_changelist")
    start = {"action": "freeze_cards", "index": "0", "_selected_action": [world["card"]]}
    answers = {"confirm": "yes", "reason_code": "lost", "reason": "Lost"}
    response = admin_client.post(url, {**start, **answers, "return_to": "https://evil.example/"})
    assert response.status_code == 302 and response.url == url
    response = admin_client.post(url, {**start, **answers, "return_to": "//evil.example/admin/"})
    assert response.url == url
