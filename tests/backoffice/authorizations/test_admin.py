"""The card transactions' back office: authorizations and merchant returns render read-only
(lists, filters, search, pages with their links), nobody adds, changes or deletes them, and no
page shows or even reads a card's PAN (masked PAN only)."""

import re

import pytest
from django.contrib import admin
from django.db import connection
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.html import escape

from accounts.models import Account, Hold, Journal, StatementLine
from accounts.services import adjustment_create
from authorizations.models import Authorization, CardReturn
from authorizations.services import (
    authorization_create,
    authorization_present,
    authorization_reverse,
    card_return_create,
)
from backoffice.names import type_display
from cards.models import Card
from core.actors import SYSTEM, Actor
from events.models import Event
from tests.cards.helpers import issue_card, make_account, make_customer, make_institution
from tests.factories import issue_key

pytestmark = pytest.mark.django_db

MODELS = [Authorization, CardReturn]
MERCHANT = {"name": "Corner Shop", "mcc": "5411", "country_code": "276", "channel": "pos"}
ATM = {"name": "Sparkasse ATM", "mcc": "6011", "country_code": "276", "channel": "atm"}


def url(model, view="changelist", *args):
    opts = model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=args)


def shown(response) -> set:
    return {obj.pk for obj in response.context["cl"].result_list}


@pytest.fixture
def world():
    """One card with an authorization in every status, and two returns (one linked)."""
    fi = make_institution()
    account = make_account(fi, make_customer(fi))
    adjustment_create(
        account=account, direction="credit", amount=100_000, currency="EUR", actor=SYSTEM
    )
    card = issue_card(account, status=Card.Status.ACTIVE)
    actor = Actor(api_key=issue_key(fi)[0])

    def authorize(amount, merchant=MERCHANT, type="Goods"):
        return authorization_create(
            card=card, amount=amount, currency="EUR", type=type, merchant=merchant, actor=actor
        )

    pending = authorize(1_000)
    presented = authorization_present(authorization=authorize(2_000), amount=1_800, actor=actor)
    reversed_ = authorization_reverse(authorization=authorize(3_000, ATM, "Cash"), actor=actor)
    declined = authorize(500_000)  # above the per-transaction limit
    assert declined.decline_code == "limit_exceeded"
    linked = card_return_create(
        card=card,
        amount=800,
        currency="EUR",
        merchant=MERCHANT,
        authorization=presented,
        actor=actor,
    )
    standalone = card_return_create(
        card=card, amount=150, currency="EUR", merchant=ATM, actor=SYSTEM
    )
    return {
        "fi": fi,
        "account": account,
        "card": Card.objects.get(pk=card.pk),
        "pending": pending,
        "presented": presented,
        "reversed": reversed_,
        "declined": declined,
        "linked": linked,
        "standalone": standalone,
        Authorization: pending,
        CardReturn: linked,
    }


# --- every page renders ---------------------------------------------------------------------
def test_admin_index_lists_both_models(admin_client):
    response = admin_client.get("/admin/")
    assert response.status_code == 200
    for model in MODELS:
        assert url(model).encode() in response.content


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_changelist_change_and_history_pages_render(admin_client, world, model):
    changelist = admin_client.get(url(model))
    assert changelist.status_code == 200
    assert set(changelist.context["cl"].result_list) == set(model.objects.all())
    obj = world[model]
    assert admin_client.get(url(model, "change", obj.pk)).status_code == 200
    assert admin_client.get(url(model, "history", obj.pk)).status_code == 200


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_search_and_every_filter_choice_render(admin_client, world, model):
    assert admin_client.get(url(model), {"q": "x"}).status_code == 200
    response = admin_client.get(url(model))
    for spec in response.context["cl"].filter_specs:
        for choice in spec.choices(response.context["cl"]):
            assert admin_client.get(url(model) + choice["query_string"]).status_code == 200


# --- authorizations -------------------------------------------------------------------------
def test_authorization_list_columns(admin_client, world):
    response = admin_client.get(url(Authorization))
    assert response.context["cl"].list_display == [
        "id",
        "card_link",
        "amount_display",
        type_display,
        "merchant_display",
        "channel",
        "decision",
        "status_display",
        "decline_code",
        "created_at",
    ]
    html = response.content.decode()
    card = world["card"]
    assert card.masked_pan == f"{card.pan_first6}******{card.pan_last4}"
    assert html.count(card.masked_pan) == 4
    assert url(Card, "change", card.pk) in html
    for text in ["10.00 EUR", "20.00 EUR", "30.00 EUR", "5,000.00 EUR", "Sparkasse ATM"]:
        assert text in html
    assert "field-mcc_display" not in html  # the MCC and country are on the record's page
    # Types in words, not the network's codes.
    assert '<td class="field-type_display">purchase</td>' in html
    assert '<td class="field-type_display">cash withdrawal</td>' in html
    for status in ["pending", "presented", "reversed", "declined"]:
        assert f'<td class="field-status_display">{status}</td>' in html
    assert '<td class="field-decline_code">limit_exceeded</td>' in html


def test_authorization_filters_and_search(admin_client, world):
    def found(**params):
        response = admin_client.get(url(Authorization), params)
        assert response.status_code == 200
        return shown(response)

    pending, presented, reversed_, declined = (
        world[name].pk for name in ("pending", "presented", "reversed", "declined")
    )
    assert found(decision__exact="declined") == {declined}
    assert found(decision__exact="approved") == {pending, presented, reversed_}
    assert found(type__exact="Cash") == {reversed_}
    assert found(channel__exact="atm") == {reversed_}
    assert found(decline_code__exact="limit_exceeded") == {declined}
    assert found(type__exact="Goods", decision__exact="approved") == {pending, presented}
    assert found(q=pending) == {pending}
    assert found(q=f"  {pending} ") == {pending}
    assert found(q="sparkasse") == {reversed_}
    assert found(q="corner") == {pending, presented, declined}
    assert found(q=world["card"].pan_last4) == set()
    filters = [
        spec.title for spec in admin_client.get(url(Authorization)).context["cl"].filter_specs
    ]
    assert filters == ["decision", "decided by", "kind", "type", "channel", "decline code"]


def test_authorization_page_links_card_account_hold_line_returns(admin_client, world):
    card, account = world["card"], world["account"]
    presented = world["presented"]
    line = StatementLine.objects.get(authorization=presented)
    response = admin_client.get(url(Authorization, "change", presented.pk))
    html = response.content.decode()
    assert f'<a href="{url(Card, "change", card.pk)}">{card.masked_pan}</a>' in html
    assert url(Account, "change", account.pk) in html
    assert url(Hold, "change", presented.hold_id) in html
    assert re.search(r"/admin/accounts/hold/[^/\"]+/change/", html)  # what is absent below
    assert f'<a href="{url(StatementLine, "change", line.pk)}">{line.pk}</a>' in html
    assert f"{url(CardReturn)}?authorization={presented.pk}" in html
    assert "1 return(s)" in html
    assert f"{url(Event)}?object_id={presented.pk}" in html
    assert "18.00 EUR" in html  # presented amount
    assert "presented" in html
    # The merchant's category by its description (ISO 18245), its country by name.
    assert "Groceries and supermarkets (5411)" in html
    assert '<div class="readonly">Germany</div>' in html
    assert '<div class="readonly">purchase</div>' in html
    # A declined authorization: its code, reason and details; no hold, no line.
    declined = world["declined"]
    html = admin_client.get(url(Authorization, "change", declined.pk)).content.decode()
    assert "limit_exceeded" in html
    assert escape(declined.decline_reason) in html
    assert '<th scope="row">limit</th><td>perTransaction</td>' in html  # fields, not JSON
    assert not re.search(r"/admin/accounts/hold/[^/\"]+/change/", html)
    assert not re.search(r"/admin/accounts/statementline/[^/\"]+/change/", html)
    # Every status renders.
    for name in ("pending", "reversed"):
        response = admin_client.get(url(Authorization, "change", world[name].pk))
        assert response.status_code == 200
        assert url(Hold, "change", world[name].hold_id) in response.content.decode()


# --- returns --------------------------------------------------------------------------------
def test_return_list_and_pages(admin_client, world):
    linked, standalone = world["linked"], world["standalone"]
    response = admin_client.get(url(CardReturn))
    assert shown(response) == {linked.pk, standalone.pk}
    html = response.content.decode()
    assert html.count(world["card"].masked_pan) == 2
    assert "8.00 EUR" in html and "1.50 EUR" in html
    assert "— (standalone)" in html
    assert f'<a href="{url(Authorization, "change", world["presented"].pk)}">' in html
    assert shown(admin_client.get(url(CardReturn), {"q": "sparkasse"})) == {standalone.pk}
    assert shown(admin_client.get(url(CardReturn), {"q": linked.pk})) == {linked.pk}
    assert shown(admin_client.get(url(CardReturn), {"authorization": world["presented"].pk})) == {
        linked.pk
    }

    html = admin_client.get(url(CardReturn, "change", linked.pk)).content.decode()
    line = StatementLine.objects.get(card_return=linked)
    assert url(Card, "change", linked.card_id) in html
    assert url(Account, "change", linked.account_id) in html
    assert url(Authorization, "change", linked.authorization_id) in html
    assert url(Journal, "change", linked.journal_id) in html
    assert url(StatementLine, "change", line.pk) in html
    # Created by the API key (backoffice.kit.actor_display), read from the field itself: the menu
    # names staff and API keys on every page.
    created_by = re.search(r"<label>Created by:</label>\s*<div class=\"readonly\">([^<]*)<", html)
    assert created_by.group(1).startswith("API key ")


# --- read-only ------------------------------------------------------------------------------
@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_nobody_adds_changes_or_deletes(admin_client, admin_user, world, model):
    model_admin = admin.site._registry[model]
    request = RequestFactory().get("/admin/")
    request.user = admin_user
    obj = world[model]
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request, obj)
    assert not model_admin.has_delete_permission(request, obj)
    assert model_admin.has_view_permission(request, obj)
    assert model_admin.get_actions(request) == {}
    before = list(model.objects.order_by("pk").values())
    assert admin_client.get(url(model, "add")).status_code == 403
    assert admin_client.post(url(model, "add"), {}).status_code == 403
    assert admin_client.post(url(model, "delete", obj.pk), {"post": "yes"}).status_code == 403
    assert admin_client.post(url(model, "change", obj.pk), {"amount": 1}).status_code == 403
    change_page = admin_client.get(url(model, "change", obj.pk))
    assert change_page.context["has_change_permission"] is False
    assert b'name="_save"' not in change_page.content
    assert list(model.objects.order_by("pk").values()) == before


# --- no PAN ---------------------------------------------------------------------------------
def pages(world) -> list[str]:
    result = ["/admin/"]
    for model in MODELS:
        result += [url(model), url(model) + "?q=" + world["card"].pan_last4]
        for obj in model.objects.all():
            result += [url(model, "change", obj.pk), url(model, "history", obj.pk)]
    return result


def test_no_page_shows_the_pan(admin_client, world):
    card = world["card"]
    secrets = [card.pan(), card.pan_encrypted, card.cvv_encrypted, card.pan_fingerprint]
    for page in pages(world):
        response = admin_client.get(page)
        assert response.status_code == 200, page
        html = response.content.decode()
        assert [secret for secret in secrets if secret in html] == [], page
        assert card.pan()[6:12] not in html, page  # the hidden middle digits


def test_pages_do_not_even_read_the_card_secrets(admin_client, world):
    with CaptureQueriesContext(connection) as queries:
        for page in pages(world):
            assert admin_client.get(page).status_code == 200
    sql = "\n".join(query["sql"] for query in queries.captured_queries)
    assert '"cards_card"."pan_last4"' in sql
    for column in ["pan_encrypted", "cvv_encrypted", "pan_fingerprint", "pin_hash"]:
        assert column not in sql
