"""Case work (docs/back-office.md, "Case work"): notes and an assignee on disputes and monitoring
alerts, the "mine" queue, each note and assignment an event of the row with the staff user as
its actor and a line of its admin history; notes never hold a card or account number."""

import re

import pytest
from django.contrib.admin.models import LogEntry
from django.urls import reverse

from backoffice.models import Case, CaseNote
from backoffice.services.cases import case_assign, case_note_add
from core.actors import Actor
from core.exceptions import PermissionDenied, ValidationFailed
from core.operations import run
from disputes.models import Dispute
from events.models import Event
from monitoring.models import MonitoringAlert
from monitoring.services import alert_resolve
from tests.api.test_scopes import World
from tests.backoffice.helpers import staff
from tests.backoffice.test_dashboard import queues
from tests.cards.helpers import make_institution
from tests.events.test_actor import HIDDEN_INPUT, _alert, _dispute
from tests.staff import sign_in

pytestmark = pytest.mark.django_db

DISPUTES = reverse("admin:disputes_dispute_changelist")
ALERTS = reverse("admin:monitoring_monitoringalert_changelist")
PAN = "4111 1111 1111 1111"
NUMBER_REFUSED = "Must not hold a card or account number: write its last four digits instead."


@pytest.fixture
def bank():
    return make_institution()


@pytest.fixture
def world(bank):
    return World("v2", bank)


@pytest.fixture
def ops(bank):
    return staff("olga", roles=["operations"], institutions=[bank])


def page_of(dispute_id: str) -> str:
    return reverse("admin:disputes_dispute_change", args=[dispute_id])


def act(client, url: str, action: str, pk: str, **answers):
    """Press `action` on the row `pk` of the list at `url`; answer its page, if it has one."""
    start = {"action": action, "index": "0", "_selected_action": [pk]}
    response = client.post(url, start)
    if response.status_code == 200:
        data = {}
        for name, value in HIDDEN_INPUT.findall(response.content.decode()):
            data.setdefault(name, []).append(value)
        data.pop("csrfmiddlewaretoken", None)
        response = client.post(url, {**data, **answers})
    return response


def listed(client, url: str, **query) -> list[str]:
    return [row.pk for row in client.get(url, query).context["cl"].result_list]


def messages_of(client, url: str) -> list[str]:
    return [str(m) for m in client.get(url).context["messages"]]


def events_of(object_id: str, type: str) -> list[Event]:
    return list(Event.objects.filter(object_id=object_id, type=type).order_by("pk"))


def test_operations_notes_a_dispute_and_the_note_is_an_event_of_theirs(client, world, ops):
    sign_in(client, ops)
    dispute_id = _dispute(world)

    response = act(client, DISPUTES, "add_notes", dispute_id, note="Cardholder sent the receipt.")

    assert response.status_code == 302
    note = CaseNote.objects.get()
    assert (note.author, note.text, note.case.object_id) == (
        ops,
        "Cardholder sent the receipt.",
        dispute_id,
    )
    [event] = events_of(dispute_id, "dispute.note_added")
    assert event.data == {"note_id": note.pk}  # the text stays in the back office
    assert (event.actor_type, event.actor_id) == ("staff", str(ops.pk))
    entry = LogEntry.objects.get(object_id=dispute_id)
    assert (entry.user, entry.get_change_message()) == (
        ops,
        f"Note {note.pk} added (admin action “Add a note”).",
    )
    # On the dispute's page, with who wrote it.
    text = client.get(page_of(dispute_id)).content.decode()
    assert "Cardholder sent the receipt." in text and "olga" in text


@pytest.mark.parametrize(
    "note",
    [PAN, "card 4111-1111-1111-1111 stolen", "account 400000000002 is theirs"],
)
def test_a_note_holding_a_card_or_account_number_is_refused(client, world, ops, note):
    sign_in(client, ops)
    dispute_id = _dispute(world)
    assert re.sub(r"\D", "", note)  # (a number is in it)

    response = act(client, DISPUTES, "add_notes", dispute_id, note=note)

    assert response.status_code == 200  # the page again, with the error
    assert response.context["form"].errors == {"note": [NUMBER_REFUSED]}
    assert not CaseNote.objects.exists() and not events_of(dispute_id, "dispute.note_added")
    # The service refuses it too, whatever calls it.
    with pytest.raises(ValidationFailed):
        run(
            case_note_add,
            actor=Actor(user=ops),
            obj=Dispute.objects.get(pk=dispute_id),
            text=note,
        )
    assert not CaseNote.objects.exists()


def test_a_blank_note_is_refused(client, world, ops):
    sign_in(client, ops)
    dispute_id = _dispute(world)
    response = act(client, DISPUTES, "add_notes", dispute_id, note="   ")
    assert response.context["form"].errors == {"note": ["This field is required."]}
    assert not CaseNote.objects.exists()


def test_assigned_to_me_is_my_queue(client, world, bank, ops):
    sign_in(client, ops)
    mine, other = _dispute(world), _dispute(world)

    act(client, DISPUTES, "assign_to_me", mine)

    assert messages_of(client, DISPUTES)[-1] == "Assigned 1 dispute(s) to you."
    assert listed(client, DISPUTES, assigned="me") == [mine]
    assert listed(client, DISPUTES, assigned="nobody") == [other]
    [event] = events_of(mine, "dispute.assigned")
    assert event.data == {"assignee_id": str(ops.pk), "previous_assignee_id": None}
    assert (event.actor_type, event.actor_id) == ("staff", str(ops.pk))
    assert LogEntry.objects.get(object_id=mine).get_change_message() == (
        "Assigned to olga, was nobody (admin action “Assign to me”)."
    )
    # The dashboard counts mine and links to them.
    count, url = queues(client)["Disputes assigned to me"]
    assert count == 1 and [r.pk for r in client.get(url).context["cl"].result_list] == [mine]

    # Again: already mine, nothing written.
    act(client, DISPUTES, "assign_to_me", mine)
    assert messages_of(client, DISPUTES)[-1] == f"Already yours, left as they were: {mine}."
    assert len(events_of(mine, "dispute.assigned")) == 1

    # A closed dispute leaves the queue (still in "all, closed too").
    act(client, DISPUTES, "withdraw", mine, reason="The cardholder withdrew it.")
    assert Dispute.objects.get(pk=mine).status == Dispute.Status.CLOSED
    assert listed(client, DISPUTES, assigned="me") == []
    assert listed(client, DISPUTES, assigned="me_all") == [mine]


def test_assigning_to_a_colleague_offers_only_who_may_work_on_it(client, world, bank, ops):
    colleague = staff("carla", roles=["operations"], institutions=[bank])
    staff("sam", roles=["support"], institutions=[bank])  # may not move disputes
    staff("otto", roles=["operations"], institutions=[make_institution()])  # another bank's
    sign_in(client, ops)
    dispute_id = _dispute(world)

    page = client.post(
        DISPUTES, {"action": "assign", "index": "0", "_selected_action": [dispute_id]}
    )
    offered = [label for _, label in page.context["form"].fields["assignee"].choices]
    assert offered == ["carla", "olga", "Nobody (unassign)"]

    act(client, DISPUTES, "assign", dispute_id, assignee=str(colleague.pk), reason="Her case.")
    assert Case.objects.get(object_id=dispute_id).assignee == colleague
    assert LogEntry.objects.get(object_id=dispute_id).get_change_message() == (
        "Assigned to carla, was nobody (admin action “Assign”; reason: “Her case.”)."
    )
    assert listed(client, DISPUTES, assigned="me") == []  # carla's, not olga's

    # Unassigned: to nobody, an event too.
    act(client, DISPUTES, "assign", dispute_id, assignee="nobody")
    case = Case.objects.get(object_id=dispute_id)
    assert (case.assignee, case.assigned_by) == (None, ops)
    assert [e.data for e in events_of(dispute_id, "dispute.assigned")] == [
        {"assignee_id": str(colleague.pk), "previous_assignee_id": None},
        {"assignee_id": None, "previous_assignee_id": str(colleague.pk)},
    ]
    assert listed(client, DISPUTES, assigned="nobody") == [dispute_id]


def test_the_service_refuses_an_assignee_who_may_not_work_on_it(world, bank, ops):
    dispute = Dispute.objects.get(pk=_dispute(world))
    support = staff("sam", roles=["support"], institutions=[bank])
    elsewhere = staff("otto", roles=["operations"], institutions=[make_institution()])
    for user in (support, elsewhere):
        with pytest.raises(PermissionDenied):
            run(case_assign, actor=Actor(user=ops), obj=dispute, assignee=user)
    assert not Case.objects.exists() and not events_of(dispute.pk, "dispute.assigned")


def test_compliance_works_alerts_as_cases(client, world, bank):
    officer = staff("cora", roles=["compliance"], institutions=[bank])
    sign_in(client, officer)
    alert_id = _alert(world)

    act(client, ALERTS, "assign_to_me", alert_id)
    act(client, ALERTS, "add_notes", alert_id, note="Called the cardholder: card 1111 is theirs.")

    assert listed(client, ALERTS, assigned="me") == [alert_id]
    assert [e.type for e in Event.objects.filter(object_id=alert_id).order_by("pk")][-2:] == [
        "monitoring.alert_assigned",
        "monitoring.alert_note_added",
    ]
    assert {
        (e.actor_type, e.actor_id)
        for e in Event.objects.filter(object_id=alert_id, type__startswith="monitoring.alert_")
        if e.type != "monitoring.alert_raised"
    } == {("staff", str(officer.pk))}
    page = client.get(reverse("admin:monitoring_monitoringalert_change", args=[alert_id]))
    assert "card 1111 is theirs" in page.content.decode()
    # Resolved: out of the queue.
    alert_resolve(alert=MonitoringAlert.objects.get(pk=alert_id), user=officer, note="Fine.")
    assert listed(client, ALERTS, assigned="me") == []


def test_support_reads_the_notes_and_has_no_case_action(client, world, bank, ops):
    dispute = Dispute.objects.get(pk=_dispute(world))
    run(case_note_add, actor=Actor(user=ops), obj=dispute, text="Waiting for the merchant.")
    sign_in(client, staff("sam", roles=["support"], institutions=[bank]))

    page = client.get(page_of(dispute.pk)).content.decode()

    assert "Waiting for the merchant." in page
    assert "object-action-button" not in page
    act(client, DISPUTES, "add_notes", dispute.pk, note="Me too.")
    assert CaseNote.objects.count() == 1


def test_one_case_per_row_whatever_is_written_on_it(world, ops):
    dispute = Dispute.objects.get(pk=_dispute(world))
    for text in ("First.", "Second."):
        run(case_note_add, actor=Actor(user=ops), obj=dispute, text=text)
    run(case_assign, actor=Actor(user=ops), obj=dispute, assignee=ops)
    case = Case.objects.get()
    assert (case.object_id, case.institution_id, case.assignee) == (
        dispute.pk,
        dispute.institution_id,
        ops,
    )
    assert [note.text for note in case.notes.order_by("pk")] == ["First.", "Second."]
