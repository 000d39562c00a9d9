"""Waiving fees in the admin (docs/fees.md), with four eyes (docs/back-office.md): the action
asks for a reason and asks for the waiver (an approval request, nothing moves); once a second
staff user approves it, `fee_waive` reverses the fee's journal (the amount back from the fees
account), records who approved and the request's reason on the fee, emits `fee.waived` with
the approver as actor; each step leaves its LogEntry. A fee that is not charged is refused and
left as it is. The ledger is checked after each."""

import re

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.test import Client
from django.urls import reverse

from accounts.models import Fee, StatementLine
from accounts.services import fee_charge
from accounts.verification import ledger_breaches
from backoffice.models import ApprovalRequest
from core.actors import SYSTEM
from core.operations import run
from events.models import Event
from events.payloads import event_payload
from tests.accounts.ledger.helpers import balance, fresh, institution, internal, open_account
from tests.backoffice.helpers import staff
from tests.staff import sign_in

pytestmark = pytest.mark.django_db

TEMPLATE = "admin/accounts/fee/waive_confirmation.html"
HIDDEN_INPUT = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')
CHANGELIST = "admin:accounts_fee_changelist"
APPROVALS = "admin:backoffice_approvalrequest_changelist"
ASKED = "Asked for {n} change(s): another staff user approves each (Approvals)."


def charged(account, amount: int = 300, period: str = "2026-10") -> Fee:
    return run(
        fee_charge, actor=SYSTEM, account=account, kind="monthly", amount=amount, period=period
    ).value


def start_waive(client, *fees):
    return client.post(
        reverse(CHANGELIST),
        {"action": "waive_fees", "index": "0", "_selected_action": [fee.pk for fee in fees]},
        follow=True,
    )


def confirm(client, page, reason, changelist=CHANGELIST):
    data = {}
    for name, value in HIDDEN_INPUT.findall(page.content.decode()):
        data.setdefault(name, []).append(value)
    data["reason"] = reason
    return client.post(reverse(changelist), data, follow=True)


@pytest.fixture
def checker(db):
    """A second staff user (compliance: decides approval requests) and their client."""
    user = staff("checker", roles=["compliance"], everywhere=True)
    client = Client()
    sign_in(client, user)
    return user, client


def approve(client, fee, reason="Checked: goodwill is allowed once a year."):
    """The pending waiver request of `fee`, approved through the approvals' action."""
    approval = ApprovalRequest.objects.get(target_id=fee.pk, status="pending")
    page = client.post(
        reverse(APPROVALS),
        {"action": "approve_requests", "index": "0", "_selected_action": [approval.pk]},
        follow=True,
    )
    assert page.status_code == 200
    return confirm(client, page, reason, APPROVALS)


def messages_of(response) -> list[tuple[str, str]]:
    return [(message.level_tag, str(message)) for message in response.context["messages"]]


def test_staff_waive_a_fee_with_a_reason_once_a_second_user_approves(
    admin_client, admin_user, checker
):
    fi = institution()
    account = open_account(fi, balance=1_000)
    fee = charged(account)
    assert balance(account) == (700, 0, 700)
    assert internal(fi, "fees").posted == 300

    page = start_waive(admin_client, fee)
    assert page.status_code == 200
    assert page.templates[0].name == TEMPLATE
    assert 'name="reason"' in page.content.decode()
    assert Fee.objects.get(pk=fee.pk).status == "charged"  # only the confirmation changes it

    response = confirm(admin_client, page, "  Goodwill: first month. ")
    assert messages_of(response) == [("success", ASKED.format(n=1))]
    # Asked for, not waived: nothing moves until a second staff user approves.
    assert Fee.objects.get(pk=fee.pk).status == "charged"
    assert balance(account) == (700, 0, 700)
    (approval,) = ApprovalRequest.objects.filter(target_id=fee.pk)
    assert (approval.kind, approval.status, approval.amount, approval.currency) == (
        "fee_waiver",
        "pending",
        300,
        fee.currency,
    )
    assert (approval.requested_by, approval.request_reason) == (
        admin_user,
        "Goodwill: first month.",
    )
    assert not Event.objects.filter(type="fee.waived").exists()

    checker_user, checker_client = checker
    response = approve(checker_client, fee)
    assert messages_of(response) == [("success", "Approve: 1 request(s).")]
    stored = Fee.objects.get(pk=fee.pk)
    assert (stored.status, stored.waived_by, stored.waiver_reason) == (
        "waived",
        checker_user,
        "Goodwill: first month.",
    )
    assert stored.waived_at is not None and stored.waiver_journal.kind == "fee_waiver"
    assert balance(account) == (1_000, 0, 1_000)
    assert internal(fi, "fees").posted == 0
    lines = StatementLine.objects.filter(fee=fee).order_by("pk")
    assert [(line.type, line.amount, line.category) for line in lines] == [
        ("CashDec", 300, "fee"),
        ("CashInc", 300, "fee"),
    ]
    event = Event.objects.get(type="fee.waived", object_id=fee.pk)
    assert (event.actor_type, event.actor_id, event_payload(event)["data"]["waivedBy"]) == (
        "staff",
        str(checker_user.pk),
        str(checker_user.pk),
    )
    approval.refresh_from_db()
    assert (approval.status, approval.decided_by, approval.result_id) == (
        "approved",
        checker_user,
        fee.pk,
    )
    (entry,) = LogEntry.objects.filter(object_id=fee.pk)  # the request, on the fee
    assert (entry.action_flag, entry.user) == (CHANGE, admin_user)
    assert "Goodwill: first month." in entry.get_change_message()
    (decision,) = LogEntry.objects.filter(object_id=approval.pk)
    assert (decision.action_flag, decision.user) == (CHANGE, checker_user)
    assert "goodwill is allowed once a year" in decision.get_change_message()
    assert ledger_breaches() == []


def test_waiving_needs_a_reason(admin_client):
    fee = charged(open_account(institution(), balance=1_000))

    response = confirm(admin_client, start_waive(admin_client, fee), "   ")

    assert response.templates[0].name == TEMPLATE
    assert response.context["form"].errors == {"reason": ["This field is required."]}
    assert Fee.objects.get(pk=fee.pk).status == "charged"
    assert not LogEntry.objects.exists()
    assert not ApprovalRequest.objects.exists()
    assert not Event.objects.filter(type__in=["fee.waived", "approval.requested"]).exists()


def test_waiving_twice_is_refused_and_changes_nothing(admin_client, admin_user, checker):
    account = open_account(institution(), balance=1_000)
    fee = charged(account)
    confirm(admin_client, start_waive(admin_client, fee), "Goodwill.")
    # Asked again while the first waits: refused (one waiver of a fee waits at a time).
    response = confirm(admin_client, start_waive(admin_client, fee), "Goodwill again.")
    assert messages_of(response) == [
        ("error", f"{fee.pk}: A waiver of this fee is already waiting for approval.")
    ]
    approve(checker[1], fee)
    other = charged(account, period="2026-09")

    response = confirm(admin_client, start_waive(admin_client, fee, other), "Again.")

    assert messages_of(response) == [
        ("error", f"{fee.pk}: The fee is waived: only a charged fee can be waived."),
        ("success", ASKED.format(n=1)),
    ]
    approve(checker[1], other)
    assert Fee.objects.get(pk=fee.pk).waiver_reason == "Goodwill."
    assert Fee.objects.get(pk=other.pk).waiver_reason == "Again."
    assert Event.objects.filter(type="fee.waived", object_id=fee.pk).count() == 1
    assert ApprovalRequest.objects.filter(target_id=fee.pk).count() == 1
    assert LogEntry.objects.filter(object_id=fee.pk).count() == 1
    assert balance(account) == (1_000, 0, 1_000)
    assert ledger_breaches() == []


def test_a_declined_fee_cannot_be_waived(admin_client):
    account = open_account(institution(), balance=100)
    fee = charged(account)
    assert fee.status == "declined"

    response = confirm(admin_client, start_waive(admin_client, fee), "Goodwill.")

    assert messages_of(response) == [
        ("error", f"{fee.pk}: The fee is declined: only a charged fee can be waived.")
    ]
    assert Fee.objects.get(pk=fee.pk).status == "declined"
    assert fresh(account).posted == 100
    assert ledger_breaches() == []


def test_the_fee_pages_show_it(admin_client):
    fee = charged(open_account(institution(), balance=1_000))
    assert admin_client.get(reverse(CHANGELIST)).status_code == 200
    page = admin_client.get(reverse("admin:accounts_fee_change", args=[fee.pk]))
    assert page.status_code == 200
    assert fee.pk in page.content.decode()
    (line,) = StatementLine.objects.filter(fee=fee)
    line_page = admin_client.get(reverse("admin:accounts_statementline_change", args=[line.pk]))
    assert line_page.status_code == 200
    assert fee.pk in line_page.content.decode()
