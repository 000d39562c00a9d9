"""The back office's payments pages (issue 49 item 9; docs/payments.md, "The back office"):
orders with their journals, files with their entries, inbound entries; approving, cancelling,
verifying; and the suspense queue with four eyes (one asks, another approves: the money moves
then). No page shows an account number."""

import pytest
from django.urls import reverse

from accounts.models import Account
from accounts.verification import ledger_breaches
from backoffice.models import ApprovalRequest
from events.models import Event
from payments.models import ExternalAccount, InboundEntry, PaymentOrder, RailFile
from sandbox.simulated_bank import Incoming, simulated_bank_send
from tests.backoffice.helpers import staff
from tests.backoffice.test_approvals import APPROVALS, act, client_of, messages_of
from tests.payments.helpers import ach_bank, local, rails_at
from tests.payments.test_orders import business_day, internal

pytestmark = pytest.mark.django_db

ORDERS = reverse("admin:payments_paymentorder_changelist")
EXTERNALS = reverse("admin:payments_externalaccount_changelist")
ENTRIES = reverse("admin:payments_inboundentry_changelist")
LANDLORD = "000123456789"
UNKNOWN = "555566667777"


@pytest.fixture
def world(rails_dir):
    """A bank with a credit in a file, another waiting for approval (above 1,000.00), and an
    inbound credit for no account in suspense."""
    bank = ach_bank(load_amount=500_000, approval_above=100_000)
    day = business_day()
    external = bank.external(LANDLORD)["externalAccountId"]
    bank.filed = bank.ordered(external, 2_500)["paymentOrderId"]
    bank.waiting = bank.ordered(external, 150_000)["paymentOrderId"]
    simulated_bank_send(
        institution=bank.institution,
        entries=[Incoming("credit", UNKNOWN, 700, receiver_name="Ada Lovelace")],
        settles_on=day,
    )
    rails_at(local(day, 17))
    bank.suspense = InboundEntry.objects.get().pk
    bank.external_id = external
    return bank


def operations_and_compliance(bank):
    place = {"institutions": [bank.institution]}
    return (
        client_of(staff("ops", roles=["operations"], **place)),
        client_of(staff("checker", roles=["compliance"], **place)),
    )


def test_every_payments_page_shows_money_and_no_account_number(admin_client, world):
    numbers = [LANDLORD, UNKNOWN, Account.objects.get(pk=world.account_id).account_number]
    pages = [ORDERS, EXTERNALS, ENTRIES]
    for model in (PaymentOrder, ExternalAccount, InboundEntry, RailFile):
        opts = model._meta
        for pk in model.objects.values_list("pk", flat=True):
            pages.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[pk]))
    for page in pages:
        html = admin_client.get(page).content.decode()
        assert not [number for number in numbers if number in html], page
    order_page = admin_client.get(reverse("admin:payments_paymentorder_change", args=[world.filed]))
    html = order_page.content.decode()
    assert "25.00 USD" in html and "ACH credit in a file" in html  # its journal
    outbound = RailFile.objects.get(direction="outbound")
    file_page = admin_client.get(reverse("admin:payments_railfile_change", args=[outbound.pk]))
    assert "•••• 6789" in file_page.content.decode()  # its entry, masked


def test_an_order_above_the_threshold_waits_for_a_person_who_approves_it(world):
    ops, _ = operations_and_compliance(world)
    assert PaymentOrder.objects.get(pk=world.waiting).status == "needs_approval"

    response = act(ops, ORDERS, "approve_orders", [world.waiting], reason="Called the payee.")

    assert ("success", "Approved 1 payment order(s): each goes out with its next cut-off.") in (
        messages_of(response)
    )
    assert PaymentOrder.objects.get(pk=world.waiting).status == "approved"
    [approved] = Event.objects.filter(type="payment_order.approved", object_id=world.waiting)
    assert (approved.actor_type, approved.actor_id) == (
        "staff",
        str(ops.session["_auth_user_id"]),
    )
    # Approved already, or in a file: left out and said.
    again = act(ops, ORDERS, "approve_orders", [world.waiting, world.filed], reason="Twice.")
    assert any("Not waiting for approval" in text for _, text in messages_of(again))


def test_cancelling_an_order_releases_its_hold_and_one_in_a_file_stays(world):
    ops, _ = operations_and_compliance(world)
    before = world.balances()

    response = act(ops, ORDERS, "cancel_orders", [world.waiting, world.filed], reason="Asked.")

    assert PaymentOrder.objects.get(pk=world.waiting).status == "cancelled"
    assert PaymentOrder.objects.get(pk=world.waiting).ended_reason == "Asked."
    assert world.balances()[2] == before[2] + 150_000  # its hold released
    assert PaymentOrder.objects.get(pk=world.filed).status == "sent"
    assert any(world.filed in text for level, text in messages_of(response) if level == "error")
    assert ledger_breaches() == []


def test_staff_verify_an_external_account(world):
    ops, _ = operations_and_compliance(world)
    act(ops, EXTERNALS, "verify_external_accounts", [world.external_id], reason="Statement.")
    external = ExternalAccount.objects.get(pk=world.external_id)
    assert (external.status, external.verified_by) == ("verified", "staff")


def test_a_credit_in_suspense_is_applied_by_two_people_and_its_money_moves_then(world):
    ops, checker = operations_and_compliance(world)
    assert internal(world, "rail_suspense") == 700

    act(
        ops,
        ENTRIES,
        "apply_from_suspense",
        [world.suspense],
        account_id=world.account_id,
        reason="The employer called: Ada's account.",
    )
    [request] = ApprovalRequest.objects.filter(kind="inbound_apply")
    assert (request.status, request.amount, request.target_id) == ("pending", 700, world.suspense)
    assert InboundEntry.objects.get(pk=world.suspense).status == "suspense"  # nothing moved
    # The one who asked is not offered the approval (operations decide no request).
    ops.post(
        APPROVALS, {"action": "approve_requests", "index": "0", "_selected_action": [request.pk]}
    )
    assert ApprovalRequest.objects.get(pk=request.pk).status == "pending"

    act(checker, APPROVALS, "approve_requests", [request.pk], reason="Checked the call.")

    entry = InboundEntry.objects.get(pk=world.suspense)
    assert (entry.status, entry.account_id) == ("applied", world.account_id)
    assert internal(world, "rail_suspense") == 0
    assert ledger_breaches() == []


def test_a_credit_in_suspense_is_returned_by_two_people(world):
    ops, checker = operations_and_compliance(world)
    act(ops, ENTRIES, "return_from_suspense", [world.suspense], code="R03", reason="No one.")
    [request] = ApprovalRequest.objects.filter(kind="inbound_return")

    act(checker, APPROVALS, "approve_requests", [request.pk], reason="Agreed.")

    entry = InboundEntry.objects.get(pk=world.suspense)
    assert (entry.status, entry.return_code) == ("returning", "R03")
    assert internal(world, "rail_suspense") == 0
    assert ledger_breaches() == []
