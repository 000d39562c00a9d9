"""The back office without the framework showing through (issue 33, item 4;
docs/back-office.md "The menu and its words"): business apps first and the framework's tables
grouped under "Administration", headings and plurals in plain language, no "View site",
products by name."""

import html
import re

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission, User
from django.test import RequestFactory
from django.urls import reverse
from django.utils.html import escape
from django.utils.text import capfirst

from accounts.models import Account, AccountProduct
from backoffice.sites import ADMINISTRATION_NAMES
from cards.models import Card
from customers.models import Customer
from tests.backoffice.helpers import admin_pages, populated, staff
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
    "Interest",
    "Payments to other banks",
    "Program decisioning",
    "Reconciliation",
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
        "Staff security events",
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


# --- plain-language headings (backoffice.sites.plain_heading) --------------------------------
# Django's words for its headings: "Select account to change", "Select account to view",
# "Change account", "View account", "Add account".
DEVELOPER_WORDS = re.compile(r"Select | to change| to view|Change |View |Add ")
SITE_TITLE = "TX back office"


def headings(response) -> tuple[str, str]:
    """The page's one <h1> and its browser tab's title, as read."""
    page = response.content.decode()
    (h1,) = re.findall(r"<h1[^>]*>(.*?)</h1>", page, re.S)
    (title,) = re.findall(r"<title>(.*?)</title>", page, re.S)
    return html.unescape(h1.strip()), html.unescape(title.strip())


def test_every_list_and_page_has_a_plain_heading(admin_client, institution):
    """As a superuser, every registered model's list (Django's own admins too) and the pages
    of its rows: no heading in Django's words; a list says what it lists, a row's page names
    the row, and the browser tab says the same."""
    populated(institution)
    lists = pages = 0
    for url, response in admin_pages(admin_client, institution, rows=3):
        heading, tab = headings(response)
        assert not DEVELOPER_WORDS.search(heading), (url, heading)
        assert not DEVELOPER_WORDS.search(tab), (url, tab)
        assert tab == f"{heading} | {SITE_TITLE}", url
        opts = response.context["opts"]
        if "cl" in response.context:
            lists += 1
            plural = capfirst(opts.verbose_name_plural)
            assert heading == ADMINISTRATION_NAMES.get(opts.label, plural), url
            continue
        pages += 1
        original = response.context["original"]
        if isinstance(original, Customer):  # the customer page: their name
            assert heading == f"{original.first_name} {original.last_name}", url
            continue
        name, kind = str(original), capfirst(opts.verbose_name)
        assert heading in {capfirst(name), f"{kind} {name}"}, (url, heading)
        assert "<h2>" + escape(name) not in response.content.decode()  # not said twice
    assert lists == len(admin.site._registry)
    assert pages > 40


def test_a_row_page_and_a_list_read_as_staff_say_them(admin_client, institution):
    populated(institution)
    account = Account.objects.filter(
        institution=institution, kind="customer", currency="EUR"
    ).first()
    user = User.objects.get(username="maker")

    page = admin_client.get(reverse("admin:accounts_account_change", args=[account.pk]))
    assert headings(page) == (
        f"Account {account.pk} (EUR)",
        f"Account {account.pk} (EUR) | {SITE_TITLE}",
    )
    page = admin_client.get(reverse("admin:auth_user_change", args=[user.pk]))
    assert headings(page) == ("User maker", f"User maker | {SITE_TITLE}")
    # Statement lines are "transactions" to staff (accounts.models.statement).
    lines = admin_client.get(reverse("admin:accounts_statementline_changelist"))
    assert headings(lines) == ("Transactions", f"Transactions | {SITE_TITLE}")
    users = admin_client.get(reverse("admin:auth_user_changelist"))
    assert headings(users)[0] == "Staff users"  # as the menu names them
    # A page that sets its own title keeps it: an action's confirmation.
    confirmation = admin_client.post(
        reverse("admin:accounts_account_changelist"),
        {"action": "freeze_accounts", "_selected_action": [account.pk]},
    )
    assert headings(confirmation)[0] == "Freeze accounts"


def test_every_add_form_is_new_something(admin_client, admin_user, institution):
    request = RequestFactory().get("/admin/")
    request.user = admin_user
    checked = 0
    for model, model_admin in admin.site._registry.items():
        if not model_admin.has_add_permission(request):
            continue
        opts = model._meta
        response = admin_client.get(reverse(f"admin:{opts.app_label}_{opts.model_name}_add"))
        assert response.status_code == 200, opts.label
        heading, tab = headings(response)
        assert heading == f"New {opts.verbose_name}", opts.label
        assert tab == f"New {opts.verbose_name} | {SITE_TITLE}", opts.label
        checked += 1
    assert checked >= 5


def test_a_rows_history_and_an_apps_page_are_plain_too(admin_client, institution):
    populated(institution)
    account = Account.objects.filter(
        institution=institution, kind="customer", currency="EUR"
    ).first()
    history = admin_client.get(reverse("admin:accounts_account_history", args=[account.pk]))
    assert headings(history) == (
        f"History: Account {account.pk} (EUR)",
        f"History: Account {account.pk} (EUR) | {SITE_TITLE}",
    )
    app_page = admin_client.get(reverse("admin:app_list", args=["accounts"]))
    assert headings(app_page) == ("Accounts", f"Accounts | {SITE_TITLE}")
