"""The back office without the framework showing through (issue 33, item 4;
docs/back-office.md "The menu and its words"): business apps first and the framework's tables
grouped under "Administration", headings and plurals in plain language, no "View site",
products by name."""

import re

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from accounts.models import Account, AccountProduct
from cards.models import Card
from tests.backoffice.helpers import populated, staff
from tests.cards.helpers import make_institution
from tests.staff import sign_in

pytestmark = pytest.mark.django_db

BUSINESS = [
    "Accounts",
    "Approvals",  # four eyes: the approval requests
    "Card transactions",
    "Cards",
    "Customers",
    "Disputes",
    "Event log",
    "Institutions",
    "Program decisioning",
    "Transaction monitoring",
    "Transfers",
    "Webhooks",
]
FRAMEWORK = ["Axes", "Procrastinate", "Authentication and Authorization", "API requests"]


def sections(client) -> list[str]:
    page = client.get(reverse("admin:index"))
    assert page.status_code == 200
    return [app["name"] for app in page.context["app_list"]]


def sidebar_sections(client, url) -> list[str]:
    page = client.get(url)
    assert page.status_code == 200
    return [app["name"] for app in page.context["available_apps"]]


def model_names(client, section: str) -> list[str]:
    app_list = client.get(reverse("admin:index")).context["app_list"]
    (app,) = [app for app in app_list if app["name"] == section]
    return [model["name"] for model in app["models"]]


def model_urls(client, section: str) -> list[str]:
    app_list = client.get(reverse("admin:index")).context["app_list"]
    (app,) = [app for app in app_list if app["name"] == section]
    return [model["admin_url"] for model in app["models"]]


@pytest.fixture
def institution():
    return make_institution()


def test_staff_see_the_business_apps_and_no_framework(client, institution):
    sign_in(client, staff("clerk", roles=["support"], institutions=[institution]))

    assert sections(client) == BUSINESS
    changelist = reverse("admin:accounts_account_changelist")
    assert sidebar_sections(client, changelist) == BUSINESS
    html = client.get(reverse("admin:index")).content.decode()
    for name in [*FRAMEWORK, "Administration", "Idempotency records", "Groups", "Users"]:
        assert name not in html, name


def test_superusers_find_the_framework_under_administration_at_the_end(client, institution):
    sign_in(client, User.objects.create_superuser("root", password="pw"))

    assert sections(client) == [*BUSINESS, "Administration"]
    assert model_names(client, "Administration") == [
        "API keys",
        "Background jobs",
        "Idempotency records",
        "Institution access",
        "Sign-in failure log",
        "Sign-in failures (lockouts)",
        "Sign-in lockouts",
        "Sign-in log",
        "Staff roles (groups)",
        "Staff users",
    ]
    # Still reached as before: each page of the section opens.
    for model in model_urls(client, "Administration"):
        assert client.get(model).status_code == 200, model
    assert model_names(client, "Institutions") == ["Holidays", "Institutions"]


def test_a_group_granted_the_framework_finds_it_under_administration(client, institution):
    user = staff("auditor", roles=["support"], institutions=[institution])
    user.user_permissions.add(Permission.objects.get(codename="view_accessattempt"))
    sign_in(client, User.objects.get(pk=user.pk))

    assert sections(client) == [*BUSINESS, "Administration"]
    assert model_names(client, "Administration") == ["Sign-in failures (lockouts)"]


def test_plurals_and_headings_are_plain(client, institution):
    sign_in(client, User.objects.create_superuser("root", password="pw"))
    html = client.get(reverse("admin:index")).content.decode()

    assert "Transfer batches" in html
    assert "Transfer batchs" not in html
    assert "Ledger entries" in html
    assert "Card authorizations" in html
    assert "PIN unblocks" in html
    assert "Failed PAN lookups" in html
    assert re.search(r"<h1>Today&#x27;s work</h1>|<h1>Today's work</h1>", html)
    # Every model's plural reads as English does.
    for model in admin.site._registry:
        plural = str(model._meta.verbose_name_plural)
        assert not re.search(r"(ch|sh|x|ss)s$", plural), plural


def test_no_view_site_link(client, institution):
    sign_in(client, User.objects.create_superuser("root", password="pw"))
    html = client.get(reverse("admin:index")).content.decode()

    assert "View site" not in html
    assert admin.site.site_url is None


def test_products_are_shown_by_name(client, institution):
    populated(institution)
    sign_in(client, User.objects.create_superuser("root", password="pw"))
    account = Account.objects.filter(institution=institution, product__isnull=False).first()
    card = Card.objects.filter(institution=institution).first()

    accounts = client.get(reverse("admin:accounts_account_changelist")).content.decode()
    assert account.product.name in accounts
    assert f">{account.product.code}<" not in accounts
    cards = client.get(reverse("admin:cards_card_changelist")).content.decode()
    assert f">{card.product.name}</a>" in cards
    customer = client.get(
        reverse("admin:customers_customer_change", args=[account.customer_id])
    ).content.decode()
    assert account.product.name in customer
    products = client.get(reverse("admin:accounts_accountproduct_changelist"))
    assert products.context["cl"].list_display[0] == "name"
    assert AccountProduct.objects.filter(institution=institution).exists()
