"""The customer page: accounts, cards and the newest statement lines together, and nothing
secret on it (docs/back-office.md)."""

import pytest
from django.urls import reverse

from accounts.models import Account, StatementLine
from cards.models import Card
from customers.models import Customer
from monitoring.models import MonitoringAlert
from tests.api.test_scopes import World
from tests.backoffice.helpers import staff
from tests.cards.helpers import make_institution
from tests.staff import sign_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    world = World("v2", make_institution())
    world.make("customer", "account", "card", "pan", "authorization", "transfer")
    # A national id, so the page can be checked for it.
    assert world.api.patch(
        f"/customers/{world['customer']}", {"nationalId": "DE-123-45-6789"}
    ).status_code in (200, 201)
    return world


def page(client, customer_id) -> str:
    response = client.get(reverse("admin:customers_customer_change", args=[customer_id]))
    assert response.status_code == 200
    return response.content.decode()


def test_the_customer_page_shows_accounts_cards_and_recent_lines(admin_client, world):
    html = page(admin_client, world["customer"])
    account = Account.objects.get(pk=world["account"])
    card = Card.objects.get(pk=world["card"])

    assert reverse("admin:accounts_account_change", args=[account.pk]) in html
    assert f"•••• {account.account_number[-4:]}" in html
    assert reverse("admin:cards_card_change", args=[card.pk]) in html
    assert card.masked_pan in html
    lines = StatementLine.objects.filter(account=account).order_by("-id")
    assert lines.count() >= 3  # the load, the payment, the transfer
    for line in lines[:20]:
        assert reverse("admin:accounts_statementline_change", args=[line.pk]) in html
    # Links to the whole lists.
    assert f"?customer={world['customer']}" in html


def test_the_customer_page_shows_no_secret(admin_client, world):
    html = page(admin_client, world["customer"])
    account = Account.objects.get(pk=world["account"])
    assert world["pan"] not in html
    assert account.account_number not in html
    assert "DE-123-45-6789" not in html
    assert "6789" in html  # the national id's last four, masked
    customer = Customer.objects.get(pk=world["customer"])
    assert customer.national_id_last4 == "6789"


def test_a_new_customer_shows_none(admin_client, world):
    html = page(admin_client, world._customer_named("Hedy"))
    assert "No account." in html and "No card." in html and "No statement line." in html


def test_a_limited_user_cannot_open_another_institutions_customer(client, world):
    sign_in(client, staff("support", roles=["support"], institutions=[make_institution()]))
    url = reverse("admin:customers_customer_change", args=[world["customer"]])
    assert client.get(url).status_code == 302


def test_the_page_is_read_first_and_editing_is_a_step(admin_client, world):
    url = reverse("admin:customers_customer_change", args=[world["customer"]])

    html = page(admin_client, world["customer"])
    assert "Who they are" in html
    assert 'name="first_name"' not in html  # not a form
    assert 'id="edit-customer" href="?edit=1"' in html
    form = admin_client.get(url, {"edit": "1"}).content.decode()
    assert 'name="first_name"' in form

    saved = admin_client.post(
        f"{url}?edit=1",
        {"first_name": "Ada", "last_name": "Byron", "country_code": "276"},
    )

    assert saved.status_code == 302
    assert Customer.objects.get(pk=world["customer"]).last_name == "Byron"


def test_the_page_shows_alerts_holds_disputes_and_pending_apart(client):
    from tests.backoffice.helpers import populated

    bank = make_institution()
    world = populated(bank)
    sign_in(client, staff("support", roles=["support"], institutions=[bank]))

    html = page(client, world["customer"])

    for heading in (
        "Open monitoring alerts",
        "Holds (money set aside)",
        "Disputes",
        "Pending: authorized, not yet presented",
        "Posted, and what was not charged",
    ):
        assert heading in html, heading
    assert reverse("admin:disputes_dispute_change", args=[world["dispute"]]) in html
    assert reverse("admin:accounts_hold_change", args=[world["hold"]]) in html
    alert = MonitoringAlert.objects.get()
    assert reverse("admin:monitoring_monitoringalert_change", args=[alert.pk]) in html
    assert 'id="edit-customer"' not in html  # support may look, not edit
