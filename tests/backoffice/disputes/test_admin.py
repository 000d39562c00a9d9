"""The back office of disputes (issue 32 item 6; docs/disputes.md, "Back office"): the page
of a dispute (stage, money, split, evidence, steps, deadlines), the disputes due, and the
operations role's moves through the service with a reason, refused for a dispute whose stage
does not allow them; the institution limit; what support may not do."""

from datetime import timedelta

import pytest
from django.contrib.admin.models import LogEntry
from django.urls import reverse
from django.utils import timezone

from disputes.models import Dispute, DisputeDeadline
from tests.accounts.api.helpers import balances
from tests.api.test_scopes import World
from tests.backoffice.helpers import staff
from tests.cards.helpers import make_institution
from tests.events.test_actor import REPRESENTED, SUBMITTED, _dispute, run_action
from tests.staff import sign_in

pytestmark = pytest.mark.django_db

CHANGELIST = reverse("admin:disputes_dispute_changelist")


def page_of(dispute_id: str) -> str:
    return reverse("admin:disputes_dispute_change", args=[dispute_id])


@pytest.fixture
def bank():
    return make_institution()


@pytest.fixture
def world(bank):
    return World("v2", bank)


@pytest.fixture
def operations_client(client, bank):
    sign_in(client, staff("ops", roles=["operations"], institutions=[bank]))
    return client


def test_the_page_of_a_dispute_shows_its_stage_money_and_history(operations_client, world):
    dispute_id = _dispute(world, *REPRESENTED)

    page = operations_client.get(page_of(dispute_id))

    assert page.status_code == 200
    text = page.content.decode()
    for shown in (
        "representment",  # its stage, and a step's
        "0.10 EUR",  # disputed, the provisional credit, what is open again
        "provisional_credit",  # steps
        "chargeback",
        "network_filing",  # its deadline
    ):
        assert shown in text, shown


def test_the_disputes_due_list(operations_client, world):
    due = _dispute(world)
    _dispute(world)  # not due
    DisputeDeadline.objects.filter(dispute_id=due).update(approaching_at=timezone.now())

    response = operations_client.get(CHANGELIST, {"due": "yes"})

    assert [row.pk for row in response.context["cl"].result_list] == [due]


def test_the_disputes_due_come_by_their_nearest_deadline_the_missed_marked(
    operations_client, world
):
    later, missed, sooner = _dispute(world), _dispute(world), _dispute(world)
    today = timezone.localdate()
    now = timezone.now()
    for dispute_id, days, found in [(later, 9, "approaching_at"), (missed, -2, "missed_at")]:
        DisputeDeadline.objects.filter(dispute_id=dispute_id).update(
            due_on=today + timedelta(days=days), **{found: now}
        )
    DisputeDeadline.objects.filter(dispute_id=sooner).update(
        due_on=today + timedelta(days=1), approaching_at=now
    )
    # A deadline met is no longer one to meet: the nearest not met counts.
    DisputeDeadline.objects.create(
        dispute_id=later, name="resolution", due_on=today - timedelta(days=30), met_at=now
    )

    response = operations_client.get(CHANGELIST, {"due": "yes"})

    assert [row.pk for row in response.context["cl"].result_list] == [missed, sooner, later]
    html = response.content.decode()
    assert html.count('<strong class="deadline-missed">Missed:</strong>') == 1
    missed_row = html[html.index(missed[-8:]) :]
    assert missed_row.index("Missed:") < missed_row.index(sooner[-8:])
    assert html.count("(approaching)") == 2


def test_operations_submits_with_a_reason(operations_client, world):
    dispute_id = _dispute(world)
    account_id = Dispute.objects.get(pk=dispute_id).account_id
    before = balances(world.api, account_id)["posted"]

    run_action(operations_client, "disputes.dispute", "submit", dispute_id)

    dispute = Dispute.objects.get(pk=dispute_id)
    assert (dispute.status, dispute.provisional_credit) == ("submitted", 10)
    step = dispute.steps.get(kind="submitted")
    assert step.reason == "Checked with the cardholder by phone."
    assert step.created_by_user.username == "ops"
    assert balances(world.api, account_id)["posted"] == before + 10
    [entry] = LogEntry.objects.filter(object_id=dispute_id)
    assert entry.change_message == (
        "Submit (admin action; reason: “Checked with the cardholder by phone.”)."
    )


def test_operations_grants_the_provisional_credit_apart_from_the_stages(operations_client, world):
    draft = _dispute(world)
    credited = _dispute(world, SUBMITTED)
    account_id = Dispute.objects.get(pk=draft).account_id
    before = balances(world.api, account_id)["posted"]

    run_action(operations_client, "disputes.dispute", "grant_credit", draft)
    run_action(operations_client, "disputes.dispute", "grant_credit", credited)  # refused

    dispute = Dispute.objects.get(pk=draft)
    assert (dispute.status, dispute.provisional_credit) == ("draft", 10)
    step = dispute.steps.get(kind="provisional_credit")
    assert (step.reason, step.created_by_user.username) == (
        "Checked with the cardholder by phone.",
        "ops",
    )
    assert balances(world.api, account_id)["posted"] == before + 10
    assert Dispute.objects.get(pk=credited).provisional_credit == 10  # once, at submission
    assert not LogEntry.objects.filter(object_id=credited).exists()


def test_a_loss_written_off_by_staff(operations_client, world):
    dispute_id = _dispute(world, *REPRESENTED)

    run_action(operations_client, "disputes.dispute", "write_off", dispute_id)

    dispute = Dispute.objects.get(pk=dispute_id)
    assert (dispute.status, dispute.outcome, dispute.written_off, dispute.remaining) == (
        "closed",
        "lost",
        10,
        0,
    )


def test_a_move_the_stage_does_not_allow_is_refused_alone(operations_client, world):
    draft = _dispute(world)
    submitted = _dispute(world, SUBMITTED)

    url = CHANGELIST
    data = {"action": "write_off", "index": "0", "_selected_action": [draft, submitted]}
    first = operations_client.post(url, data)
    confirmed = {**data, "confirm": "1", "reason": "Merchant proved delivery."}
    response = operations_client.post(url, confirmed, follow=True)

    assert first.status_code == 200
    messages = [str(m) for m in response.context["messages"]]
    assert any(draft in m and "draft" in m for m in messages), messages
    assert any(submitted in m and "submitted" in m for m in messages), messages
    assert Dispute.objects.get(pk=draft).status == "draft"
    assert Dispute.objects.get(pk=submitted).status == "submitted"


def test_support_looks_but_may_not_move(client, world, bank):
    dispute_id = _dispute(world)
    sign_in(client, staff("support", roles=["support"], institutions=[bank]))

    assert client.get(page_of(dispute_id)).status_code == 200
    run_action(client, "disputes.dispute", "submit", dispute_id)  # not offered: nothing runs

    assert Dispute.objects.get(pk=dispute_id).status == "draft"


def test_another_institutions_staff_do_not_see_it(client, world):
    dispute_id = _dispute(world)
    sign_in(client, staff("elsewhere", roles=["operations"], institutions=[make_institution()]))

    assert client.get(page_of(dispute_id)).status_code == 302
    assert client.get(CHANGELIST).context["cl"].result_count == 0
