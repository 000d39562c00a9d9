"""Payment orders over ACH (issue 49; docs/payments.md), over HTTP and through the files: an
external account made and shown by its last four, an order's refusals, a credit held, the
cut-off's one file re-parsing to the orders, delivery, settlement, and the simulated bank's
returns, changes and rejections booked, with the ledger checked at every step."""

import base64
from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from accounts.models import Account
from accounts.verification import ledger_breaches
from events.models import Event
from payments.calendar import ach_days_after, is_fed_business_day
from payments.models import ExternalAccount, PaymentOrder, RailFile, RailNotice
from payments.nacha.file import parse
from tests.accounts.api.helpers import ANY, assert_error, created
from tests.payments.helpers import (
    ZONE,
    ach_bank,
    bank_answers,
    cutoff,
    local,
    rails_at,
    unknown_return_file,
    upload_body,
)
from webhooks.models import WebhookDelivery
from webhooks.services import webhook_endpoint_create

pytestmark = pytest.mark.django_db


def business_day(days_ahead: int = 7):
    """A Fed business day at least `days_ahead` days from now whose next weekday is one too
    (the tests' cut-offs lie in the future: an order is made before its window's instant; its
    next-day entries settle on the next weekday, whatever holiday is near when the test runs)."""
    day = timezone.now().date() + timedelta(days=days_ahead)
    while not (is_fed_business_day(day) and is_fed_business_day(next_weekday(day))):
        day += timedelta(days=1)
    return day


def next_weekday(day):
    return day + timedelta(days=3 if day.isoweekday() == 5 else 1)


def internal(bank, code: str) -> int:
    account = Account.objects.filter(
        institution=bank.institution, internal_code=code, currency="USD"
    ).first()
    return account.posted if account else 0


def assert_ledger_ok():
    assert ledger_breaches() == []


def test_an_external_account_keeps_its_number_encrypted_and_shows_its_last_four():
    bank = ach_bank()
    body = bank.external("000123456789")

    assert body["ach"] == {
        "routingNumber": "021000021",
        "accountNumberLast4": "6789",
        "accountType": "checking",
    }
    assert (body["status"], body["customerId"]) == ("unverified", bank.customer_id)
    row = ExternalAccount.objects.get(pk=body["externalAccountId"])
    assert "000123456789" not in row.ach_account_number_encrypted
    assert row.ach_account_number() == "000123456789"
    [event] = Event.objects.filter(type="external_account.created")
    assert "000123456789" not in str(event.data)
    assert "000123456789" not in bank.api.get("/external-accounts").content.decode()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (
            {
                "ach": {
                    "routingNumber": "021000022",
                    "accountNumber": "1234",
                    "accountType": "checking",
                }
            },
            "routingNumber",
        ),
        (
            {
                "ach": {
                    "routingNumber": "021000021",
                    "accountNumber": "12a4",
                    "accountType": "checking",
                }
            },
            "accountNumber",
        ),
        ({"countryCode": "276"}, "countryCode"),
        ({"currency": "EUR"}, "currency"),
    ],
    ids=["check digit", "not digits", "not the US", "not USD"],
)
def test_an_external_account_that_ach_cannot_reach_is_refused(change, field):
    bank = ach_bank()
    body = {
        "customerId": bank.customer_id,
        "holderName": "Ada",
        "countryCode": "840",
        "currency": "USD",
        "ach": {"routingNumber": "021000021", "accountNumber": "1234", "accountType": "checking"},
        **change,
    }
    response = bank.api.post("/external-accounts", body)
    assert response.status_code == 400, response.content
    details = response.json()["details"]
    assert any(key.endswith(field) for key in details), details
    assert not ExternalAccount.objects.exists()


def test_a_credit_is_held_when_made_and_refused_clearly_when_it_cannot_go():
    bank = ach_bank(load_amount=10_000, same_day_limit=5_000)
    external = bank.external()["externalAccountId"]

    order = bank.ordered(external, 2_500)
    assert (order["status"], order["holdId"] is not None) == ("approved", True)
    assert bank.balances() == (10_000, 2_500, 7_500)

    error = assert_error(bank.order(external, 8_000), "v2", 422, "insufficient_funds", ANY)
    assert (error["details"]["available"], error["details"]["amount"]) == (7_500, 8_000)
    error = assert_error(
        bank.order(external, 100, currency="EUR"), "v2", 422, "currency_mismatch", ANY
    )
    assert error["details"]["railCurrency"] == "USD"
    error = assert_error(
        bank.order(external, 6_000, rail="ach_same_day"), "v2", 422, "limit_exceeded", ANY
    )
    assert (error["details"]["limit"], error["details"]["value"]) == ("same_day", 5_000)
    bank.profile.require_verified = True
    bank.profile.save()
    assert_error(
        bank.order(external, 100),
        "v2",
        422,
        "external_account_not_verified",
        {"externalAccountId": external, "status": "unverified"},
    )
    assert PaymentOrder.objects.count() == 1

    cancelled = created(
        bank.api.post(f"/payment-orders/{order['paymentOrderId']}/cancellations", {}), "v2"
    )
    assert cancelled["status"] == "cancelled"
    assert bank.balances() == (10_000, 0, 10_000)


def test_the_cutoff_writes_one_file_that_reparses_to_its_orders_and_moves_the_money():
    bank = ach_bank(load_amount=10_000)
    day = business_day()
    pay = bank.ordered(
        bank.external("000111222333")["externalAccountId"], 2_500, remittanceInfo="INVOICE 42"
    )
    collect = bank.ordered(
        bank.external("000999888777", holderName="Éva Ördög")["externalAccountId"],
        4_000,
        "debit",
        secCode="WEB",
        description="LOAN",
    )

    rail_file = cutoff(bank, day)
    assert cutoff(bank, day).pk == rail_file.pk  # run again: the window's one file
    assert RailFile.objects.filter(direction="outbound").count() == 1

    parsed = parse(bytes(RailFile.objects.get(pk=rail_file.pk).content))
    entries = {
        entry.detail.dfi_account_number.strip(): (header, entry)
        for header, entry in parsed.entries()
    }
    header, credit_entry = entries["000111222333"]
    assert (credit_entry.detail.transaction_code, credit_entry.detail.amount) == (22, 2_500)
    assert credit_entry.addenda[0].payment_related_information.strip() == "INVOICE 42"
    web_header, debit_entry = entries["000999888777"]
    assert (debit_entry.detail.transaction_code, debit_entry.detail.amount) == (27, 4_000)
    assert debit_entry.detail.receiver_name.strip() == "EVA ORDOG"
    assert (web_header.standard_entry_class_code, web_header.company_entry_description.strip()) == (
        "WEB",
        "LOAN",
    )
    assert header.effective_entry_date == next_weekday(day)

    paid, collected = (PaymentOrder.objects.get(pk=o["paymentOrderId"]) for o in (pay, collect))
    assert (paid.status, paid.trace_number) == ("scheduled", credit_entry.detail.trace_number)
    assert collected.trace_number == debit_entry.detail.trace_number
    # The credit's money left for the rail's clearing; the debit moved nothing yet.
    assert bank.balances() == (7_500, 0, 7_500)
    assert internal(bank, "rail_clearing") == 2_500
    assert_error(
        bank.api.post(f"/payment-orders/{paid.pk}/cancellations", {}),
        "v2",
        409,
        "invalid_state_transition",
        {"from": "scheduled", "to": "cancelled"},
    )
    assert_ledger_ok()


def test_each_order_of_a_cutoff_has_its_scheduled_event_and_its_webhook_delivery(settings):
    """The cut-off writes its orders' rows and events a statement for all of them: each order
    still has its own `payment_order.scheduled` (its status, file and trace number as the
    order's row has them), and a subscribed endpoint a delivery of each."""
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    bank = ach_bank(load_amount=10_000)
    endpoint = webhook_endpoint_create(
        institution=bank.institution, url="http://127.0.0.1:9/hooks", event_types=["*"]
    ).endpoint
    external = bank.external()["externalAccountId"]
    made = [bank.ordered(external, 100 * n, "debit" if n % 2 else "credit") for n in (1, 2, 3)]

    rail_file = cutoff(bank, business_day())

    events = Event.objects.filter(type="payment_order.scheduled").order_by("object_id")
    orders = PaymentOrder.objects.filter(pk__in=[o["paymentOrderId"] for o in made]).order_by("pk")
    assert [
        (event.object_id, event.data["status"], event.data["file_id"], event.data["trace_number"])
        for event in events
    ] == [(order.pk, "scheduled", rail_file.pk, order.trace_number) for order in orders]
    assert {order.file_id for order in orders} == {rail_file.pk}
    assert len({order.trace_number for order in orders}) == 3
    delivered = WebhookDelivery.objects.filter(endpoint=endpoint, event__in=events)
    assert sorted(delivered.values_list("event_id", flat=True)) == sorted(e.pk for e in events)
    assert_ledger_ok()


def test_an_order_made_at_the_cutoff_instant_waits_for_the_next_window():
    bank = ach_bank()
    day = business_day()
    external = bank.external()["externalAccountId"]
    early, late = bank.ordered(external, 100), bank.ordered(external, 200)
    PaymentOrder.objects.filter(pk=early["paymentOrderId"]).update(
        created_at=local(day, 16, 44, 59)
    )
    PaymentOrder.objects.filter(pk=late["paymentOrderId"]).update(created_at=local(day, 16, 45, 0))

    cutoff(bank, day)

    assert PaymentOrder.objects.get(pk=early["paymentOrderId"]).status == "scheduled"
    assert PaymentOrder.objects.get(pk=late["paymentOrderId"]).status == "approved"


def test_settlement_returns_and_a_debit_returned_after_the_money_was_spent(rails_dir):
    """The whole life through the files: cut-off, delivery, settlement on the effective date,
    the simulated bank's return of a debit the customer had spent (the shortfall booked to
    returns receivable), the same return file twice applied once."""
    bank = ach_bank(load_amount=1_000)
    day = business_day()
    debit = bank.ordered(bank.external("1111000001")["externalAccountId"], 5_000, "debit")
    rails_at(local(day, 17))  # the cut-off and its delivery
    order = PaymentOrder.objects.get(pk=debit["paymentOrderId"])
    assert order.status == "sent"
    outbox = list((rails_dir / bank.institution.pk / "ach" / "outbox").iterdir())
    assert [path.name for path in outbox] == [order.file.name]

    effective = order.effective_date
    rails_at(local(effective, 9))  # settles: the money in, held for its returns window
    assert bank.balances() == (6_000, 5_000, 1_000)
    # The customer spends what is available, and the hold expires: everything goes.
    bank.api.post(
        f"/accounts/{bank.account_id}/adjustments",
        {"direction": "debit", "amount": 1_000, "currency": "USD"},
    )
    Account.objects.filter(pk=bank.account_id)  # (reads below)
    rails_at(local(effective + timedelta(days=7), 9))
    assert bank.balances() == (5_000, 0, 5_000)
    bank.api.post(
        f"/accounts/{bank.account_id}/adjustments",
        {"direction": "debit", "amount": 4_900, "currency": "USD"},
    )

    written = bank_answers(bank, effective + timedelta(days=1))
    assert len(written) == 1
    rails_at(local(effective + timedelta(days=1), 10))

    returned = bank.get(order.pk)
    assert returned["status"] == "returned"
    assert returned["returnInfo"] == {"code": "R01", "reason": "insufficient_funds", "late": False}
    # 100 was there: taken; the other 4,900 is what the customer owes.
    assert bank.balances() == (0, 0, 0)
    assert internal(bank, "returns_receivable") == -4_900
    assert_ledger_ok()

    # The same bytes again: the same file, nothing applied twice.
    inbound = RailFile.objects.get(direction="inbound")
    again = bank.api.post(
        "/rail-files",
        {
            "rail": "ach",
            "name": "again.ach",
            "contentBase64": base64.b64encode(bytes(inbound.content)).decode(),
        },
    )
    assert created(again, "v2")["fileId"] == inbound.pk
    assert RailNotice.objects.count() == 1
    assert internal(bank, "returns_receivable") == -4_900


def test_a_credit_rejected_before_settlement_and_one_settled_then_returned():
    bank = ach_bank(load_amount=10_000)
    day = business_day()
    rejected = bank.ordered(bank.external("3333000019")["externalAccountId"], 1_000)
    returned = bank.ordered(bank.external("1111000003")["externalAccountId"], 2_000)
    rails_at(local(day, 17))
    effective = PaymentOrder.objects.get(pk=rejected["paymentOrderId"]).effective_date

    bank_answers(bank, day)  # R19 at once: before the effective date
    rails_at(local(day, 18))
    assert bank.get(rejected["paymentOrderId"])["status"] == "rejected"
    assert bank.balances() == (8_000, 0, 8_000)

    rails_at(local(effective, 9))
    assert bank.get(returned["paymentOrderId"])["status"] == "settled"
    assert internal(bank, "rail_settlement") == 2_000
    bank_answers(bank, effective + timedelta(days=1))
    rails_at(local(effective + timedelta(days=1), 10))
    body = bank.get(returned["paymentOrderId"])
    assert (body["status"], body["returnInfo"]["reason"]) == ("returned", "no_account")
    assert bank.balances() == (10_000, 0, 10_000)
    assert internal(bank, "rail_settlement") == 0
    assert_ledger_ok()


def test_a_notification_of_change_corrects_the_external_account_and_moves_nothing():
    bank = ach_bank(load_amount=10_000)
    day = business_day()
    external = bank.external("2222000001")["externalAccountId"]
    order = bank.ordered(external, 500)
    rails_at(local(day, 17))
    effective = PaymentOrder.objects.get(pk=order["paymentOrderId"]).effective_date
    bank_answers(bank, effective)
    rails_at(local(effective, 10))

    account = ExternalAccount.objects.get(pk=external)
    assert (account.ach_account_number(), account.ach_account_number_last4) == (
        "9876543210",
        "3210",
    )
    assert bank.get(order["paymentOrderId"])["status"] == "settled"
    [notice] = RailNotice.objects.all()
    assert (notice.kind, notice.code, notice.changed_fields) == (
        "change",
        "C01",
        ["account_number"],
    )
    [event] = Event.objects.filter(type="external_account.corrected")
    assert "9876543210" not in str(event.data)
    assert_ledger_ok()


def test_a_file_that_is_not_valid_is_refused_whole_and_a_return_of_an_unknown_trace_is_kept(
    rails_dir,
):
    """Uploaded, a file that is not valid is the sender's 400 and nothing is kept; dropped in
    the inbox, it is kept `refused` (no one is there to be told) and nothing of it applied."""
    bank = ach_bank()
    bad = b"1" * 94 + b"\n"
    assert_error(
        bank.api.post("/rail-files", upload_body(bad, "bad.ach")),
        "v2",
        400,
        "validation_error",
        {
            "contentBase64": "record 1 (file header), priority code (positions 2-3): '11' is not "
            "'01'"
        },
    )
    assert not RailFile.objects.exists()

    (rails_dir / bank.institution.pk / "ach" / "inbox").mkdir(parents=True)
    (rails_dir / bank.institution.pk / "ach" / "inbox" / "bad.ach").write_bytes(bad)
    rails_at(local(business_day(), 9))
    refused = RailFile.objects.get()
    assert (refused.status, refused.entry_count) == ("refused", 0)
    assert "record 1" in refused.error

    unknown = unknown_return_file(bank.profile, business_day())
    kept = created(bank.api.post("/rail-files", upload_body(unknown)), "v2")
    assert (kept["status"], kept["entryCount"]) == ("applied", 1)
    [notice] = RailNotice.objects.all()
    assert (notice.order, notice.code, notice.original_trace_number) == (
        None,
        "R03",
        "091000010000999",
    )
    received = Event.objects.filter(type="rail_file.received").order_by("id")
    assert [event.data["status"] for event in received] == ["refused", "applied"]
    assert_ledger_ok()


def test_another_institutions_orders_and_accounts_answer_404():
    bank, other = ach_bank(), ach_bank()
    external = bank.external()["externalAccountId"]
    order = bank.ordered(external, 100)
    for path in (f"/external-accounts/{external}", f"/payment-orders/{order['paymentOrderId']}"):
        assert other.api.get(path).status_code == 404
    assert other.order(external, 100).status_code == 404
    assert (
        other.api.post(f"/payment-orders/{order['paymentOrderId']}/cancellations", {}).status_code
        == 404
    )


@pytest.mark.parametrize("days", [0, 5])
def test_the_account_products_debit_hold_days_outrank_the_profiles(rails_dir, days):
    """The ACH profile holds a collected debit 2 banking days; a product says otherwise: 0, not
    held at all; 5, held to the end of the fifth ACH day after the effective date."""
    bank = ach_bank(load_amount=0)
    product = Account.objects.get(pk=bank.account_id).product_id
    changed = bank.api.patch(f"/products/accounts/{product}", {"debitHoldDays": days})
    assert changed.status_code == 200 and changed.json()["debitHoldDays"] == days
    day = business_day()
    debit = bank.ordered(bank.external("1111000001")["externalAccountId"], 5_000, "debit")
    rails_at(local(day, 17))
    order = PaymentOrder.objects.get(pk=debit["paymentOrderId"])
    rails_at(local(order.effective_date, 9))

    order.refresh_from_db()
    assert order.status == "settled"
    if days == 0:
        assert order.returns_hold is None
        assert bank.balances() == (5_000, 0, 5_000)
    else:
        held_to = ach_days_after(bank.institution, order.effective_date, days)
        assert order.returns_hold.expires_at.astimezone(ZoneInfo(ZONE)).date() == held_to
        assert bank.balances() == (5_000, 5_000, 0)


def test_a_products_debit_hold_days_are_checked():
    bank = ach_bank(load_amount=0)
    product = Account.objects.get(pk=bank.account_id).product_id
    for wrong in (61, -1, "2", True):
        response = bank.api.patch(f"/products/accounts/{product}", {"debitHoldDays": wrong})
        assert response.status_code == 400, wrong
    back = bank.api.patch(f"/products/accounts/{product}", {"debitHoldDays": None})
    assert back.status_code == 200 and back.json()["debitHoldDays"] is None


def test_a_frozen_accounts_credit_waits_for_a_window_after_it_is_active_again():
    """A frozen account's held money cannot leave it (docs/money.md): its credit waits, and the
    window's file takes the other orders (the cut-off failed whole, account_not_active)."""
    bank = ach_bank(load_amount=10_000)
    day = business_day()
    external = bank.external()["externalAccountId"]
    pay, collect = bank.ordered(external, 2_500), bank.ordered(external, 4_000, "debit")
    assert bank.api.patch(f"/accounts/{bank.account_id}", {"status": "frozen"}).status_code == 200

    rail_file = cutoff(bank, day)

    assert list(rail_file.orders.values_list("pk", flat=True)) == [collect["paymentOrderId"]]
    assert bank.get(pay["paymentOrderId"])["status"] == "approved"
    assert bank.balances() == (10_000, 2_500, 7_500)
    assert bank.api.patch(f"/accounts/{bank.account_id}", {"status": "active"}).status_code == 200
    cutoff(bank, day + timedelta(days=1))
    assert bank.get(pay["paymentOrderId"])["status"] == "scheduled"
    assert bank.balances() == (7_500, 0, 7_500)
    assert_ledger_ok()
