"""A row's page offers the actions that apply to the row now and to the user (issue 48 item 2;
docs/back-office.md, "Actions on a page"): an approved request no Approve, a submitted dispute
no Submit, a requester no decision of their own request. A press from a page the row has
changed since is refused before anything is asked, and the services still refuse the rest."""

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from accounts.models import Account, Fee
from backoffice.actions import accounts, approvals, cards, disputes, monitoring
from backoffice.models import ApprovalRequest
from backoffice.services.approvals import approval_approve
from cards.models import Card
from core.actors import Actor
from core.operations import run
from disputes.models import Dispute
from monitoring.models import MonitoringAlert
from tests.accounts.ledger.helpers import open_account
from tests.api.test_scopes import World
from tests.backoffice.helpers import staff
from tests.backoffice.test_approvals import APPROVALS, ask, messages_of
from tests.backoffice.test_object_actions import buttons
from tests.cards.helpers import make_institution
from tests.events.test_actor import SUBMITTED, _dispute
from tests.staff import sign_in

pytestmark = pytest.mark.django_db

NOBODY = User(pk=0)


@pytest.fixture
def bank():
    return make_institution()


@pytest.fixture
def maker(bank):
    return staff("maker", roles=["compliance"], institutions=[bank])


@pytest.fixture
def checker(bank):
    return staff("checker", roles=["compliance"], institutions=[bank])


def client_of(user) -> Client:
    client = Client()
    sign_in(client, user)
    return client


def page_of(approval) -> str:
    return reverse("admin:backoffice_approvalrequest_change", args=[approval.pk])


def press(client, action: str, approval, **form):
    """A button of the request's page pressed (and its confirmation answered with `form`)."""
    data = {
        "action": action,
        "_selected_action": approval.pk,
        "index": "0",
        "return_to_object": approval.pk,
        **form,
    }
    return client.post(APPROVALS, data)


def test_a_request_is_decided_by_another_and_while_it_waits(bank, maker, checker):
    approval = ask(maker, open_account(bank, balance=10_000))

    assert buttons(client_of(checker), page_of(approval)) == ["approve_requests", "reject_requests"]
    assert buttons(client_of(maker), page_of(approval)) == []  # their own: no decision offered

    run(approval_approve, actor=Actor(user=checker), approval=approval, reason="Checked.")

    assert buttons(client_of(checker), page_of(approval)) == []  # approved: nothing to decide


def test_a_press_from_a_page_the_row_changed_since_is_refused_before_anything_is_asked(
    bank, maker, checker
):
    approval = ask(maker, open_account(bank, balance=10_000))
    late = client_of(staff("late", roles=["compliance"], institutions=[bank]))
    assert buttons(late, page_of(approval)) == ["approve_requests", "reject_requests"]
    run(approval_approve, actor=Actor(user=checker), approval=approval, reason="First.")

    response = press(late, "approve_requests", approval)  # the page they had open

    assert (response.status_code, response["Location"]) == (302, page_of(approval))
    page = late.get(response["Location"])
    assert messages_of(page) == [
        (
            "warning",
            f"{approval.pk}: “Approve requests (the change is made now)” does not apply to it "
            "now, so nothing was done. Its page shows what it is now and what can be done.",
        )
    ]
    approval.refresh_from_db()
    assert (approval.status, approval.decided_by) == ("approved", checker)


def test_the_requester_cannot_decide_their_own_request_from_its_page_either(bank, maker):
    """No button, and a made-up press is refused by the server, its reason or not."""
    approval = ask(maker, open_account(bank, balance=10_000))
    own = client_of(maker)

    for action in ("approve_requests", "reject_requests"):
        response = press(own, action, approval, confirm="yes", reason="Mine.")
        assert (response.status_code, response["Location"]) == (302, page_of(approval))

    approval.refresh_from_db()
    assert (approval.status, approval.decided_by) == ("pending", None)


def test_a_submitted_dispute_offers_no_submit(bank):
    world = World("v2", bank)
    ops = client_of(staff("ops", roles=["operations"], institutions=[bank]))
    page = reverse("admin:disputes_dispute_change", args=[_dispute(world)])
    submitted = reverse("admin:disputes_dispute_change", args=[_dispute(world, SUBMITTED)])

    case_work = ["add_notes", "assign_to_me", "assign"]  # on any dispute, whatever its stage
    assert buttons(ops, page) == ["submit", "grant_credit", "deny", "withdraw", *case_work]
    # Credited at its submission: nothing to grant; not re-presented: no loss to accept.
    assert buttons(ops, submitted) == ["deny", "withdraw", *case_work]


@pytest.mark.parametrize(
    ("status", "credited", "offered"),
    [
        ("draft", 0, ["submit", "grant_credit", "deny", "withdraw"]),
        ("draft", 10, ["submit", "deny", "withdraw"]),
        ("submitted", 0, ["grant_credit", "deny", "withdraw"]),
        ("chargeback", 10, []),
        ("representment", 10, ["write_off", "cardholder_bears"]),
        ("prearbitration", 10, ["write_off", "cardholder_bears"]),
        ("arbitration", 10, []),
        ("closed", 0, []),
    ],
)
def test_each_stage_offers_the_moves_its_service_allows(status, credited, offered):
    dispute = Dispute(status=status, provisional_credit=credited)
    moves = [
        disputes.submit,
        disputes.grant_credit,
        disputes.deny,
        disputes.withdraw,
        disputes.write_off,
        disputes.cardholder_bears,
    ]
    assert [move.name for move in moves if move.applies_to(dispute, NOBODY)] == offered


ACCOUNT_STATUS = [accounts.freeze_accounts, accounts.activate_accounts, accounts.close_accounts]
CARD = [
    cards.activate_cards,
    cards.suspend_cards,
    cards.close_cards,
    cards.unblock_pins,
    cards.change_limits,
]


@pytest.mark.parametrize(
    ("actions", "row", "offered"),
    [
        (ACCOUNT_STATUS, Account(status="active"), ["freeze_accounts", "close_accounts"]),
        (ACCOUNT_STATUS, Account(status="frozen"), ["activate_accounts", "close_accounts"]),
        (ACCOUNT_STATUS, Account(status="closed"), []),
        (ACCOUNT_STATUS, Account(status="active", kind="internal"), []),  # not staff's to move
        (CARD, Card(status="inactive"), ["activate_cards", "change_limits"]),
        (
            CARD,
            Card(status="active", pin_blocked=True),
            ["suspend_cards", "close_cards", "unblock_pins", "change_limits"],
        ),
        (CARD, Card(status="suspended"), ["activate_cards", "close_cards", "change_limits"]),
        (CARD, Card(status="closed", pin_blocked=True), []),
        ([accounts.waive_fees], Fee(status="charged"), ["waive_fees"]),
        ([accounts.waive_fees], Fee(status="waived"), []),
        ([monitoring.resolve_alerts], MonitoringAlert(status="resolved"), []),
    ],
)
def test_what_a_row_offers_follows_what_its_service_allows(actions, row, offered):
    assert [action.name for action in actions if action.applies_to(row, NOBODY)] == offered


def test_a_decision_applies_to_a_pending_request_of_someone_else():
    maker, checker = User(pk=1), User(pk=2)
    pending = ApprovalRequest(status="pending", requested_by_id=maker.pk)
    for decision in (approvals.approve_requests, approvals.reject_requests):
        assert decision.applies_to(pending, checker)
        assert not decision.applies_to(pending, maker)
        assert not decision.applies_to(
            ApprovalRequest(status="approved", requested_by_id=1), checker
        )
