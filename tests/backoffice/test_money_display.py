"""Money reads one way in the back office: every amount in minor units is shown as
`core.money.money` writes it ("120.00 EUR"), never as the stored integer ("12000 EUR",
`"amount": 12000`); and a statement line whose authorization was reversed, expired or declined
is shown as such, not as a live debit (docs/back-office.md, "Money and line states")."""

import re
from datetime import timedelta

import pytest
from django.apps import apps
from django.contrib import admin
from django.db import models, transaction
from django.urls import reverse
from django.utils import timezone

from accounts.models import Account, Hold, StatementLine
from authorizations.models import Authorization
from monitoring.models import MonitoringAlert
from tests.api.test_scopes import MERCHANT, World, made
from tests.authorizations.helpers import expire_holds
from tests.backoffice.helpers import admin_pages, populated
from tests.cards.helpers import make_institution
from tests.events.test_actor import _ours

pytestmark = pytest.mark.django_db

# Amounts this file pays with: distinctive, so a raw one cannot hide among other numbers.
ALERTED = 12000  # a payment above the rule's threshold: 120.00 EUR
THRESHOLD = 11000  # the rule's: 110.00 EUR
PRESENTED = 2750  # authorized 25.00, presented 27.50 EUR (a tip)
REVERSED = 4000  # a cash withdrawal reversed: 40.00 EUR
EXPIRED = 3300  # a payment whose hold expired: 33.00 EUR
PENDING = 1500  # authorized, not yet presented: 15.00 EUR

# Integer columns that are money, whatever the model: a raw value of one of them on a page is a
# minor-unit amount shown as stored.
MONEY_FIELD = re.compile(
    r"amount|^(posted|pending|available|spent|cash_spent|pending_after)$|overdraft|limit|fee$"
    r"|^default_(per_transaction|daily|monthly|daily_cash)$|credit$|recovered|liable|written_off"
    r"|^remaining$"
)


def _pay(world, amount, *, type_="Goods", mcc="5812", name="Corner Shop") -> str:
    body = {
        "cardId": world["card"],
        "amount": amount,
        "currency": "EUR",
        "type": type_,
        "merchant": {**MERCHANT, "mcc": mcc, "name": name},
    }
    return made(world.api.post("/card-authorizations", body), "v2")["authorizationId"]


def seeded(institution) -> World:
    """`populated`'s row of every model, and the issue's payments: 120.00 EUR that alerts,
    25.00 presented as 27.50, 40.00 cash reversed, 33.00 expired, 15.00 pending."""
    world = populated(institution)
    rule = {
        "name": "big",
        "kind": "amount_threshold",
        "action": "alert",
        "amount": THRESHOLD,
        "currency": "EUR",
    }
    made(world.api.post("/monitoring-rules", rule), "v2")
    world.alerted = _pay(world, ALERTED, name="Big Shop")
    presented = _pay(world, 2500, name="Tip Bar")
    made(
        world.api.post(f"/card-authorizations/{presented}/presentments", {"amount": PRESENTED}),
        "v2",
    )
    world.reversed = _pay(world, REVERSED, type_="Cash", mcc="6011", name="ATM Mitte")
    made(world.api.post(f"/card-authorizations/{world.reversed}/reversals", {}), "v2")
    world.expired = _pay(world, EXPIRED, name="Fuel Stop")
    past = timezone.now() - timedelta(seconds=1)
    Hold.objects.filter(authorization__pk=world.expired).update(expires_at=past)
    assert "1 card authorization(s)" in expire_holds()
    world.pending = _pay(world, PENDING, name="Hotel Adlon")
    return world


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    """The seeded world, built once per module and worker (1.4 s, for each of six tests) in a
    transaction rolled back after the module's last test. Each test runs inside it, in the
    savepoint pytest-django's `db` opens and rolls back, so every test starts from these same
    rows (as tests/test_schemathesis.py's `world`)."""
    # Marked as Django's TestCase marks its class-wide transaction (setUpTestData's): the API's
    # durable blocks open inside it, as they do inside the test's own.
    outer = transaction.atomic()
    outer._from_testcase = True
    with django_db_blocker.unblock(), outer:
        yield seeded(make_institution())
        transaction.set_rollback(True)


def raw_amounts(institution) -> set[int]:
    """Every money value of the institution's rows (4 digits and more: a shorter number is too
    common on a page to tell), as stored."""
    values = set()
    for model, _ in registered():
        for field in model._meta.concrete_fields:
            if isinstance(field, models.IntegerField) and MONEY_FIELD.search(field.name):
                values.update(model._default_manager.values_list(field.name, flat=True))
    values.update(
        value
        for alert in MonitoringAlert.objects.filter(institution=institution)
        for value in alert.details.values()
        if isinstance(value, int)
    )
    return {value for value in values if isinstance(value, int) and abs(value) >= 1000}


def registered():
    return [(m, a) for m, a in admin.site._registry.items() if _ours(m)]


# A number alone, not part of an id, a decimal or a grouped number: a whole run of digits (with
# its minus sign) that no word character, dot, comma, slash, colon or dash comes before, and no
# word character or decimal part after.
ALONE = re.compile(r"(?<![\w.,/:-])-?[0-9]+(?!\w|[.,]\d)")


def shown_raw(html: str, amounts: set[int]) -> list[str]:
    """The amounts `html` shows as stored integers: the number alone, not part of an id, a
    decimal or a grouped number. (One pass over the page for the numbers alone, then each looked
    up among the amounts written as stored: not one pass per amount, some 10 s of this file's.)"""
    text = re.sub(r'<input type="hidden"[^>]*>', "", html)  # the form's own values
    text = re.sub(r'(href|value|name|id|class)="[^"]*"', "", text)
    stored = {str(amount) for amount in amounts}
    return sorted({match.group(0) for match in ALONE.finditer(text)} & stored)


def confirmation_of(client, label: str, action: str, pks: list):
    """An action's first answer on `pks`: its confirmation page, nothing changed yet."""
    app_label, model_name = label.split(".")
    url = reverse(f"admin:{app_label}_{model_name}_changelist")
    data = {"action": action, "index": "0", "select_across": "0", "_selected_action": pks}
    response = client.post(url, data)
    assert response.status_code == 200, (label, action)
    assert "confirm_name" in response.context, (label, action)
    return response


# The actions that show a confirmation page listing their objects, with what they show.
CONFIRMATIONS = [
    ("monitoring.monitoringalert", "resolve_alerts"),
    ("accounts.fee", "waive_fees"),
    ("disputes.dispute", "submit"),
    ("accounts.account", "freeze_accounts"),
    ("accounts.hold", "release_holds"),
    ("transfers.transfer", "reverse_transfers"),
]


def integer_ids() -> set[int]:
    """The integer primary keys of the rows the pages show (a ledger entry's, a log entry's):
    a page shows them as they are, and one of them may equal an amount (entry 1000, in a run
    that made a thousand entries before this test)."""
    ids = set()
    for model, _ in registered():
        if model._meta.pk.get_internal_type() in ("AutoField", "BigAutoField"):
            ids |= set(model.objects.values_list("pk", flat=True))
    return ids


def test_every_admin_page_shows_money_formatted(admin_client, world):
    amounts = raw_amounts(world.institution)
    assert {ALERTED, PRESENTED, REVERSED, EXPIRED, THRESHOLD, 100_000} <= amounts
    amounts -= integer_ids()
    found, pages = {}, 0
    for url, page in admin_pages(admin_client, world.institution, registered()):
        pages += 1
        if raw := shown_raw(page.content.decode(), amounts):
            found[url] = raw
    for label, action in CONFIRMATIONS:
        model = apps.get_model(label)
        pks = list(model.objects.filter(institution=world.institution).values_list("pk", flat=True))
        page = confirmation_of(admin_client, label, action, pks)
        pages += 1
        if raw := shown_raw(page.content.decode(), amounts):
            found[f"{label} {action}"] = raw
    assert pages > 60
    assert found == {}


def test_the_resolve_alert_page_shows_the_payment_in_units(admin_client, world):
    alert = MonitoringAlert.objects.get(subject_id=world.alerted)
    page = confirmation_of(admin_client, "monitoring.monitoringalert", "resolve_alerts", [alert.pk])
    html = page.content.decode()
    assert "120.00 EUR" in html
    assert "12000" not in html


def test_alert_details_are_fields_with_money(admin_client, world):
    alert = MonitoringAlert.objects.get(subject_id=world.alerted)
    html = admin_client.get(
        reverse("admin:monitoring_monitoringalert_change", args=[alert.pk])
    ).content.decode()
    assert "120.00 EUR" in html and "110.00 EUR" in html
    assert '"amount"' not in html and "12000" not in html


def test_titles_and_links_show_money(world):
    line = StatementLine.objects.get(authorization=world.alerted)
    assert str(line) == f"Goods 120.00 EUR {line.account_id}"
    hold = Hold.objects.get(authorization__pk=world.reversed)
    assert str(hold) == f"{hold.pk} 40.00 EUR (released)"
    assert (
        str(Authorization.objects.get(pk=world.reversed))
        == f"{world.reversed} 40.00 EUR (reversed)"
    )


# --- line states ------------------------------------------------------------------------------
def _lines_shown(html: str) -> str:
    return re.sub(r"\s+", " ", html)


def test_a_reversed_authorization_shows_as_reversed_not_as_a_live_debit(admin_client, world):
    line = StatementLine.objects.get(authorization=world.reversed)
    account = Account.objects.get(pk=line.account_id)
    pages = {
        "customer": reverse("admin:customers_customer_change", args=[account.customer_id]),
        "account": reverse("admin:accounts_account_change", args=[account.pk]),
        "lines": reverse("admin:accounts_statementline_changelist") + f"?account={account.pk}",
        "line": reverse("admin:accounts_statementline_change", args=[line.pk]),
    }
    for name, url in pages.items():
        html = _lines_shown(admin_client.get(url).content.decode())
        # Not a live debit: no signed amount, struck through, its state said.
        assert "−40.00 EUR" not in html and "-40.00 EUR" not in html, name
        assert "<s>40.00 EUR</s> reversed" in html, name
        assert "reversed (not charged)" in html, name
        if name != "line":
            assert "−33.00 EUR" not in html and "-33.00 EUR" not in html, name
            assert "<s>33.00 EUR</s> expired" in html, name
            # Pending apart from posted: signed (it holds money) and marked pending.
            assert "-15.00 EUR <em>pending</em>" in html, name
            assert "-27.50 EUR" in html, name  # posted


def test_the_live_lines_add_up_to_the_balance(world):
    from backoffice.admin.statement_lines import (  # what the pages show
        line_signed_amount,
        line_state,
    )

    account = Account.objects.get(pk=world["account"])
    lines = StatementLine.objects.filter(account=account).select_related(
        "hold", "authorization__hold"
    )
    states = {line.authorization_id: line_state(line) for line in lines if line.authorization_id}
    assert states[world.reversed] == "reversed"
    assert states[world.expired] == "expired"
    posted = sum(line_signed_amount(line) for line in lines if line_state(line) == "posted")
    pending = sum(line_signed_amount(line) for line in lines if line_state(line) == "pending")
    assert posted == account.posted
    # Pending: the active holds that have a line (a hold placed through /holds has none).
    held = Hold.objects.filter(account=account, status="active").exclude(statement_lines=None)
    assert -pending == sum(hold.amount for hold in held)
