"""The cards' back office: every page renders, the status actions ask for a reason and go
through `card_set_status` (events, transitions), each change is logged with the staff user,
nothing is written by a form, and no page shows a card's PAN, CVV, PIN or their stored forms."""

import re

import pytest
from django.contrib import admin
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth.models import Permission, User
from django.db import connection, transaction
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

import cards.services.issuance as issuance
import cards.services.lifecycle as lifecycle
from cards.models import Card, CardProduct, SensitiveDetailsAccess
from cards.services import (
    card_pin_set,
    card_pin_verify,
    card_renew,
    card_sensitive_details,
    card_set_status,
    lock_card,
    spend,
)
from core.actors import Actor
from events.models import Event
from tests.cards.helpers import (
    PREPAID_VIRTUAL,
    card_events,
    issue_card,
    make_account,
    make_customer,
    make_institution,
)
from tests.factories import issue_key
from tests.staff import sign_in

pytestmark = pytest.mark.django_db

MODELS = [Card, CardProduct, SensitiveDetailsAccess]
# CVVs no admin page has any other reason to show as a number of its own (a random one could be
# "000" or "100", which "1,000.00 EUR" contains): the test of secrets can look for them.
CVVS = ["739", "748", "857", "968", "379", "847", "958", "693", "586", "475", "364", "253"]
PINS = ["8264", "5173", "9481"]


def url(model, view="changelist", *args):
    opts = model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=args)


def messages_of(response):
    return [str(message) for message in response.context["messages"]]


def action_names(response) -> list[str]:
    form = response.context["action_form"]
    return [] if form is None else [name for name, _ in form.fields["action"].choices if name]


def start_action(client, action, *cards, path=None, select_across=False):
    """Choose `action` for `cards` on the changelist, as its form posts it."""
    return client.post(
        path or url(Card),
        {
            "action": action,
            "select_across": "1" if select_across else "0",
            "index": "0",
            "_selected_action": [card.pk for card in cards],
        },
    )


HIDDEN_INPUT = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')


def confirm(client, page, reason, path=None):
    """Submit the confirmation `page` with `reason`: its hidden fields, as a browser would."""
    data = {}
    for name, value in HIDDEN_INPUT.findall(page.content.decode()):
        data.setdefault(name, []).append(value)
    data.pop("csrfmiddlewaretoken", None)
    data["reason"] = reason
    return client.post(path or url(Card), data, follow=True)


def run_action(client, action, *cards, reason=""):
    page = start_action(client, action, *cards)
    assert page.status_code == 200
    return confirm(client, page, reason)


def shown_fields(response) -> dict:
    """Field name -> the read-only field of a view-only change page, every fieldset."""
    return {
        field.field["name"]: field
        for fieldset in response.context["adminform"]
        for line in fieldset
        for field in line
    }


def refreshed(card) -> Card:
    return Card.objects.get(pk=card.pk)


def status_changes(card) -> list[dict]:
    return [data for _, data in card_events(card, "card.status_changed")]


@pytest.fixture
def fixed_cvvs(monkeypatch):
    fresh = iter(CVVS)
    monkeypatch.setattr(issuance, "new_cvv", lambda: next(fresh))
    monkeypatch.setattr(lifecycle, "new_cvv", lambda: next(fresh))


@pytest.fixture
def world(fixed_cvvs):
    """Cards of one account in every status the actions meet (inactive, active, suspended,
    closed), a supplementary card, a renewal, a PIN with a wrong try, a day's spend and a
    sensitive-details read."""
    fi = make_institution()
    ada = make_customer(fi, "Ada", "Lovelace")
    account = make_account(fi, ada)
    active = issue_card(account, code=PREPAID_VIRTUAL, status=Card.Status.ACTIVE)
    inactive = issue_card(account)
    suspended = issue_card(account, status=Card.Status.ACTIVE)
    card_set_status(card=suspended, status="suspended", reason="Customer request")
    closed = issue_card(account, status=Card.Status.ACTIVE)
    card_set_status(card=closed, status="closed", reason="Fraud")
    supplementary = issue_card(
        account,
        customer=make_customer(fi, "Grace", "Hopper"),
        status=Card.Status.ACTIVE,
        primary_card=active,
    )
    renewed_from = issue_card(account, status=Card.Status.ACTIVE)
    renewal = card_renew(card=renewed_from)

    last4s = set(Card.objects.values_list("pan_last4", flat=True))
    pin, wrong_pin = [p for p in PINS if p not in last4s][:2]
    card_pin_set(card=active, pin=pin, current_pin=None)
    assert not card_pin_verify(card=active, pin=wrong_pin).verified
    with transaction.atomic():
        spend(lock_card(active.pk), 1_234)
    api_key, _ = issue_key(fi)
    card_sensitive_details(
        card=active, actor=Actor(api_key=api_key), request_id="req_1", client_ip="203.0.113.7"
    )
    return {
        "fi": fi,
        "api_key": api_key,
        "pin": pin,
        "active": refreshed(active),
        "inactive": refreshed(inactive),
        "suspended": refreshed(suspended),
        "closed": refreshed(closed),
        "supplementary": refreshed(supplementary),
        "renewed_from": refreshed(renewed_from),
        "renewal": refreshed(renewal),
        Card: refreshed(active),
        CardProduct: active.product,
        SensitiveDetailsAccess: SensitiveDetailsAccess.objects.get(card=active),
    }


def all_cards():
    return list(Card.objects.order_by("pk"))


# --- every page renders ---------------------------------------------------------------------
def test_admin_index_lists_every_card_model(admin_client):
    response = admin_client.get("/admin/")
    assert response.status_code == 200
    for model in MODELS:
        assert url(model).encode() in response.content


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_changelist_and_change_page_render(admin_client, world, model):
    changelist = admin_client.get(url(model))
    assert changelist.status_code == 200
    assert changelist.context["cl"].result_count == model.objects.count() >= 1
    obj = world[model]
    assert admin_client.get(url(model, "change", obj.pk)).status_code == 200
    assert admin_client.get(url(model, "history", obj.pk)).status_code == 200


def test_change_page_of_a_card_in_every_status_renders(admin_client, world):
    statuses = set()
    for card in all_cards():
        response = admin_client.get(url(Card, "change", card.pk))
        assert response.status_code == 200
        assert card.masked_pan in response.content.decode()
        statuses.add(card.status)
    assert statuses == {"inactive", "active", "suspended", "closed"}


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_changelist_search_and_filters_render(admin_client, world, model):
    assert admin_client.get(url(model), {"q": "x"}).status_code == 200
    response = admin_client.get(url(model))
    for spec in response.context["cl"].filter_specs:
        for choice in spec.choices(response.context["cl"]):
            assert admin_client.get(url(model) + choice["query_string"]).status_code == 200


def test_card_filters(admin_client, world):
    def ids(params):
        response = admin_client.get(url(Card), params)
        return {card.pk for card in response.context["cl"].result_list}

    assert ids({"status__exact": "suspended"}) == {world["suspended"].pk}
    assert ids({"form__exact": "physical"}) == set()
    assert ids({"product_kind": "debit"}) == set()
    assert ids({"product_kind": "prepaid"}) == {card.pk for card in all_cards()}
    assert ids({"institution__id__exact": world["fi"].pk}) == {card.pk for card in all_cards()}
    make_institution()  # the institution filter shows from two institutions on
    filters = [spec.title for spec in admin_client.get(url(Card)).context["cl"].filter_specs]
    assert filters == ["status", "form", "product kind", "institution"]


# --- cards: list, search, page --------------------------------------------------------------
def test_card_list_columns(admin_client, world):
    active = world["active"]
    response = admin_client.get(url(Card))
    assert response.context["cl"].list_display == [
        "action_checkbox",
        "id",
        "masked_pan",
        "status",
        "form",
        "product_link",
        "account_link",
        "customer_link",
        "expiry",
    ]
    html = response.content.decode()
    assert active.masked_pan == f"{active.pan_first6}******{active.pan_last4}"
    assert active.masked_pan in html
    assert f"{active.expiry_month:02d}/{active.expiry_year}" in html
    assert url(CardProduct, "change", active.product_id) in html and active.product.name in html
    assert url(type(active.account), "change", active.account_id) in html
    assert url(type(active.customer), "change", active.customer_id) in html


def test_card_search_by_id_last4_and_embossed_name_never_by_secrets(admin_client, world):
    active, supplementary = world["active"], world["supplementary"]

    def found(term):
        response = admin_client.get(url(Card), {"q": term})
        assert response.status_code == 200
        return {card.pk for card in response.context["cl"].result_list}

    assert found(active.pk) == {active.pk}
    assert found(f"  {active.pk} ") == {active.pk}
    assert active.pk in found(active.pan_last4)
    assert all(
        card.pan_last4 == active.pan_last4
        for card in Card.objects.filter(pk__in=found(active.pan_last4))
    )
    assert found("hopper") == {supplementary.pk}
    assert found("GRACE HOP") == {supplementary.pk}
    for secret in [
        active.pan(),
        active.pan()[:6],
        active.pan()[6:12],
        active.cvv(),
        active.pan_fingerprint,
        active.pan_encrypted,
        active.pin_hash,
    ]:
        assert found(secret) == set(), secret


def test_card_page_is_view_only_and_shows_controls_limits_pin_and_relations(admin_client, world):
    active, supplementary = world["active"], world["supplementary"]
    response = admin_client.get(url(Card, "change", active.pk))
    html = response.content.decode()
    # View-only: no form field at all, no save button, no secret field.
    assert list(response.context["adminform"].form.fields) == []
    assert 'name="_save"' not in html
    fields = shown_fields(response)
    assert not set(fields) & {"pan_encrypted", "cvv_encrypted", "pan_fingerprint", "pin_hash"}
    for text in [
        active.masked_pan,
        f"{active.expiry_month:02d}/{active.expiry_year}",
        "500.00 EUR",  # PREPAID_VIRTUAL's per-transaction limit
        "1,000.00 EUR",  # daily
        "5,000.00 EUR",  # monthly
        "12.34 EUR",  # spent today
        "ADA LOVELACE",
    ]:
        assert text in html, text
    assert fields["pin_status"].contents() == "set"
    assert fields["pin_failed_attempts"].contents() == "1"
    assert "icon-no" in fields["pin_blocked"].contents()
    assert "icon-yes" in fields["ecommerce"].contents()
    assert f"{url(Card)}?primary_card={active.pk}" in html
    assert f"{url(SensitiveDetailsAccess)}?card={active.pk}" in html
    assert f"{url(Event)}?object_id={active.pk}" in html

    html = admin_client.get(url(Card, "change", supplementary.pk)).content.decode()
    assert url(Card, "change", active.pk) in html  # its primary card

    old, new = world["renewed_from"], world["renewal"]
    html = admin_client.get(url(Card, "change", old.pk)).content.decode()
    assert url(Card, "change", new.pk) in html and "renewed" in html  # successor, status reason
    html = admin_client.get(url(Card, "change", new.pk)).content.decode()
    assert url(Card, "change", old.pk) in html and "Renewal" in html  # predecessor, succession

    fields = shown_fields(admin_client.get(url(Card, "change", world["inactive"].pk)))
    assert fields["pin_status"].contents() == "not set"


def test_links_from_the_card_page_filter_the_other_lists(admin_client, world):
    active = world["active"]
    for model, field, expected in [
        (Card, "primary_card", {world["supplementary"].pk}),
        (SensitiveDetailsAccess, "card", {world[SensitiveDetailsAccess].pk}),
        (
            Event,
            "object_id",
            set(Event.objects.filter(object_id=active.pk).values_list("pk", flat=True)),
        ),
    ]:
        response = admin_client.get(f"{url(model)}?{field}={active.pk}")
        assert response.status_code == 200
        assert {row.pk for row in response.context["cl"].result_list} == expected


# --- no secret on any page ------------------------------------------------------------------
def secrets_in(html: str, card: Card) -> list[str]:
    """Which of the card's secrets `html` shows: the PAN, the CVV and the PIN hash, as stored or
    in clear (the CVV as a number of its own: digits inside ids and tokens are not it)."""
    found = [
        name
        for name, secret in [
            ("pan", card.pan()),
            ("pan_encrypted", card.pan_encrypted),
            ("cvv_encrypted", card.cvv_encrypted),
            ("pan_fingerprint", card.pan_fingerprint),
            *(
                [
                    ("pin_hash", card.pin_hash),
                    *(("pin_hash part", p) for p in card.pin_hash.split("$")),
                ]
                if card.pin_hash
                else []
            ),
        ]
        if secret in html
    ]
    if re.search(rf"\b{card.cvv()}\b", html):
        found.append("cvv")
    return found


def test_no_page_shows_a_pan_cvv_pin_or_their_stored_forms(admin_client, world):
    cards = all_cards()
    assert len({card.cvv() for card in cards}) == len(cards)  # each CVV is one of CVVS
    pages = [("/admin/", None), (url(Card), None), (url(CardProduct), None)]
    pages += [(url(SensitiveDetailsAccess), None)]
    pages += [(url(SensitiveDetailsAccess, "change", world[SensitiveDetailsAccess].pk), None)]
    pages += [(url(CardProduct, "change", world[CardProduct].pk), None)]
    for card in cards:
        pages += [
            (url(Card, "change", card.pk), None),
            (url(Card, "history", card.pk), None),
            (url(Card) + "?q=" + card.pan_last4, None),
            (url(Card) + "?q=" + card.pk, None),
            (url(Event) + "?object_id=" + card.pk, None),
        ]
    for action in ["activate_cards", "suspend_cards", "close_cards"]:
        pages += [(url(Card), action)]  # the confirmation page, every card selected
    for page, action in pages:
        if action is None:
            response = admin_client.get(page)
        else:
            response = start_action(admin_client, action, *cards)
        assert response.status_code == 200, page
        html = response.content.decode()
        for card in cards:
            assert secrets_in(html, card) == [], (page, action, card.status)
        assert not re.search(rf"\b{world['pin']}\b", html), (page, action)
    # The check itself finds a secret where there is one.
    active = world["active"]
    assert secrets_in(f"<td>{active.pan()}</td><td>{active.cvv()}</td>", active) == ["pan", "cvv"]


def test_pages_do_not_even_read_the_secret_columns(admin_client, world):
    cards = all_cards()
    pages = [url(Card), url(Card) + "?q=" + world["active"].pan_last4, url(SensitiveDetailsAccess)]
    pages += [url(SensitiveDetailsAccess, "change", world[SensitiveDetailsAccess].pk)]
    pages += [url(Card, view, card.pk) for card in cards for view in ["change", "history"]]
    with CaptureQueriesContext(connection) as queries:
        for page in pages:
            assert admin_client.get(page).status_code == 200
        assert start_action(admin_client, "close_cards", *cards).status_code == 200
    sql = "\n".join(query["sql"] for query in queries.captured_queries)
    assert '"cards_card"."id"' in sql
    for column in ["pan_encrypted", "cvv_encrypted", "pan_fingerprint"]:
        assert column not in sql
    # The PIN hash only as "is a PIN set?".
    assert sql.count("pin_hash") == sql.count('"cards_card"."pin_hash" IS NOT NULL') > 0


# --- actions: confirmation with a reason, then card_set_status ------------------------------
@pytest.mark.parametrize(
    "action, name, card_key, before, after, reason",
    [
        ("suspend_cards", "Suspend", "active", "active", "suspended", "Customer called"),
        ("activate_cards", "Activate", "suspended", "suspended", "active", "Found the card"),
        ("activate_cards", "Activate", "inactive", "inactive", "active", ""),
        ("close_cards", "Close", "active", "active", "closed", "Account holder deceased"),
    ],
)
def test_status_action_asks_for_a_reason_then_goes_through_the_service(
    admin_client, admin_user, world, action, name, card_key, before, after, reason
):
    card = world[card_key]
    events_before = status_changes(card)
    page = start_action(admin_client, action, card)
    assert page.status_code == 200
    assert page.templates[0].name == "admin/cards/card/status_confirmation.html"
    html = page.content.decode()
    assert card.masked_pan in html and 'name="reason"' in html
    # Only the confirmation changes anything.
    assert refreshed(card).status == before
    assert status_changes(card) == events_before

    response = confirm(admin_client, page, reason)
    assert response.status_code == 200
    assert response.redirect_chain[-1][0] == url(Card)
    assert f"{name}{'d' if name.endswith('e') else 'ed'} 1 card(s)." in messages_of(response)
    card = refreshed(card)
    assert (card.status, card.status_reason) == (after, reason)
    assert status_changes(card) == [*events_before, {"from": before, "to": after, "reason": reason}]
    entry = LogEntry.objects.get(object_id=card.pk)
    assert (entry.action_flag, entry.user, entry.content_type.model) == (CHANGE, admin_user, "card")
    message = entry.get_change_message()
    assert f"Status {before} → {after}" in message and f"admin action “{name}”" in message
    assert (f"reason: “{reason}”" if reason else "no reason given") in message
    assert entry.object_repr == str(card) and card.masked_pan in entry.object_repr


@pytest.mark.parametrize("action", ["suspend_cards", "close_cards"])
def test_suspend_and_close_need_a_reason(admin_client, world, action):
    active = world["active"]
    page = start_action(admin_client, action, active)
    response = confirm(admin_client, page, "   ")
    assert response.status_code == 200
    assert response.templates[0].name == "admin/cards/card/status_confirmation.html"
    assert response.context["form"].errors == {"reason": ["This field is required."]}
    assert refreshed(active).status == "active"
    assert status_changes(active) == []
    assert not LogEntry.objects.exists()


def test_a_refused_transition_changes_that_card_only_and_is_an_error(
    admin_client, admin_user, world
):
    closed, suspended = world["closed"], world["suspended"]
    closed_events = status_changes(closed)
    response = run_action(admin_client, "activate_cards", closed, suspended, reason="Back")
    assert response.status_code == 200
    shown = [(m.level_tag, str(m)) for m in response.context["messages"]]
    assert shown == [
        ("error", f"{closed.pk}: A card cannot go from closed to active."),
        ("success", "Activated 1 card(s)."),
    ]
    assert refreshed(closed).status == "closed" and refreshed(closed).status_reason == "Fraud"
    assert status_changes(closed) == closed_events
    assert not LogEntry.objects.filter(object_id=closed.pk).exists()
    assert refreshed(suspended).status == "active"
    assert LogEntry.objects.get(object_id=suspended.pk).user == admin_user


def test_inactive_cards_cannot_be_suspended_and_final_ones_stay_final(admin_client, world):
    inactive, renewed_from = world["inactive"], world["renewed_from"]
    response = run_action(admin_client, "suspend_cards", inactive, renewed_from, reason="Check")
    assert [m.level_tag for m in response.context["messages"]] == ["error", "error"]
    assert refreshed(inactive).status == "inactive"
    assert refreshed(renewed_from).status == "closed"
    assert not LogEntry.objects.exists()


def test_a_card_already_in_the_status_is_left_as_it_is(admin_client, world):
    suspended = world["suspended"]
    events = status_changes(suspended)
    response = run_action(admin_client, "suspend_cards", suspended, reason="Again")
    assert messages_of(response) == [f"Already suspended, left as they were: {suspended.pk}."]
    assert refreshed(suspended).status_reason == "Customer request"
    assert status_changes(suspended) == events
    assert not LogEntry.objects.exists()


def test_select_across_a_filter_confirms_exactly_those_cards(admin_client, world):
    path = url(Card) + "?status__exact=active"
    active_cards = Card.objects.filter(status="active")
    page = start_action(
        admin_client, "suspend_cards", world["active"], path=path, select_across=True
    )
    assert {card.pk for card in page.context["objects"]} == set(
        active_cards.values_list("pk", flat=True)
    )
    count = active_cards.count()
    response = confirm(admin_client, page, "Batch suspension", path=path)
    assert f"Suspended {count} card(s)." in messages_of(response)
    assert not Card.objects.filter(status="active").exists()
    assert LogEntry.objects.count() == count


def test_reason_longer_than_the_card_keeps_is_refused(admin_client, world):
    active = world["active"]
    response = confirm(admin_client, start_action(admin_client, "suspend_cards", active), "x" * 501)
    assert "reason" in response.context["form"].errors
    assert refreshed(active).status == "active"


# --- products and sensitive-details reads ---------------------------------------------------
def test_product_list_shows_default_limits_as_money(admin_client, world):
    response = admin_client.get(url(CardProduct), {"institution__id__exact": world["fi"].pk})
    codes = [product.code for product in response.context["cl"].result_list]
    assert codes == ["DEBIT_STANDARD", "PREPAID_STANDARD", "PREPAID_VIRTUAL"]
    html = response.content.decode()
    for header in ["Per transaction", "Daily", "Monthly"]:
        assert f">{header}<" in html
    assert ">Daily cash<" not in html  # with the fees, on the product's page
    # In the institution's currency (a product has none of its own), never the integers.
    currency = world["fi"].currency
    assert f">5,000.00 {currency}<" in html and f">10,000.00 {currency}<" in html
    assert ">500000<" not in html and ">1000000<" not in html
    assert ">40000300<" in html and "physical, virtual" in html  # a BIN is no amount


def test_access_list_shows_who_read_what_from_where(admin_client, admin_user, world):
    active = world["active"]
    card_sensitive_details(card=active, actor=Actor(user=admin_user), request_id="req_2")
    response = admin_client.get(url(SensitiveDetailsAccess))
    assert response.context["cl"].list_display == [
        "card_link",
        "accessed_by",
        "request_id",
        "client_ip",
        "accessed_at",
    ]
    html = response.content.decode()
    for text in [
        f"API key {world['api_key'].prefix}",
        f"staff {admin_user.get_username()}",
        "req_1",
        "203.0.113.7",
        active.masked_pan,
        url(Card, "change", active.pk),
    ]:
        assert text in html, text
    response = admin_client.get(url(SensitiveDetailsAccess), {"q": "req_2"})
    assert [access.user for access in response.context["cl"].result_list] == [admin_user]


# --- nothing is added, deleted or saved by a form -------------------------------------------
# (but card products, which staff add and change through their services:
# tests/backoffice/cards/test_products_admin.py)
NO_FORMS = [model for model in MODELS if model is not CardProduct]


@pytest.mark.parametrize("model", NO_FORMS, ids=lambda model: model.__name__)
def test_no_add_no_delete_no_form_save(admin_client, world, model):
    obj = world[model]
    assert admin_client.get(url(model, "add")).status_code == 403
    assert admin_client.get(url(model, "delete", obj.pk)).status_code == 403
    assert admin_client.post(url(model, "delete", obj.pk), {"post": "yes"}).status_code == 403
    assert admin_client.post(url(model, "change", obj.pk), {"_save": "1"}).status_code == 403
    changelist = admin_client.get(url(model))
    assert "delete_selected" not in action_names(changelist)
    assert url(model, "add").encode() not in changelist.content
    assert model.objects.filter(pk=obj.pk).exists()


@pytest.mark.parametrize("model", NO_FORMS, ids=lambda model: model.__name__)
def test_no_add_change_or_delete_permission(admin_user, world, model):
    request = RequestFactory().get("/admin/")
    request.user = admin_user
    model_admin = admin.site._registry[model]
    obj = world[model]
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request, obj)
    assert not model_admin.has_delete_permission(request)
    assert not model_admin.has_delete_permission(request, obj)
    # Change permission on the model is what the card actions need; the rest have none.
    assert model_admin.has_change_permission(request) == (model is Card)


def test_card_actions_are_the_status_actions_the_pin_unblock_and_the_limits(admin_client, world):
    assert action_names(admin_client.get(url(Card))) == [
        "activate_cards",
        "suspend_cards",
        "close_cards",
        "unblock_pins",
        "change_limits",  # four eyes above the threshold (backoffice.actions.cards.change_limits)
        "freeze_cards",  # the protective actions, with a reason code: test_protection.py
        "unfreeze_cards",
        "block_cards",
    ]
    for model in [CardProduct, SensitiveDetailsAccess]:
        assert action_names(admin_client.get(url(model))) == []


def test_staff_without_change_permission_has_no_actions(client, world):
    staff = User.objects.create_user("viewer", password="pw", is_staff=True)
    staff.user_permissions.set(Permission.objects.filter(codename="view_card"))
    sign_in(client, staff)
    response = client.get(url(Card))
    assert response.status_code == 200
    assert action_names(response) == []
    active = world["active"]
    response = client.post(
        url(Card),
        {
            "action": "suspend_cards",
            "_selected_action": [active.pk],
            "confirm": "yes",
            "reason": "Not allowed",
        },
    )
    assert refreshed(active).status == "active"
    assert not LogEntry.objects.exists()
