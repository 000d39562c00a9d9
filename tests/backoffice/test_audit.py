"""The audit page (docs/back-office.md, "The audit page"): every staff action and approval, as
the events naming the staff user record them, filterable by user, institution, object and date,
each linking to its object and the journal it posted; read-only, for the compliance role; its
export like every list's."""

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from accounts.models import Adjustment
from accounts.services import fee_charge
from backoffice.audit import journals_of
from backoffice.models import ApprovalRequest, StaffActivity
from backoffice.services.thresholds import approval_threshold_set
from core.actors import SYSTEM
from core.operations import run
from disputes.models import DisputeStep
from events.models import Event
from tests.accounts.ledger.helpers import open_account
from tests.api.test_scopes import World
from tests.backoffice.helpers import staff
from tests.backoffice.test_approvals import act, client_of
from tests.backoffice.test_exports import as_dicts, rows_of
from tests.cards.helpers import make_institution
from tests.events.test_actor import _dispute, run_action
from tests.staff import sign_in

pytestmark = pytest.mark.django_db

AUDIT = reverse("admin:backoffice_staffactivity_changelist")
EXPORT = reverse("admin:backoffice_staffactivity_export")
ACCOUNTS = reverse("admin:accounts_account_changelist")
APPROVALS = reverse("admin:backoffice_approvalrequest_changelist")
FEES = reverse("admin:accounts_fee_changelist")


def listed(response) -> list[Event]:
    assert response.status_code == 200
    return list(response.context["cl"].result_list)


def types_and_users(response) -> list[tuple[str, str]]:
    return sorted((event.type, event.username) for event in listed(response))


@pytest.fixture
def bank():
    return make_institution()


@pytest.fixture
def account(bank):
    return open_account(bank, balance=10_000)  # opened and loaded by the system: not listed


@pytest.fixture
def maker(bank):
    return staff("ops-maker", roles=["operations"], institutions=[bank])


@pytest.fixture
def checker(bank):
    return staff("checker-1", roles=["compliance"], institutions=[bank])


@pytest.fixture
def adjusted(account, maker, checker):
    """An account frozen by `maker`, who also asked for an adjustment, which `checker`
    approved: the staff actions of the page."""
    act(client_of(maker), ACCOUNTS, "freeze_accounts", [account.pk], reason="Ticket 1.")
    act(
        client_of(maker),
        ACCOUNTS,
        "request_adjustment",
        [account.pk],
        direction="credit",
        amount="12.34",
        description="Goodwill credit",
        reason="Ticket 2.",
    )
    (approval,) = ApprovalRequest.objects.all()
    act(client_of(checker), APPROVALS, "approve_requests", [approval.pk], reason="Checked.")
    approval.refresh_from_db()
    return approval


def test_every_staff_action_and_approval_is_listed_with_its_user_and_nothing_else(
    bank, account, adjusted, maker, checker
):
    response = client_of(checker).get(AUDIT)
    assert types_and_users(response) == [
        ("account.status_changed", "ops-maker"),
        ("adjustment.posted", "checker-1"),
        ("approval.approved", "checker-1"),
        ("approval.requested", "ops-maker"),
    ]
    # The system's events (the account opened and loaded) are in the event log, not here.
    assert Event.objects.filter(object_id=account.pk, actor_type="system").exists()
    assert StaffActivity.objects.count() == 4


def test_each_row_links_its_object_and_the_journal_it_posted(adjusted, checker):
    adjustment = Adjustment.objects.get(pk=adjusted.result_id)
    html = client_of(checker).get(AUDIT).content.decode()
    approval_page = reverse("admin:backoffice_approvalrequest_change", args=[adjusted.pk])
    account_page = reverse("admin:accounts_account_change", args=[adjusted.target_id])
    adjustment_page = reverse("admin:accounts_adjustment_change", args=[adjustment.pk])
    journal_page = reverse("admin:accounts_journal_change", args=[adjustment.journal_id])
    assert f'<a href="{approval_page}">approval request {adjusted.pk}</a>' in html
    assert f'<a href="{account_page}">account {adjusted.target_id}</a>' in html
    assert f'<a href="{adjustment_page}">adjustment {adjustment.pk}</a>' in html
    # The adjustment's row and the approval's both lead to the journal the approval posted.
    assert html.count(f'<a href="{journal_page}">{adjustment.journal_id}</a>') == 2
    for url in (approval_page, account_page, adjustment_page, journal_page):
        assert client_of(checker).get(url).status_code == 200, url

    (approved,) = StaffActivity.objects.filter(type="approval.approved")
    page = client_of(checker).get(
        reverse("admin:backoffice_staffactivity_change", args=[approved.pk])
    )
    assert page.status_code == 200
    assert journal_page in page.content.decode()
    # Read-only: nothing to save, add or delete.
    assert "_save" not in page.content.decode()


def test_a_fee_waiver_made_at_once_links_its_waiver_journal(bank, account, checker):
    approval_threshold_set(institution=bank, kind="fee_waiver", currency="EUR", up_to=10_000)
    fee = run(
        fee_charge, actor=SYSTEM, account=account, kind="monthly", amount=300, period="2026-01"
    ).value
    act(client_of(checker), FEES, "waive_fees", [fee.pk], reason="Goodwill.")
    fee.refresh_from_db()
    assert fee.waiver_journal_id
    (waived,) = listed(client_of(checker).get(AUDIT, {"q": fee.pk}))
    assert waived.type == "fee.waived"
    journal_page = reverse("admin:accounts_journal_change", args=[fee.waiver_journal_id])
    html = client_of(checker).get(AUDIT, {"q": fee.pk}).content.decode()
    assert f'<a href="{journal_page}">{fee.waiver_journal_id}</a>' in html


# --- filters ------------------------------------------------------------------------------------
def test_filtered_by_user_object_type_and_object(adjusted, maker, checker):
    auditor = client_of(checker)
    assert types_and_users(auditor.get(AUDIT, {"user": maker.pk})) == [
        ("account.status_changed", "ops-maker"),
        ("approval.requested", "ops-maker"),
    ]
    by_kind = auditor.get(AUDIT, {"object_type": "approval_request"})
    assert [event.type for event in listed(by_kind)] == ["approval.approved", "approval.requested"]
    # An object's id: what was done to it.
    assert types_and_users(auditor.get(AUDIT, {"q": adjusted.pk})) == [
        ("approval.approved", "checker-1"),
        ("approval.requested", "ops-maker"),
    ]
    assert types_and_users(auditor.get(AUDIT, {"q": adjusted.target_id})) == [
        ("account.status_changed", "ops-maker"),
    ]
    # The user filter offers the staff by name.
    html = auditor.get(AUDIT).content.decode()
    assert f'?user={maker.pk}"' in html and "ops-maker" in html


def test_filtered_by_date(adjusted, checker):
    auditor = client_of(checker)
    today = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)
    tomorrow = today + timedelta(days=1)
    assert len(listed(auditor.get(AUDIT, {"created_at__year": today.year}))) == 4
    day = {
        "created_at__gte": today.isoformat(),
        "created_at__lt": tomorrow.isoformat(),
    }
    assert len(listed(auditor.get(AUDIT, day))) == 4
    later = {"created_at__gte": tomorrow.isoformat()}
    assert listed(auditor.get(AUDIT, later)) == []


def test_filtered_by_institution_and_limited_to_the_users_institutions(
    bank, adjusted, maker, checker
):
    other = make_institution()
    elsewhere = open_account(other)
    their_ops = staff("ops-other", roles=["operations"], institutions=[other])
    act(client_of(their_ops), ACCOUNTS, "freeze_accounts", [elsewhere.pk], reason="Ticket 3.")

    everyone = staff("auditor", roles=["compliance"], everywhere=True)
    assert len(listed(client_of(everyone).get(AUDIT))) == 5
    only_other = listed(client_of(everyone).get(AUDIT, {"institution__id__exact": other.pk}))
    assert [(event.type, event.object_id) for event in only_other] == [
        ("account.status_changed", elsewhere.pk)
    ]
    # The bank's auditor sees the bank's only, in the list and in its export.
    assert elsewhere.pk not in str(listed(client_of(checker).get(AUDIT)))
    rows = as_dicts(rows_of(client_of(checker).get(EXPORT)))
    assert len(rows) == 4 and elsewhere.pk not in str(rows)


# --- who may -----------------------------------------------------------------------------------
@pytest.mark.parametrize("role", ["support", "operations"])
def test_the_other_roles_neither_see_nor_export_it(bank, adjusted, role):
    client = client_of(staff(f"{role}-user", roles=[role], institutions=[bank]))
    assert client.get(AUDIT).status_code == 403
    assert client.get(EXPORT).status_code == 403
    assert "audit" not in client.get(reverse("admin:index")).content.decode().lower()


def test_it_exports_what_it_shows(adjusted, maker, checker):
    adjustment = Adjustment.objects.get(pk=adjusted.result_id)
    rows = as_dicts(rows_of(client_of(checker).get(EXPORT, {"user": checker.pk})))
    assert sorted((row["type"], row["staff user"]) for row in rows) == [
        ("adjustment.posted", "checker-1"),
        ("approval.approved", "checker-1"),
    ]
    assert {row["journal"] for row in rows} == {adjustment.journal_id}
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:]{8}\+00:00", row["when"]) for row in rows)


def test_a_disputes_staff_moves_link_the_journals_of_their_steps(bank, client):
    world = World("v2", bank)
    ops = staff("ops", roles=["operations"], institutions=[bank])
    sign_in(client, ops)
    submitted, credited = _dispute(world), _dispute(world)

    run_action(client, "disputes.dispute", "submit", submitted)  # credits at submission
    run_action(client, "disputes.dispute", "grant_credit", credited)

    for dispute_id, type in [(submitted, "dispute.stage_changed"), (credited, "dispute.updated")]:
        (step,) = DisputeStep.objects.filter(dispute_id=dispute_id, journal__isnull=False)
        (event,) = StaffActivity.objects.filter(object_id=dispute_id, type=type)
        assert journals_of(event) == [step.journal]
    # The dispute's earlier events (filed through the API) posted nothing.
    filed = Event.objects.filter(object_id=submitted, type="dispute.created").get()
    assert journals_of(filed) == []
