"""Four eyes where money moves (docs/back-office.md, "Four eyes"): a staff user asks for an
adjustment or a fee waiver, another approves it (the change is made then, once, as them) or
rejects it (nothing moves). Nobody decides their own request: the service refuses, the admin
refuses, and the database refuses. A refused change leaves the request pending; another
institution's staff neither see nor decide it; the dashboard counts what waits for the user."""

import re

import pytest
from django.contrib.admin.models import LogEntry
from django.db import IntegrityError, transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import Adjustment, Fee
from accounts.services import fee_charge
from accounts.verification import ledger_breaches
from backoffice.forms import minor_units
from backoffice.models import ApprovalRequest
from backoffice.services.approvals import (
    approval_approve,
    approval_reject,
    approval_request_adjustment,
    approval_request_fee_waiver,
)
from core.actors import SYSTEM, Actor
from core.exceptions import InvalidStateTransition, PermissionDenied
from core.operations import run
from events.models import Event
from tests.accounts.ledger.helpers import balance, open_account
from tests.backoffice.helpers import staff
from tests.backoffice.test_dashboard import listed, queues
from tests.cards.helpers import make_institution
from tests.staff import sign_in
from tests.transfers.test_concurrency_http import run_threads

pytestmark = pytest.mark.django_db

APPROVALS = reverse("admin:backoffice_approvalrequest_changelist")
ACCOUNTS = reverse("admin:accounts_account_changelist")
FEES = reverse("admin:accounts_fee_changelist")
HIDDEN_INPUT = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')
START = 10_000  # 100.00 EUR on the account


def client_of(user) -> Client:
    client = Client()
    sign_in(client, user)
    return client


def act(client, url: str, action: str, pks: list[str], **form):
    """Start `action` on `pks`, then answer its confirmation page with `form`."""
    page = client.post(url, {"action": action, "index": "0", "_selected_action": pks})
    assert page.status_code == 200, page.status_code
    assert "confirm_name" in page.context, "no confirmation page"
    data = {}
    for name, value in HIDDEN_INPUT.findall(page.content.decode()):
        data.setdefault(name, []).append(value)
    return client.post(url, {**data, **form}, follow=True)


def messages_of(response) -> list[tuple[str, str]]:
    return [(message.level_tag, str(message)) for message in response.context["messages"]]


def events_of(approval_id: str) -> list[tuple[str, str]]:
    return list(
        Event.objects.filter(object_id=approval_id).order_by("pk").values_list("type", "actor_id")
    )


def ask(user, account, *, direction="credit", amount=1_234, reason="Ticket 4711."):
    return run(
        approval_request_adjustment,
        actor=Actor(user=user),
        account=account,
        direction=direction,
        amount=amount,
        description="Goodwill credit",
        reason=reason,
    ).value


@pytest.fixture
def bank():
    return make_institution()


@pytest.fixture
def account(bank):
    return open_account(bank, balance=START)


@pytest.fixture
def maker(bank):
    return staff("ops-maker", roles=["operations"], institutions=[bank])


@pytest.fixture
def checker(bank):
    return staff("checker-1", roles=["compliance"], institutions=[bank])


# --- the whole flow, in the admin ------------------------------------------------------------
def test_one_asks_another_approves_and_the_adjustment_is_posted_once(account, maker, checker):
    response = act(
        client_of(maker),
        ACCOUNTS,
        "request_adjustment",
        [account.pk],
        direction="credit",
        amount="12.34",
        description="Goodwill credit",
        reason="Ticket 4711: charged twice.",
    )

    assert messages_of(response) == [
        (
            "success",
            "Asked for 1 change(s): another staff user approves each (Approvals).",
        )
    ]
    (approval,) = ApprovalRequest.objects.all()
    assert (approval.kind, approval.target_id, approval.status) == (
        "adjustment",
        account.pk,
        "pending",
    )
    assert (approval.amount, approval.currency, approval.parameters) == (
        1_234,
        "EUR",
        {
            "direction": "credit",
            "amount": 1_234,
            "currency": "EUR",
            "description": "Goodwill credit",
        },
    )
    assert (approval.requested_by, approval.request_reason) == (
        maker,
        "Ticket 4711: charged twice.",
    )
    assert balance(account) == (START, 0, START)  # nothing moves yet
    assert not Adjustment.objects.filter(account=account, created_by_user__isnull=False).exists()
    assert events_of(approval.pk) == [("approval.requested", str(maker.pk))]

    checking = client_of(checker)
    page = checking.get(reverse("admin:backoffice_approvalrequest_change", args=[approval.pk]))
    assert "12.34 EUR" in page.content.decode()
    response = act(
        checking, APPROVALS, "approve_requests", [approval.pk], reason="Checked the ticket."
    )

    assert messages_of(response) == [("success", "Approve: 1 request(s).")]
    (adjustment,) = Adjustment.objects.filter(account=account, created_by_user__isnull=False)
    assert (adjustment.direction, adjustment.amount, adjustment.created_by_user) == (
        "credit",
        1_234,
        checker,
    )
    assert adjustment.description == "Goodwill credit"
    assert balance(account) == (START + 1_234, 0, START + 1_234)
    approval.refresh_from_db()
    assert (approval.status, approval.decided_by, approval.decision_reason) == (
        "approved",
        checker,
        "Checked the ticket.",
    )
    assert approval.result_id == adjustment.pk and approval.decided_at is not None
    # Each event names its own staff user.
    assert events_of(approval.pk) == [
        ("approval.requested", str(maker.pk)),
        ("approval.approved", str(checker.pk)),
    ]
    posted = Event.objects.get(type="adjustment.posted", object_id=adjustment.pk)
    assert (posted.actor_type, posted.actor_id) == ("staff", str(checker.pk))
    assert set(LogEntry.objects.values_list("object_id", "user")) == {
        (account.pk, maker.pk),
        (approval.pk, checker.pk),
    }

    # Approved again: refused, posted once.
    response = act(checking, APPROVALS, "approve_requests", [approval.pk], reason="Again.")
    assert messages_of(response) == [("error", f"{approval.pk}: The request is approved already.")]
    assert Adjustment.objects.filter(account=account, created_by_user__isnull=False).count() == 1
    assert balance(account) == (START + 1_234, 0, START + 1_234)
    assert ledger_breaches() == []


def test_the_amount_is_read_exactly_in_the_currencys_minor_units(account, maker):
    assert minor_units("12.34", "EUR") == 1_234
    assert minor_units("0.1", "EUR") == 10
    assert minor_units("1500", "JPY") == 1_500
    assert minor_units("1.005", "KWD") == 1_005
    assert minor_units("0.29", "EUR") == 29  # a float would make 28.999999999999996
    assert minor_units("9999999999999.99", "EUR") == 999_999_999_999_999
    for wrong, currency in [
        ("12.345", "EUR"),
        ("1.5", "JPY"),
        ("0", "EUR"),
        ("0.00", "EUR"),
        ("-5", "EUR"),
        ("1e3", "EUR"),
        ("12,34", "EUR"),
        ("NaN", "EUR"),
        ("", "EUR"),
        ("10000000000000.01", "EUR"),  # past MAX_AMOUNT
    ]:
        with pytest.raises(Exception) as raised:
            minor_units(wrong, currency)
        assert type(raised.value).__name__ == "ValidationError", wrong

    response = act(
        client_of(maker),
        ACCOUNTS,
        "request_adjustment",
        [account.pk],
        direction="credit",
        amount="12.345",
        reason="Ticket.",
    )
    assert response.context["form"].errors == {
        "amount": ["EUR has 2 decimal place(s): at most 2 after the point."]
    }
    assert not ApprovalRequest.objects.exists()


# --- nobody decides their own request ----------------------------------------------------------
def test_the_requester_cannot_approve_or_reject_their_own_request(bank, account, checker):
    approval = ask(checker, account)  # compliance may decide requests, but not this one

    for service in (approval_approve, approval_reject):
        with pytest.raises(PermissionDenied) as refused:
            run(service, actor=Actor(user=checker), approval=approval, reason="Mine.")
        assert refused.value.message == (
            "You asked for this change: another staff user must approve or reject it."
        )

    # The admin refuses too, for each of the two actions.
    own = client_of(checker)
    for action in ("approve_requests", "reject_requests"):
        response = act(own, APPROVALS, action, [approval.pk], reason="Mine.")
        assert messages_of(response) == [
            (
                "error",
                f"{approval.pk}: You asked for this change: another staff user must approve "
                "or reject it.",
            )
        ]
    approval.refresh_from_db()
    assert (approval.status, approval.decided_by) == ("pending", None)
    assert balance(account) == (START, 0, START)
    assert events_of(approval.pk) == [("approval.requested", str(checker.pk))]

    # And the database, whatever writes the row.
    for status in ("approved", "rejected"):
        with pytest.raises(IntegrityError, match="approval_decider_not_requester"):
            with transaction.atomic():
                ApprovalRequest.objects.filter(pk=approval.pk).update(
                    status=status,
                    decided_by=checker,
                    decided_at=timezone.now(),
                    result_id="adj_x" if status == "approved" else "",
                )


def test_a_refusal_quotes_the_request_id_as_it_is(bank, account, checker):
    """The page writes a message verbatim: the id that opens it is the id the search finds
    ("apr_01M8…", never "Apr_01M8…")."""
    approval = ask(checker, account)

    response = act(client_of(checker), APPROVALS, "approve_requests", [approval.pk], reason="Me.")

    page = response.content.decode()
    assert approval.pk.startswith("apr_")
    assert f'<li class="error">{approval.pk}: You asked for this change' in page
    assert approval.pk.capitalize() not in page


def test_the_database_keeps_a_decision_whole(account, maker, checker):
    approval = ask(maker, account)
    broken = [
        {"status": "approved", "result_id": "adj_x"},  # no decider
        {"status": "rejected", "decided_by": checker},  # no time
        {"decided_by": checker, "decided_at": timezone.now()},  # pending, with a decider
        {
            "status": "rejected",
            "decided_by": checker,
            "decided_at": timezone.now(),
            "result_id": "x",
        },
        {"status": "approved", "decided_by": checker, "decided_at": timezone.now()},  # no result
        {"amount": 0},
        {"kind": "pin_unblock"},  # not open yet
    ]
    for values in broken:
        with pytest.raises(IntegrityError), transaction.atomic():
            ApprovalRequest.objects.filter(pk=approval.pk).update(**values)


# --- rejected; refused ---------------------------------------------------------------------------
def test_a_rejected_request_moves_nothing(account, maker, checker):
    approval = ask(maker, account)
    checking = client_of(checker)

    response = act(checking, APPROVALS, "reject_requests", [approval.pk], reason="No ticket found.")

    assert messages_of(response) == [("success", "Reject: 1 request(s).")]
    approval.refresh_from_db()
    assert (approval.status, approval.decided_by, approval.result_id) == (
        "rejected",
        checker,
        "",
    )
    assert approval.decision_reason == "No ticket found."
    assert balance(account) == (START, 0, START)
    assert not Adjustment.objects.filter(account=account, created_by_user__isnull=False).exists()
    assert events_of(approval.pk) == [
        ("approval.requested", str(maker.pk)),
        ("approval.rejected", str(checker.pk)),
    ]
    # Decided: it cannot be approved afterwards.
    response = act(checking, APPROVALS, "approve_requests", [approval.pk], reason="After all.")
    assert messages_of(response) == [("error", f"{approval.pk}: The request is rejected already.")]
    assert balance(account) == (START, 0, START)


def test_a_refused_adjustment_leaves_the_request_pending_and_says_why(account, maker, checker):
    approval = ask(maker, account, direction="debit", amount=START + 1)

    response = act(
        client_of(checker), APPROVALS, "approve_requests", [approval.pk], reason="Checked."
    )

    assert messages_of(response) == [
        (
            "error",
            f"{approval.pk}: The account's available balance does not cover this amount.",
        )
    ]
    approval.refresh_from_db()
    assert (approval.status, approval.decided_by, approval.decided_at) == ("pending", None, None)
    assert balance(account) == (START, 0, START)
    assert not Adjustment.objects.filter(account=account, created_by_user__isnull=False).exists()
    assert events_of(approval.pk) == [("approval.requested", str(maker.pk))]
    assert not LogEntry.objects.filter(object_id=approval.pk).exists()
    # Once the money is there, the same request is approved.
    ask(maker, account, amount=1)  # not this one: another request, still pending
    run(approval_approve, actor=Actor(user=checker), approval=ask(maker, account), reason="ok")
    run(approval_approve, actor=Actor(user=checker), approval=approval, reason="Funded now.")
    approval.refresh_from_db()
    assert approval.status == "approved"
    assert balance(account) == (1_233, 0, 1_233)
    assert ledger_breaches() == []


def test_a_fee_waiver_is_asked_for_and_approved_by_another(bank, account, checker):
    fee = run(
        fee_charge, actor=SYSTEM, account=account, kind="monthly", amount=300, period="2026-01"
    ).value
    other = staff("compliance-2", roles=["compliance"], institutions=[bank])
    approval = run(
        approval_request_fee_waiver, actor=Actor(user=checker), fee=fee, reason="Goodwill."
    ).value
    assert (approval.kind, approval.amount, approval.status) == ("fee_waiver", 300, "pending")
    assert Fee.objects.get(pk=fee.pk).status == "charged"

    run(approval_approve, actor=Actor(user=other), approval=approval, reason="Allowed.")

    stored = Fee.objects.get(pk=fee.pk)
    assert (stored.status, stored.waived_by, stored.waiver_reason) == ("waived", other, "Goodwill.")
    approval.refresh_from_db()
    assert (approval.status, approval.result_id) == ("approved", fee.pk)
    assert balance(account) == (START, 0, START)  # charged, then given back
    # Asked again for a fee waived: refused.
    with pytest.raises(InvalidStateTransition):
        run(approval_request_fee_waiver, actor=Actor(user=checker), fee=stored, reason="Again.")


# --- the institution limit -----------------------------------------------------------------------
def test_another_institutions_staff_can_neither_see_nor_decide_it(account, maker):
    approval = ask(maker, account)
    elsewhere = staff("their-compliance", roles=["compliance"], institutions=[make_institution()])
    theirs = client_of(elsewhere)

    listing = theirs.get(APPROVALS)
    assert listing.status_code == 200 and listing.context["cl"].result_count == 0
    page = theirs.get(reverse("admin:backoffice_approvalrequest_change", args=[approval.pk]))
    assert page.status_code == 302  # "doesn't exist": back to the index
    response = theirs.post(
        APPROVALS,
        {"action": "approve_requests", "index": "0", "_selected_action": [approval.pk]},
        follow=True,
    )
    assert response.status_code == 200
    assert response.context.get("confirm_name") is None or not response.context["objects"]
    # Even confirmed, the action gets no row of another institution.
    theirs.post(
        APPROVALS,
        {
            "action": "approve_requests",
            "index": "0",
            "_selected_action": [approval.pk],
            "confirm": "yes",
            "reason": "Sneaky.",
        },
    )
    approval.refresh_from_db()
    assert approval.status == "pending"
    assert balance(account) == (START, 0, START)
    assert queues(theirs)["Approvals waiting"][0] == 0


# --- the dashboard's queue -----------------------------------------------------------------------
def test_the_queue_counts_the_pending_requests_the_user_may_decide(bank, account, maker, checker):
    first, second = ask(maker, account), ask(maker, account, amount=5)
    ask(checker, account, amount=7)  # the checker's own: someone else decides it
    decided = ask(maker, account, amount=9)
    run(approval_reject, actor=Actor(user=checker), approval=decided, reason="No.")

    shown = queues(client_of(checker))

    count, url = shown["Approvals waiting"]
    assert count == 2
    checking = client_of(checker)
    assert listed(checking, url) == 2
    assert set(checking.get(url).context["cl"].result_list.values_list("pk", flat=True)) == {
        first.pk,
        second.pk,
    }
    # Another compliance officer may decide all three pending; the maker (operations) decides
    # none and is not shown the queue.
    other = staff("compliance-2", roles=["compliance"], institutions=[bank])
    assert queues(client_of(other))["Approvals waiting"][0] == 3
    assert "Approvals waiting" not in queues(client_of(maker))


# --- two approvers at once -----------------------------------------------------------------------
@pytest.mark.django_db(transaction=True)
def test_approving_twice_at_once_posts_once(bank):
    from django.contrib.auth.models import User

    account = open_account(bank, balance=START)
    maker = User.objects.create_user("maker-t", is_staff=True)
    checkers = [User.objects.create_user(f"checker-t{i}", is_staff=True) for i in range(4)]
    approval = ask(maker, account, amount=500)

    def approve(index):
        try:
            run(
                approval_approve,
                actor=Actor(user=checkers[index]),
                approval=ApprovalRequest.objects.get(pk=approval.pk),
                reason="At once.",
            )
            return "approved"
        except InvalidStateTransition as refused:
            return refused.message

    results = run_threads(len(checkers), approve)

    assert sorted(results) == ["The request is approved already."] * 3 + ["approved"]
    assert Adjustment.objects.filter(account=account, created_by_user__isnull=False).count() == 1
    assert balance(account) == (START + 500, 0, START + 500)
    assert Event.objects.filter(type="approval.approved", object_id=approval.pk).count() == 1
    assert ledger_breaches() == []
