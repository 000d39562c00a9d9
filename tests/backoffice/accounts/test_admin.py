"""The money core's back office: every page renders, actions go through the services (events,
ledger invariants), each action is logged with the staff user, nothing is written by a form,
and no page shows a full account number."""

from datetime import timedelta

import pytest
from django.contrib import admin
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth.models import Permission, User
from django.test import RequestFactory
from django.urls import reverse
from django.utils import timezone

from accounts.models import Account, AccountProduct, Adjustment, Entry, Hold, Journal, StatementLine
from accounts.services import (
    account_create,
    account_set_status,
    adjustment_create,
    hold_capture,
    hold_place,
    internal_account,
)
from accounts.verification import ledger_breaches
from backoffice.admin.accounts import HoldInline, StatementLineInline
from core.actors import SYSTEM
from core.money import money
from customers.services import customer_create
from events.models import Event
from events.payloads import event_payload
from tests.factories import InstitutionFactory
from tests.staff import sign_in
from transfers.models import Transfer, TransferReversal
from transfers.services import transfer_create, transfer_reverse

pytestmark = pytest.mark.django_db


def url(model, view="changelist", *args):
    opts = model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=args)


def messages_of(response):
    return [str(message) for message in response.context["messages"]]


def action_names(response) -> list[str]:
    form = response.context["action_form"]
    return [] if form is None else [name for name, _ in form.fields["action"].choices if name]


REASON = "Ticket 4711: checked with the customer by phone."


def start_action(client, model, action, *objects):
    """The action picked on the list: its confirmation page, nothing changed yet."""
    return client.post(
        url(model), {"action": action, "_selected_action": [obj.pk for obj in objects]}
    )


def run_action(client, model, action, *objects, reason=REASON):
    """The action as staff run it: picked on the list, then confirmed with `reason`."""
    return client.post(
        url(model),
        {
            "action": action,
            "_selected_action": [obj.pk for obj in objects],
            "confirm": "yes",
            "reason": reason,
        },
        follow=True,
    )


def change_messages(obj) -> list[str]:
    entries = LogEntry.objects.filter(object_id=obj.pk).order_by("id")
    return [entry.get_change_message() for entry in entries]


def open_account(fi, first_name="Ada") -> Account:
    customer = customer_create(
        institution=fi, first_name=first_name, last_name="Lovelace", country_code="276"
    )
    product = AccountProduct.objects.get(institution=fi, code="AccountPrepaidAPI")
    return account_create(institution=fi, customer=customer, product=product, currency="EUR")


def load(account, amount, description="Load"):
    return adjustment_create(
        account=account,
        direction="credit",
        amount=amount,
        currency="EUR",
        description=description,
        actor=SYSTEM,
    )


def place_hold(account, amount, reason="Hotel"):
    return hold_place(
        account=account,
        amount=amount,
        currency="EUR",
        expires_at=timezone.now() + timedelta(days=1),
        reason=reason,
        actor=SYSTEM,
    )


def refreshed(obj):
    obj.refresh_from_db()
    return obj


@pytest.fixture
def fi(db):
    return InstitutionFactory()


@pytest.fixture
def money_world(fi):
    """Alice loaded with 100.00 EUR, 25.00 sent to Bob (5.00 of it reversed), 10.50 held; a
    captured hold; so at least one row of every money model."""
    alice = open_account(fi, "Alice")
    bob = open_account(fi, "Bob")
    adjustment = load(alice, 10_000)
    transfer = transfer_create(
        institution=fi,
        source=alice,
        destination=bob,
        amount=2_500,
        currency="EUR",
        description="Rent",
        actor=SYSTEM,
    )
    reversal = transfer_reverse(transfer=transfer, amount=500, actor=SYSTEM)
    captured = hold_capture(hold=place_hold(alice, 300, "Taxi"))
    hold = place_hold(alice, 1_050)
    return {
        "alice": refreshed(alice),
        "bob": refreshed(bob),
        Account: refreshed(alice),
        AccountProduct: alice.product,
        Adjustment: adjustment,
        Transfer: refreshed(transfer),
        "reversal": reversal,
        Hold: hold,
        "captured": captured,
        Journal: transfer.journal,
        Entry: transfer.journal.entries.first(),
        StatementLine: StatementLine.objects.filter(transfer=transfer).first(),
    }


MODELS = [Account, AccountProduct, Hold, Journal, Entry, Adjustment, Transfer, StatementLine]


def account_numbers():
    numbers = list(Account.objects.exclude(account_number=None).values_list("account_number"))
    assert numbers
    return [number for (number,) in numbers]


# --- every page renders ---------------------------------------------------------------------
def test_admin_index_lists_every_money_model(admin_client):
    response = admin_client.get("/admin/")
    assert response.status_code == 200
    for model in MODELS:
        assert url(model).encode() in response.content


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_changelist_and_change_page_render(admin_client, money_world, model):
    changelist = admin_client.get(url(model))
    assert changelist.status_code == 200
    assert changelist.context["cl"].result_count >= 1
    obj = money_world[model]
    change = admin_client.get(url(model, "change", obj.pk))
    assert change.status_code == 200
    history = admin_client.get(url(model, "history", obj.pk))
    assert history.status_code == 200


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_changelist_search_and_filters_render(admin_client, money_world, model):
    response = admin_client.get(url(model), {"q": "x"})
    assert response.status_code == 200
    for spec in response.context["cl"].filter_specs:
        for choice in spec.choices(response.context["cl"]):
            assert admin_client.get(url(model) + choice["query_string"]).status_code == 200


def test_every_page_is_free_of_full_account_numbers(admin_client, money_world):
    pages = ["/admin/"]
    for model in MODELS:
        obj = money_world[model]
        pages += [url(model), url(model, "change", obj.pk), url(model, "history", obj.pk)]
    for account in Account.objects.all():
        pages += [url(Account, "change", account.pk)]
    pages += [url(Account) + "?q=" + money_world["alice"].pk]
    numbers = account_numbers()
    for page in pages:
        response = admin_client.get(page)
        assert response.status_code == 200, page
        html = response.content.decode()
        for number in numbers:
            assert number not in html, page


def test_links_from_account_page_filter_the_other_lists(admin_client, money_world):
    alice = money_world["alice"]
    html = admin_client.get(url(Account, "change", alice.pk)).content.decode()
    for model, field in [
        (Hold, "account"),
        (StatementLine, "account"),
        (Entry, "account"),
        (Adjustment, "account"),
        (Transfer, "source_account"),
        (Transfer, "destination_account"),
    ]:
        link = f"{url(model)}?{field}={alice.pk}"
        assert link in html
        response = admin_client.get(link)
        assert response.status_code == 200
        rows = response.context["cl"].result_list
        assert len(rows) == model.objects.filter(**{field: alice}).count()
        assert all(getattr(row, f"{field}_id") == alice.pk for row in rows)


# --- accounts: list, search, masking --------------------------------------------------------
def test_money_is_shown_in_major_units_with_its_currency():
    assert money(1050, "EUR") == "10.50 EUR"
    assert money(1050, "GHS") == "10.50 GHS"
    assert money(-5, "EUR") == "-0.05 EUR"
    assert money(0, "EUR") == "0.00 EUR"
    assert money(123_456_789, "EUR") == "1,234,567.89 EUR"
    assert money(500, "JPY") == "500 JPY"
    assert money(1_500, "KWD") == "1.500 KWD"
    assert money(None, "EUR") == "—"


def test_account_list_columns_and_balances(admin_client, money_world):
    alice = money_world["alice"]
    response = admin_client.get(url(Account))
    assert response.context["cl"].list_display == [
        "action_checkbox",
        "id",
        "institution",
        "customer_link",
        "product_name",
        "currency",
        "status",
        "posted_display",
        "pending_display",
        "available_display",
        "kind",
    ]
    # 100.00 loaded - 25.00 sent + 5.00 reversed - 3.00 captured = 77.00; 10.50 held.
    assert (alice.posted, alice.pending, alice.available) == (7_700, 1_050, 6_650)
    html = response.content.decode()
    for shown in ["77.00 EUR", "10.50 EUR", "66.50 EUR", alice.product.name]:
        assert shown in html
    assert url(type(alice.customer), "change", alice.customer.pk) in html


def test_account_search_by_id_and_customer_id_never_by_number(admin_client, money_world):
    alice, bob = money_world["alice"], money_world["bob"]
    for term in [alice.pk, alice.customer_id, f"  {alice.pk} "]:
        response = admin_client.get(url(Account), {"q": term})
        assert list(response.context["cl"].result_list) == [alice]
    response = admin_client.get(url(Account), {"q": alice.account_number})
    assert list(response.context["cl"].result_list) == []
    response = admin_client.get(url(Account), {"q": bob.account_number[-6:]})
    assert list(response.context["cl"].result_list) == []


def test_account_page_masks_the_number_and_shows_balances(admin_client, money_world):
    alice = money_world["alice"]
    response = admin_client.get(url(Account, "change", alice.pk))
    html = response.content.decode()
    assert f"•••• {alice.account_number[-4:]}" in html
    assert alice.account_number not in html
    assert "77.00 EUR" in html and "66.50 EUR" in html
    # View-only: no form field at all, no save button.
    assert list(response.context["adminform"].form.fields) == []
    assert 'name="_save"' not in html


def test_account_page_shows_recent_holds_and_statement_lines(
    admin_client, money_world, monkeypatch
):
    alice = money_world["alice"]
    response = admin_client.get(url(Account, "change", alice.pk))
    inlines = {f.formset.model: f.formset for f in response.context["inline_admin_formsets"]}
    assert {form.instance for form in inlines[Hold].forms} == {
        money_world[Hold],
        money_world["captured"],
    }
    assert len(inlines[StatementLine].forms) == StatementLine.objects.filter(account=alice).count()

    monkeypatch.setattr(HoldInline, "recent", 1)
    monkeypatch.setattr(StatementLineInline, "recent", 2)
    response = admin_client.get(url(Account, "change", alice.pk))
    inlines = {f.formset.model: f.formset for f in response.context["inline_admin_formsets"]}
    assert [form.instance for form in inlines[Hold].forms] == [money_world[Hold]]
    newest = list(StatementLine.objects.filter(account=alice).order_by("-id")[:2])
    assert [form.instance for form in inlines[StatementLine].forms] == newest


# --- accounts: actions ----------------------------------------------------------------------
def status_events(account):
    events = Event.objects.filter(object_id=account.pk, type="account.status_changed")
    return [event_payload(event)["data"] for event in events.order_by("id")]


def test_freeze_and_unfreeze_go_through_the_service_and_are_logged(
    admin_client, admin_user, money_world
):
    alice, bob = money_world["alice"], money_world["bob"]
    response = run_action(admin_client, Account, "freeze_accounts", alice, bob)
    assert response.status_code == 200
    assert refreshed(alice).status == refreshed(bob).status == "frozen"
    assert status_events(alice) == [{"from": "active", "to": "frozen"}]
    assert any("Froze 2 account(s)" in m for m in messages_of(response))
    entry = LogEntry.objects.get(object_id=alice.pk)
    assert (entry.action_flag, entry.user) == (CHANGE, admin_user)
    assert entry.get_change_message() == (
        f"Status active → frozen (admin action “Freeze”; reason: “{REASON}”)."
    )
    assert entry.action_time is not None

    # Freezing again changes nothing, emits nothing, logs nothing.
    response = run_action(admin_client, Account, "freeze_accounts", alice)
    assert any("Already frozen" in m for m in messages_of(response))
    assert len(status_events(alice)) == 1
    assert LogEntry.objects.filter(object_id=alice.pk).count() == 1

    run_action(admin_client, Account, "activate_accounts", alice, reason="Fraud check cleared.")
    assert refreshed(alice).status == "active"
    assert status_events(alice)[-1] == {"from": "frozen", "to": "active"}
    assert change_messages(alice)[-1] == (
        "Status frozen → active (admin action “Unfreeze (activate)”; reason: “Fraud check "
        "cleared.”)."
    )
    assert ledger_breaches() == []


def test_close_of_a_non_empty_account_is_an_error_and_changes_nothing(admin_client, money_world):
    alice = money_world["alice"]
    response = run_action(admin_client, Account, "close_accounts", alice)
    assert response.status_code == 200
    assert [(m.level_tag, alice.pk in str(m)) for m in response.context["messages"]] == [
        ("error", True)
    ]
    assert "zero balance" in messages_of(response)[0]
    assert refreshed(alice).status == "active"
    assert status_events(alice) == []
    assert not LogEntry.objects.filter(object_id=alice.pk).exists()


def test_close_of_an_empty_account_closes_it_for_good(admin_client, admin_user, fi):
    empty = open_account(fi, "Eve")
    response = run_action(admin_client, Account, "close_accounts", empty)
    assert any("Closed 1 account(s)" in m for m in messages_of(response))
    assert refreshed(empty).status == "closed"
    assert status_events(empty) == [{"from": "active", "to": "closed"}]
    entry = LogEntry.objects.get(object_id=empty.pk)
    assert entry.user == admin_user
    assert entry.get_change_message() == (
        f"Status active → closed (admin action “Close”; reason: “{REASON}”)."
    )
    # Closed is final: unfreezing is refused with the service's message.
    response = run_action(admin_client, Account, "activate_accounts", empty)
    assert any("cannot go from closed to active" in m for m in messages_of(response))
    assert refreshed(empty).status == "closed"


def test_internal_accounts_status_is_not_changed_here(admin_client, money_world, fi):
    funding = internal_account(institution=fi, code=Account.InternalCode.FUNDING, currency="EUR")
    response = run_action(admin_client, Account, "freeze_accounts", funding)
    assert any("internal account" in m for m in messages_of(response))
    assert refreshed(funding).status == "active"
    assert not LogEntry.objects.filter(object_id=funding.pk).exists()


# --- holds ----------------------------------------------------------------------------------
def test_hold_list_columns(admin_client, money_world):
    response = admin_client.get(url(Hold))
    assert response.context["cl"].list_display == [
        "action_checkbox",
        "id",
        "account_link",
        "amount_display",
        "captured_display",
        "currency",
        "status",
        "expires_at",
        "placed_by",
    ]
    html = response.content.decode()
    assert "10.50 EUR" in html and "3.00 EUR" in html and "system" in html
    response = admin_client.get(url(Hold), {"status__exact": "captured"})
    assert list(response.context["cl"].result_list) == [money_world["captured"]]


def test_release_action_releases_through_the_service(admin_client, admin_user, money_world):
    hold, alice = money_world[Hold], money_world["alice"]
    response = run_action(admin_client, Hold, "release_holds", hold)
    assert any("Released 1 hold(s)" in m for m in messages_of(response))
    assert refreshed(hold).status == "released"
    assert refreshed(alice).pending == 0
    assert Event.objects.filter(object_id=hold.pk, type="hold.released").count() == 1
    entry = LogEntry.objects.get(object_id=hold.pk)
    assert (entry.action_flag, entry.user) == (CHANGE, admin_user)
    assert entry.get_change_message() == (
        f"Released 10.50 EUR on account {alice.pk} (admin action “Release”; reason: “{REASON}”)."
    )
    assert ledger_breaches() == []


def test_release_of_holds_that_are_not_active_is_a_message(admin_client, money_world):
    captured, hold = money_world["captured"], money_world[Hold]
    run_action(admin_client, Hold, "release_holds", hold)
    response = run_action(admin_client, Hold, "release_holds", hold, captured)
    shown = messages_of(response)
    assert any(f"{hold.pk} (released)" in m and f"{captured.pk} (captured)" in m for m in shown)
    assert refreshed(captured).status == "captured"
    assert LogEntry.objects.filter(object_id=hold.pk).count() == 1
    assert not LogEntry.objects.filter(object_id=captured.pk).exists()
    assert ledger_breaches() == []


# --- transfers ------------------------------------------------------------------------------
def test_transfer_list_columns_and_reversal_inline(admin_client, money_world):
    transfer = money_world[Transfer]
    response = admin_client.get(url(Transfer))
    assert response.context["cl"].list_display == [
        "action_checkbox",
        "id",
        "source_link",
        "destination_link",
        "amount_display",
        "reversed_display",
        "currency",
        "status",
        "created_at",
    ]
    html = response.content.decode()
    assert "25.00 EUR" in html and "5.00 EUR" in html
    response = admin_client.get(url(Transfer, "change", transfer.pk))
    (inline,) = response.context["inline_admin_formsets"]
    assert [form.instance for form in inline.formset.forms] == [money_world["reversal"]]
    assert not inline.has_add_permission and not inline.has_change_permission


def test_reverse_action_reverses_what_remains(admin_client, admin_user, money_world):
    transfer, alice, bob = money_world[Transfer], money_world["alice"], money_world["bob"]
    response = run_action(admin_client, Transfer, "reverse_transfers", transfer)
    assert any("Reversed 1 transfer(s)" in m for m in messages_of(response))
    transfer = refreshed(transfer)
    assert (transfer.status, transfer.reversed_amount) == ("reversed", 2_500)
    reversal = TransferReversal.objects.filter(transfer=transfer).order_by("-id").first()
    assert (reversal.amount, reversal.created_by_user) == (2_000, admin_user)
    assert (refreshed(alice).posted, refreshed(bob).posted) == (9_700, 0)
    assert Event.objects.filter(object_id=transfer.pk, type="transfer.reversed").count() == 2
    entry = LogEntry.objects.get(object_id=transfer.pk)
    assert (entry.action_flag, entry.user) == (CHANGE, admin_user)
    assert entry.get_change_message() == (
        f"Reversed 20.00 EUR (reversal {reversal.pk}; admin action “Reverse”; reason: “{REASON}”)."
    )
    assert ledger_breaches() == []

    # Nothing remains: an error message, nothing else.
    response = run_action(admin_client, Transfer, "reverse_transfers", transfer)
    assert any("already fully reversed" in m for m in messages_of(response))
    assert TransferReversal.objects.filter(transfer=transfer).count() == 2
    assert LogEntry.objects.filter(object_id=transfer.pk).count() == 1


def test_reverse_refused_by_the_service_is_a_message(admin_client, money_world):
    transfer, bob = money_world[Transfer], money_world["bob"]
    account_set_status(account=bob, status="frozen")
    response = run_action(admin_client, Transfer, "reverse_transfers", transfer)
    assert response.status_code == 200
    assert any(transfer.pk in m and "frozen" in m for m in messages_of(response))
    assert refreshed(transfer).reversed_amount == 500
    assert not LogEntry.objects.filter(object_id=transfer.pk).exists()
    assert ledger_breaches() == []


# --- every action that changes what a customer can do with money asks for a reason ---------
def reason_target(case: str, world, fi):
    """The object `case`'s action changes, as the action finds it."""
    if case == "activate_accounts":
        return account_set_status(account=world["bob"], status="frozen").value
    if case == "close_accounts":
        return open_account(fi, "Eve")  # empty: it may be closed
    return {
        "freeze_accounts": world["alice"],
        "release_holds": world[Hold],
        "reverse_transfers": world[Transfer],
    }[case]


# action -> (model, template of its confirmation page, the change message once it ran with
# `REASON` on `target`, the money its page shows for `world`)
REASON_ACTIONS = {
    "freeze_accounts": (
        Account,
        "admin/accounts/account/status_confirmation.html",
        lambda target: f"Status active → frozen (admin action “Freeze”; reason: “{REASON}”).",
        lambda world: [money(world["alice"].posted, "EUR"), money(world["alice"].available, "EUR")],
    ),
    "activate_accounts": (
        Account,
        "admin/accounts/account/status_confirmation.html",
        lambda target: (
            f"Status frozen → active (admin action “Unfreeze (activate)”; reason: “{REASON}”)."
        ),
        lambda world: ["20.00 EUR"],  # Bob's 25.00 less the 5.00 sent back
    ),
    "close_accounts": (
        Account,
        "admin/accounts/account/status_confirmation.html",
        lambda target: f"Status active → closed (admin action “Close”; reason: “{REASON}”).",
        lambda world: ["0.00 EUR"],
    ),
    "release_holds": (
        Hold,
        "admin/accounts/hold/release_confirmation.html",
        lambda target: (
            f"Released 10.50 EUR on account {target.account_id} (admin action “Release”; "
            f"reason: “{REASON}”)."
        ),
        lambda world: ["10.50 EUR", "0.00 EUR"],
    ),
    "reverse_transfers": (
        Transfer,
        "admin/transfers/transfer/reverse_confirmation.html",
        lambda target: (
            f"Reversed 20.00 EUR (reversal "
            f"{TransferReversal.objects.filter(transfer=target).latest('id').pk}; admin action "
            f"“Reverse”; reason: “{REASON}”)."
        ),
        lambda world: ["25.00 EUR", "5.00 EUR", "20.00 EUR"],  # amount, reversed, to reverse
    ),
}


def row_of(obj) -> dict:
    return type(obj).objects.filter(pk=obj.pk).values().get()


@pytest.mark.parametrize("case", REASON_ACTIONS)
def test_an_action_first_shows_what_it_changes_and_asks_for_the_reason(
    admin_client, money_world, fi, case
):
    model, template, _, shown = REASON_ACTIONS[case]
    target = reason_target(case, money_world, fi)
    before, events, entries = row_of(target), Event.objects.count(), LogEntry.objects.count()

    page = start_action(admin_client, model, case, target)

    assert page.status_code == 200
    assert template in [t.name for t in page.templates]
    assert page.context["objects"] == [target]
    assert list(page.context["form"].fields) == ["reason"]
    assert page.context["form"].fields["reason"].required
    html = page.content.decode()
    assert target.pk in html
    for amount in shown(money_world):
        assert amount in html, amount
    for number in account_numbers():
        assert number not in html  # the last four only
    assert (row_of(target), Event.objects.count(), LogEntry.objects.count()) == (
        before,
        events,
        entries,
    )


@pytest.mark.parametrize("reason", ["", "   ", "x" * 501], ids=["empty", "blank", "too-long"])
@pytest.mark.parametrize("case", REASON_ACTIONS)
def test_without_a_reason_the_page_comes_again_and_nothing_changes(
    admin_client, money_world, fi, case, reason
):
    model, template, _, _ = REASON_ACTIONS[case]
    target = reason_target(case, money_world, fi)
    before, events, entries = row_of(target), Event.objects.count(), LogEntry.objects.count()

    page = run_action(admin_client, model, case, target, reason=reason)

    assert page.status_code == 200
    assert template in [t.name for t in page.templates]
    expected = (
        "Ensure this value has at most 500 characters (it has 501)."
        if reason and reason.strip()
        else "This field is required."
    )
    assert page.context["form"].errors == {"reason": [expected]}
    assert expected in page.content.decode()
    assert (row_of(target), Event.objects.count(), LogEntry.objects.count()) == (
        before,
        events,
        entries,
    )
    assert ledger_breaches() == []


@pytest.mark.parametrize("case", REASON_ACTIONS)
def test_from_the_page_button_the_reason_is_asked_and_the_page_comes_back(
    admin_client, admin_user, money_world, fi, case
):
    """The row's page button (`return_to_object`): its confirmation, refused without a reason,
    then run with one and back to the row's page."""
    model, template, message, _ = REASON_ACTIONS[case]
    target = reason_target(case, money_world, fi)
    before = row_of(target)
    pressed = {
        "action": case,
        "_selected_action": target.pk,
        "index": "0",
        "return_to_object": target.pk,
    }

    page = admin_client.post(url(model), pressed)
    assert template in [t.name for t in page.templates]
    assert f'name="return_to_object" value="{target.pk}"' in page.content.decode()

    again = admin_client.post(url(model), {**pressed, "confirm": "yes", "reason": ""})
    assert again.status_code == 200
    assert again.context["form"].errors == {"reason": ["This field is required."]}
    assert f'name="return_to_object" value="{target.pk}"' in again.content.decode()
    assert row_of(target) == before
    assert not LogEntry.objects.filter(object_id=target.pk).exists()

    done = admin_client.post(url(model), {**pressed, "confirm": "yes", "reason": REASON})
    assert (done.status_code, done["Location"]) == (302, url(model, "change", target.pk))
    assert row_of(target) != before
    entry = LogEntry.objects.get(object_id=target.pk)
    assert (entry.action_flag, entry.user) == (CHANGE, admin_user)
    assert entry.get_change_message() == message(target)
    assert ledger_breaches() == []


# --- statement lines ------------------------------------------------------------------------
def test_statement_lines_filter_and_search(admin_client, money_world):
    alice = money_world["alice"]
    response = admin_client.get(url(StatementLine), {"q": alice.pk})
    rows = list(response.context["cl"].result_list)
    assert rows == list(StatementLine.objects.filter(account=alice).order_by("-id"))
    response = admin_client.get(url(StatementLine), {"type__exact": "CashInc", "q": alice.pk})
    assert {row.type for row in response.context["cl"].result_list} == {"CashInc"}
    response = admin_client.get(url(StatementLine), {"settlement_status__exact": "Unsettled"})
    assert list(response.context["cl"].result_list) == []
    html = admin_client.get(url(StatementLine), {"q": alice.pk}).content.decode()
    assert "100.00 EUR" in html and "-25.00 EUR" in html  # debits with a minus


# --- nothing is written by a form -----------------------------------------------------------
# (Account products are added and changed through their services: test_products_admin.py.)
READ_ONLY = [Journal, Entry, Adjustment, StatementLine]
ACTIONS_ONLY = [Account, Hold, Transfer]


@pytest.mark.parametrize("model", READ_ONLY + ACTIONS_ONLY, ids=lambda model: model.__name__)
def test_no_add_no_delete_no_form_save(admin_client, money_world, model):
    obj = money_world[model]
    assert admin_client.get(url(model, "add")).status_code == 403
    assert admin_client.get(url(model, "delete", obj.pk)).status_code == 403
    assert admin_client.post(url(model, "delete", obj.pk), {"post": "yes"}).status_code == 403
    assert admin_client.post(url(model, "change", obj.pk), {"_save": "1"}).status_code == 403
    changelist = admin_client.get(url(model))
    assert "delete_selected" not in action_names(changelist)
    assert url(model, "add").encode() not in changelist.content
    assert model.objects.filter(pk=obj.pk).exists()


@pytest.mark.parametrize("model", [Journal, Entry], ids=lambda model: model.__name__)
def test_ledger_has_no_add_change_delete_permission(admin_client, admin_user, money_world, model):
    request = RequestFactory().get("/admin/")
    request.user = admin_user
    model_admin = admin.site._registry[model]
    obj = money_world[model]
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request)
    assert not model_admin.has_change_permission(request, obj)
    assert not model_admin.has_delete_permission(request, obj)
    assert action_names(admin_client.get(url(model))) == []


def test_journal_page_shows_its_entries_and_what_it_records(admin_client, money_world):
    journal = money_world[Journal]
    response = admin_client.get(url(Journal, "change", journal.pk))
    (inline,) = response.context["inline_admin_formsets"]
    assert {form.instance for form in inline.formset.forms} == set(journal.entries.all())
    assert not inline.has_add_permission
    assert not inline.has_change_permission
    assert not inline.has_delete_permission
    assert url(Transfer, "change", money_world[Transfer].pk) in response.content.decode()
    reversal_journal = money_world["reversal"].journal
    response = admin_client.get(url(Journal, "change", reversal_journal.pk))
    assert url(Transfer, "change", money_world[Transfer].pk) in response.content.decode()


def test_staff_without_change_permission_has_no_actions(client, money_world):
    staff = User.objects.create_user("viewer", password="pw", is_staff=True)
    staff.user_permissions.set(
        Permission.objects.filter(codename__in=["view_account", "view_hold", "view_transfer"])
    )
    sign_in(client, staff)
    for model in ACTIONS_ONLY:
        response = client.get(url(model))
        assert response.status_code == 200
        assert action_names(response) == []
    alice = money_world["alice"]
    client.post(url(Account), {"action": "freeze_accounts", "_selected_action": [alice.pk]})
    run_action(client, Account, "freeze_accounts", alice)  # the confirmation's post too
    assert refreshed(alice).status == "active"
    assert not LogEntry.objects.exists()
