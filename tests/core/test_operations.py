"""The operation boundary (`core.operations`): one durable transaction, the actor, what a refusal
keeps, the outcome — the same for every entry point.

The money case the boundary exists for: a card transfer refused by a monitoring rule keeps its
alert whoever called `transfer_create` (before the boundary only the API ran the code that kept
it; an admin action, a command or a job dropped it).
"""

import pytest
from django.db import connection, transaction

from core import operations
from core.actors import SYSTEM, Actor
from core.exceptions import DeclinedByMonitoring, IncorrectPin, NotFound, ValidationFailed
from core.operations import Outcome, changed, keep_if_refused, unchanged
from events.models import Event
from monitoring.models import MonitoringAlert
from tests.cards.helpers import make_account, make_institution
from tests.factories import issue_key
from tests.monitoring.helpers import active_card, threshold
from transfers.models import Transfer
from transfers.services import transfer_create

pytestmark = pytest.mark.django_db


def _note(institution, name: str) -> None:
    """A write the tests can count: an event of the institution."""
    from events.services import emit

    emit(institution=institution, type="customer.created", object_type="customer", object_id=name)


def _notes(institution) -> list[str]:
    return list(
        Event.objects.filter(institution=institution, type="customer.created")
        .order_by("pk")
        .values_list("object_id", flat=True)
    )


def test_run_commits_the_service_and_hands_back_its_outcome():
    fi = make_institution()

    def service(*, name):
        _note(fi, name)
        return changed(name, previous="before")

    outcome = operations.run(service, actor=SYSTEM, name="cus_1")
    assert outcome == Outcome("cus_1", changed=True, previous="before")
    assert _notes(fi) == ["cus_1"]
    # A plain return value is a change; `unchanged` says nothing was written.
    assert operations.run(lambda: 7, actor=SYSTEM) == Outcome(7, changed=True)
    assert operations.run(lambda: unchanged(7), actor=SYSTEM).changed is False


def test_run_sets_the_actor_and_passes_it_to_a_service_that_takes_one(admin_user):
    fi = make_institution()
    staff = Actor(user=admin_user)
    seen = []

    def service(*, actor):
        seen.append(actor)
        _note(fi, "cus_2")

    operations.run(service, actor=staff)
    event = Event.objects.get(institution=fi)
    assert seen == [staff]
    assert (event.actor_type, event.actor_id) == ("staff", str(admin_user.pk))


def test_a_refusal_undoes_every_write_of_the_service():
    fi = make_institution()

    def service():
        _note(fi, "cus_3")
        raise ValidationFailed("no")

    with pytest.raises(ValidationFailed):
        operations.run(service, actor=SYSTEM)
    assert _notes(fi) == []


def test_a_refusal_keeps_what_the_service_asked_to_keep_and_only_that():
    fi = make_institution()

    def service():
        _note(fi, "undone")
        keep_if_refused(lambda: _note(fi, "kept"))
        raise NotFound()

    with pytest.raises(NotFound):
        operations.run(service, actor=SYSTEM)
    assert _notes(fi) == ["kept"]
    # Kept writes run as the operation's actor.
    assert Event.objects.get(institution=fi).actor_type == "system"


def test_a_kept_write_may_answer_instead_of_the_refusal():
    fi = make_institution()

    def service():
        keep_if_refused(lambda: IncorrectPin(details={"remainingTries": 1}))
        raise IncorrectPin(details={"remainingTries": 2})

    with pytest.raises(IncorrectPin) as excinfo:
        operations.run(service, actor=SYSTEM)
    assert excinfo.value.details == {"remainingTries": 1}
    assert _notes(fi) == []


def test_a_success_runs_no_kept_write():
    fi = make_institution()

    def service():
        keep_if_refused(lambda: _note(fi, "kept"))
        _note(fi, "done")

    operations.run(service, actor=SYSTEM)
    assert _notes(fi) == ["done"]


def test_attempt_keeps_in_the_outer_transaction_only_what_will_be_answered():
    """The API's shape: the outer transaction holds the idempotency record; a refusal it stores
    commits its kept writes with it, any other leaves them to the operation's exit."""
    fi = make_institution()
    with operations.operation(SYSTEM) as operation:
        _note(fi, "outer")
        with pytest.raises(ValidationFailed):
            with operation.attempt(answered=lambda error: True):
                _note(fi, "undone")
                keep_if_refused(lambda: _note(fi, "kept with the answer"))
                raise ValidationFailed()
    assert _notes(fi) == ["outer", "kept with the answer"]

    with pytest.raises(NotFound):
        with operations.operation(SYSTEM) as operation:
            _note(fi, "rolled back")
            with operation.attempt(answered=lambda error: False):
                keep_if_refused(lambda: _note(fi, "kept after the rollback"))
                raise NotFound()
    assert _notes(fi) == ["outer", "kept with the answer", "kept after the rollback"]


def test_keep_if_refused_outside_an_operation_keeps_nothing_to_undo():
    fi = make_institution()
    keep_if_refused(lambda: _note(fi, "never"))  # no operation: nothing would undo a write
    assert _notes(fi) == []


def test_an_operation_inside_an_open_transaction_is_refused():
    with transaction.atomic():
        with pytest.raises(RuntimeError):
            operations.run(lambda: None, actor=SYSTEM)
        with pytest.raises(RuntimeError):
            operations.run_batches(lambda: None, actor=SYSTEM)


def test_a_refused_card_transfer_keeps_its_alert_through_any_entry_point(admin_user):
    """The monitoring alert of a refused card transfer outlives the refusal when the transfer
    is asked for by a staff user or the system, as it does through the API."""
    fi = make_institution()
    card = active_card(fi)
    threshold(fi, amount=1_000, action="decline")
    destination = make_account(fi)
    for actor in (SYSTEM, Actor(user=admin_user)):
        with pytest.raises(DeclinedByMonitoring):
            operations.run(
                transfer_create,
                actor=actor,
                institution=fi,
                source=card.account,
                destination=destination,
                amount=5_000,
                currency="EUR",
                source_card=card,
            )
    assert not Transfer.objects.filter(institution=fi).exists()
    assert MonitoringAlert.objects.filter(institution=fi, card=card).count() == 2


@pytest.mark.django_db(transaction=True)
def test_kept_writes_really_commit_after_the_rollback():
    """Outside a test's transaction: the kept write is committed on its own, after the
    operation's transaction rolled back (seen from a new connection state)."""
    fi = make_institution()
    api_key, _ = issue_key(fi)

    def service():
        _note(fi, "undone")
        keep_if_refused(lambda: _note(fi, "kept"))
        raise NotFound()

    with pytest.raises(NotFound):
        operations.run(service, actor=Actor(api_key=api_key))
    assert not connection.in_atomic_block
    assert _notes(fi) == ["kept"]
    assert Event.objects.get(institution=fi).actor_id == api_key.pk
