"""Every list of the back office exports to CSV what it shows (backoffice.exports,
docs/back-office.md "Exports"): its filters and search, streamed through a server-side cursor,
money in major units beside its currency, no formula, never a secret, and an audit record
naming the staff user."""

import csv
import io
import re

import pytest
from django.contrib import admin
from django.contrib.admin.utils import label_for_field
from django.db import connection
from django.http import StreamingHttpResponse
from django.urls import reverse

import cards.services.issuance as issuance
from accounts.models import Account, AccountProduct, StatementLine
from accounts.services import account_create, account_set_status, adjustment_create
from backoffice import exports
from backoffice.kit import CsvExport
from backoffice.models import StaffEvent
from backoffice.names import customer_detail, customer_name
from cards.models import Card
from core.actors import SYSTEM
from customers.models import Customer
from customers.services import customer_create
from tests.backoffice.helpers import staff
from tests.cards.helpers import issue_card, make_account
from tests.factories import InstitutionFactory
from tests.staff import sign_in

pytestmark = pytest.mark.django_db


def export_url(model) -> str:
    opts = model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_export")


def changelist_url(model) -> str:
    opts = model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")


def rows_of(response) -> list[list[str]]:
    assert isinstance(response, StreamingHttpResponse)
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith("attachment; filename=")
    text = b"".join(response.streaming_content).decode("utf-8-sig")
    return list(csv.reader(io.StringIO(text)))


def as_dicts(rows) -> list[dict]:
    header, *body = rows
    return [dict(zip(header, row, strict=True)) for row in body]


def open_account(fi, first_name="Ada", last_name="Lovelace") -> Account:
    customer = customer_create(
        institution=fi, first_name=first_name, last_name=last_name, country_code="276"
    )
    product = AccountProduct.objects.get(institution=fi, code="AccountPrepaidAPI")
    return account_create(institution=fi, customer=customer, product=product, currency="EUR")


def adjust(account, direction, amount, description="Load"):
    return adjustment_create(
        account=account,
        direction=direction,
        amount=amount,
        currency="EUR",
        description=description,
        actor=SYSTEM,
    )


@pytest.fixture
def fi(db):
    return InstitutionFactory()


# --- every list has it --------------------------------------------------------------------------
def test_every_list_of_ours_links_its_export_and_answers_a_csv(admin_client, fi):
    ours = [
        (model, model_admin)
        for model, model_admin in admin.site._registry.items()
        if isinstance(model_admin, CsvExport)
    ]
    assert len(ours) >= 30  # every admin of the back office, none left out
    for model, model_admin in ours:
        page = admin_client.get(changelist_url(model), {"o": "1"})
        assert page.status_code == 200, model
        html = page.content.decode()
        assert f'href="{export_url(model)}?o=1"' in html, model
        response = admin_client.get(export_url(model), {"o": "1"})
        assert response.status_code == 200, model
        header = rows_of(response)[0]
        labels = [
            str(label_for_field(name, model, model_admin))
            for name in model_admin.get_list_display(page.wsgi_request)
        ]
        assert [label for label in header if not label.endswith(" (currency)")] == labels


# --- what the list shows --------------------------------------------------------------------
def test_the_export_holds_the_rows_of_the_list_under_its_filters_and_search(admin_client, fi):
    ada, bob, eve = open_account(fi, "Ada"), open_account(fi, "Bob"), open_account(fi, "Eve")
    adjust(bob, "credit", 123_456)
    account_set_status(account=bob, status="frozen")
    account_set_status(account=eve, status="frozen")

    everything = as_dicts(rows_of(admin_client.get(export_url(Account))))
    assert {row["id"] for row in everything} >= {ada.pk, bob.pk, eve.pk}

    frozen = as_dicts(rows_of(admin_client.get(export_url(Account), {"status__exact": "frozen"})))
    assert [row["id"] for row in frozen] == [eve.pk, bob.pk]  # the list's order: newest first

    searched = rows_of(
        admin_client.get(export_url(Account), {"status__exact": "frozen", "q": bob.pk})
    )
    (row,) = as_dicts(searched)
    assert searched[0] == [
        "id",
        "institution",
        "customer",
        "product",
        "currency",
        "status",
        "posted",
        "posted (currency)",
        "pending",
        "pending (currency)",
        "available",
        "available (currency)",
        "kind",
    ]
    # Major units, no grouping, the currency beside; the links' text; the choice's label.
    assert row["posted"] == row["available"] == "1234.56"
    assert row["posted (currency)"] == "EUR"
    assert row["pending"] == "0.00"
    assert row["status"] == "Frozen"  # as the list shows it
    assert row["institution"] == str(fi)
    # The name, then what tells them from another of that name, as the list shows them.
    assert row["customer"] == f"{customer_name(bob.customer)} · {customer_detail(bob.customer)}"
    assert "<" not in "".join(row.values())

    # The list's ordering too.
    by_id = as_dicts(rows_of(admin_client.get(export_url(Account), {"o": "1"})))
    assert [row["id"] for row in by_id] == sorted(row["id"] for row in by_id)


def test_a_limited_user_exports_their_institutions_rows_only(client, fi):
    ours, theirs = open_account(fi), open_account(InstitutionFactory())
    sign_in(client, staff("sam", roles=["support"], institutions=[fi]))
    rows = as_dicts(rows_of(client.get(export_url(Account))))
    assert [row["id"] for row in rows] == [ours.pk]
    assert theirs.pk not in str(rows)


def test_a_user_who_may_not_see_a_list_may_not_export_it(client, fi):
    sign_in(client, staff("nobody"))
    assert client.get(export_url(Account)).status_code == 403


def test_debits_are_negative_numbers_and_never_taken_for_formulas(admin_client, fi):
    account = open_account(fi)
    adjust(account, "credit", 10_000, description='=HYPERLINK("http://evil.example","x")')
    adjust(account, "debit", 2_750, description="@SUM(1+1)")
    adjust(account, "credit", 5, description="+1 -1")
    adjust(account, "debit", 5, description="-1+1")
    rows = as_dicts(rows_of(admin_client.get(export_url(StatementLine), {"q": account.pk})))
    by_description = {row["description"]: row for row in rows}
    assert set(by_description) == {
        '\'=HYPERLINK("http://evil.example","x")',
        "'@SUM(1+1)",
        "'+1 -1",
        "'-1+1",
    }
    assert by_description["'@SUM(1+1)"]["amount"] == "-27.50"
    assert by_description["'@SUM(1+1)"]["amount (currency)"] == "EUR"
    assert by_description['\'=HYPERLINK("http://evil.example","x")']["amount"] == "100.00"
    assert by_description["'-1+1"]["amount"] == "-0.05"


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ("=1+1", "'=1+1"),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@A1", "'@A1"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("a=1", "a=1"),
        ("", ""),
        (exports.Number("-27.50"), "-27.50"),
    ],
)
def test_a_cell_starting_like_a_formula_is_written_after_a_quote(cell, written):
    assert exports.safe_cell(cell) == written


def test_a_customer_named_like_a_formula_is_exported_as_text(admin_client, fi):
    customer = customer_create(
        institution=fi, first_name="Ada", last_name="Lovelace", country_code="276"
    )
    Customer.objects.filter(pk=customer.pk).update(first_name="=cmd|' /C calc'!A0")
    (row,) = as_dicts(rows_of(admin_client.get(export_url(Customer), {"q": customer.pk})))
    assert row["first name"] == "'=cmd|' /C calc'!A0"


# --- never a secret -----------------------------------------------------------------------------
def test_no_export_unmasks_what_the_list_masks(admin_client, fi, monkeypatch):
    monkeypatch.setattr(issuance, "new_cvv", lambda: "739")  # a number no other cell holds
    customer = customer_create(
        institution=fi,
        first_name="Ada",
        last_name="Lovelace",
        country_code="276",
        national_id="123456789012",
    )
    account = make_account(fi, customer)
    card = issue_card(account, status=Card.Status.ACTIVE)
    texts = {
        model: b"".join(admin_client.get(export_url(model)).streaming_content).decode()
        for model in [Card, Account, Customer]
    }
    (row,) = as_dicts(rows_of(admin_client.get(export_url(Card))))
    assert row["PAN (masked)"] == card.masked_pan
    everything = "".join(texts.values())
    assert card.pan() not in everything
    assert card.cvv() == "739"
    assert not re.search(r"\b739\b", everything)
    assert Account.objects.get(pk=account.pk).account_number not in everything
    assert "123456789012" not in everything


# --- streamed -----------------------------------------------------------------------------------
def test_the_rows_stream_from_a_server_side_cursor_a_chunk_at_a_time(admin_client, fi, monkeypatch):
    monkeypatch.setattr(exports, "CHUNK", 2)
    accounts = [open_account(fi, name) for name in ["Ada", "Bob", "Eve", "Max", "Zoe"]]
    response = admin_client.get(export_url(Account), {"institution__id__exact": fi.pk})
    assert isinstance(response, StreamingHttpResponse)
    stream = iter(response.streaming_content)
    header = next(stream).decode()
    assert header.startswith("\ufeffid,")
    first = next(stream).decode()
    assert first.count("\r\n") == 2  # one chunk: two rows, not five
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM pg_cursors WHERE name LIKE '_django_curs_%%'")
        open_cursors = cursor.fetchall()
    assert len(open_cursors) == 1  # the rows left are still in PostgreSQL, behind the cursor
    rest = b"".join(stream).decode()
    assert (first + rest).count("\r\n") == len(accounts)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_cursors WHERE name LIKE '_django_curs_%%'")
        assert cursor.fetchone()[0] == 0


# --- audited ------------------------------------------------------------------------------------
def test_each_export_is_a_staff_event_naming_the_user_the_list_its_filters_and_rows(
    admin_client, admin_user, fi
):
    open_account(fi, "Ada")
    bob = open_account(fi, "Bob")
    account_set_status(account=bob, status="frozen")
    response = admin_client.get(export_url(Account), {"status__exact": "frozen", "o": "-1"})
    (event,) = StaffEvent.objects.filter(type="staff.list_exported")
    assert (event.user, event.by) == (admin_user, admin_user)
    assert event.data == {
        "list": "accounts.account",
        "filters": {"status__exact": "frozen", "o": "-1"},
        "rows": 1,
    }
    assert len(rows_of(response)) == 2  # recorded before the rows went out


def test_a_card_number_searched_is_recorded_by_its_last_four(admin_client, fi):
    admin_client.get(export_url(Card), {"q": "4111 1111 1111 1111", "status__exact": "active"})
    event = StaffEvent.objects.get(type="staff.list_exported")
    assert event.data["filters"] == {"q": "…1111", "status__exact": "active"}
    assert exports.masked(f"{'card_01JD0000000000000000000000'} 5555-5555-5555-4444") == (
        "card_01JD0000000000000000000000 …4444"
    )
