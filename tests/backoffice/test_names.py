"""Names, not codes (issue 48 item 2; backoffice/names.py, docs/back-office.md "Names, not
codes"): two customers of one name told apart in the search and the lists, by what never
includes their national id; countries by name; merchant categories by their ISO 18245
description; statement line types and rule kinds in words; approvals saying what is asked, for
whom and how much."""

from datetime import date

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import StatementLine
from backoffice import names
from backoffice.services.approvals import approval_request_adjustment
from cards.models import Card
from core.actors import Actor
from core.operations import run
from customers.services import customer_create
from monitoring.models import MonitoringRule
from tests.accounts.ledger.helpers import open_account
from tests.backoffice.helpers import staff
from tests.cards.helpers import issue_card, make_account, make_institution
from tests.staff import sign_in

pytestmark = pytest.mark.django_db

SEARCH = reverse("admin:search")


@pytest.fixture
def bank():
    return make_institution()


@pytest.fixture
def namesakes(bank):
    """Two John Smiths of one bank, each with a national id (never shown to tell them apart)."""
    london = customer_create(
        institution=bank,
        first_name="John",
        last_name="Smith",
        country_code="826",
        email="john.smith@example.org",
        date_of_birth=date(1970, 3, 1),
        national_id="AB123456C",
        address={
            "line1": "1 High Street",
            "city": "London",
            "postal_code": "N1 1AA",
            "country_code": "826",
        },
    )
    berlin = customer_create(
        institution=bank,
        first_name="John",
        last_name="Smith",
        country_code="276",
        email="smith@example.de",
        date_of_birth=date(1991, 11, 30),
        national_id="DE987654321",
    )
    return london, berlin


@pytest.fixture
def support(client, bank):
    sign_in(client, staff("support", roles=["support"], institutions=[bank]))
    return client


def test_the_search_tells_two_people_of_one_name_apart(support, namesakes):
    london, berlin = namesakes
    response = support.post(SEARCH, {"q": "John Smith"})
    (group,) = [group for group in response.context["groups"] if group.kind == "customers"]
    details = {hit.url: hit.detail for hit in group.hits}
    assert len(details) == 2 and len(set(details.values())) == 2
    by_url = {reverse("admin:customers_customer_change", args=[c.pk]): c for c in namesakes}
    assert details[next(u for u, c in by_url.items() if c == london)] == (
        f"born 1970-03-01 · London, United Kingdom · j•••@example.org · {london.pk}"
    )
    assert details[next(u for u, c in by_url.items() if c == berlin)] == (
        f"born 1991-11-30 · Germany · s•••@example.de · {berlin.pk}"
    )
    html = response.content.decode()
    for secret in ("AB123456C", "456C", "DE987654321", "4321", "john.smith@", "smith@example"):
        assert secret not in html, secret


def test_the_customer_list_tells_them_apart_and_names_countries(support, namesakes):
    html = support.get(reverse("admin:customers_customer_changelist")).content.decode()
    for text in (
        "1970-03-01",
        "1991-11-30",
        "London, United Kingdom",
        '<td class="field-lives_in">Germany</td>',
        "j•••@example.org",
        "s•••@example.de",
    ):
        assert text in html, text
    for secret in ("456C", "4321", "john.smith@"):
        assert secret not in html, secret
    # The country filter names countries too.
    assert "United Kingdom</a>" in html and ">826<" not in html


def test_account_and_card_lists_tell_their_customers_apart(admin_client, bank, namesakes):
    for customer in namesakes:
        issue_card(make_account(bank, customer))
    for model in ("accounts/account", "cards/card"):
        html = admin_client.get(f"/admin/{model}/").content.decode()
        assert html.count("John Smith</a><br>") == 2, model
        assert "born 1970-03-01 · London, United Kingdom" in html, model
        assert "born 1991-11-30 · Germany" in html, model
    assert Card.objects.count() == 2


def test_the_edit_form_offers_countries_by_name(admin_client, namesakes):
    url = reverse("admin:customers_customer_change", args=[namesakes[1].pk])
    html = admin_client.get(url, {"edit": "1"}).content.decode()
    assert '<option value="276" selected>Germany</option>' in html
    assert '<option value="826">United Kingdom</option>' in html


def test_codes_in_words():
    assert names.country_name("276") == "Germany"
    assert names.country_name("999") == "999"  # unknown: as it is
    assert names.mcc_name("5411") == "Groceries and supermarkets (5411)"
    assert names.mcc_name("6011") == ("Financial institutions: automated cash disbursements (6011)")
    assert names.mcc_name("0001") == "0001"  # unassigned: as it is
    assert names.masked_email("ada@example.org") == "a•••@example.org"
    assert names.transaction_type("CashInc") == "money in"
    assert names.rule_kind("velocity_amount") == "too much spent in a window"
    # Every type and kind has its words.
    assert set(names.TRANSACTION_TYPES) == set(StatementLine.Type.values)
    assert set(names.RULE_KINDS) == set(MonitoringRule.Kind.values)


def test_statement_lines_read_their_type_in_words(admin_client, bank):
    account = open_account(bank, balance=5_000)
    html = admin_client.get(reverse("admin:accounts_statementline_changelist")).content.decode()
    assert '<td class="field-type_display">money in</td>' in html
    assert "CashInc</td>" not in html
    assert "?type=CashInc" in html and ">money in</a>" in html  # the filter, in words
    filtered = admin_client.get(
        reverse("admin:accounts_statementline_changelist"), {"type": "CashInc"}
    )
    assert {line.account_id for line in filtered.context["cl"].result_list} == {account.pk}
    page = admin_client.get(
        reverse("admin:customers_customer_change", args=[account.customer_id])
    ).content.decode()
    assert "<td>money in</td>" in page


def test_the_approvals_list_says_what_is_asked_for_whom_and_how_much(bank):
    account = open_account(bank, balance=10_000)
    maker = staff("maker", roles=["operations"], institutions=[bank])
    checker = staff("checker", roles=["compliance"], institutions=[bank])
    run(
        approval_request_adjustment,
        actor=Actor(user=maker),
        account=account,
        direction="credit",
        amount=1_234,
        description="Goodwill credit",
        reason="Ticket 4711.",
    )
    client = Client()
    sign_in(client, checker)
    response = client.get(reverse("admin:backoffice_approvalrequest_changelist"))
    html = response.content.decode()
    assert "Load (credit) of 12.34 EUR: “Goodwill credit”" in html
    customer_url = reverse("admin:customers_customer_change", args=[account.customer_id])
    assert f'<a href="{customer_url}">Ada Lovelace</a><br>' in html
    assert reverse("admin:accounts_account_change", args=[account.pk]) in html
