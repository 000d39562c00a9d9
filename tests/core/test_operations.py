"""The operation boundary (`core.operations`): one durable transaction, the actor, what a refusal
keeps, the outcome — the same for every entry point.

The money case the boundary exists for: a card transfer refused by a monitoring rule keeps its
alert whoever called `transfer_create` (before the boundary only the API ran the code that kept
it; an admin action, a command or a job dropped it).

`part()` (an item of an independent transfer batch): a refused part undoes its own writes only,
runs its kept writes at once (committed with the operation), and they are done again, once,
when the whole operation is refused after all; outside an operation it raises.
"""

from collections import Counter

import pytest
from django.db import connection, transaction

from core import operations
from core.actors import SYSTEM, Actor
from core.exceptions import DeclinedByMonitoring, IncorrectPin, NotFound, ValidationFailed
from core.operations import Outcome, changed, keep_if_refused, unchanged
from customers.models import Customer
from customers.services import customer_create
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


def test_an_answered_refusal_leaves_its_kept_writes_to_the_transaction_that_answers_it():
    """The API's shape: the operation rolls back whole; a refusal the caller answers (an
    idempotency record stores it) has its kept writes run by the caller, in the transaction
    that commits the answer; any other runs them itself, after the rollback."""
    fi = make_institution()
    with pytest.raises(ValidationFailed) as refused:
        with operations.operation(SYSTEM, answered=lambda error: True) as operation:
            _note(fi, "undone")
            keep_if_refused(lambda: _note(fi, "kept with the answer"))
            raise ValidationFailed()
    assert _notes(fi) == []  # nothing kept yet: not without the answer
    with operations.operation(SYSTEM):
        _note(fi, "the answer")
        assert operation.keep(refused.value) is refused.value
    assert _notes(fi) == ["the answer", "kept with the answer"]

    with pytest.raises(NotFound):
        with operations.operation(SYSTEM, answered=lambda error: False):
            _note(fi, "rolled back")
            keep_if_refused(lambda: _note(fi, "kept after the rollback"))
            raise NotFound()
    assert _notes(fi) == ["the answer", "kept with the answer", "kept after the rollback"]


def test_a_kept_write_answering_in_its_place_is_what_keep_returns():
    fi = make_institution()

    def counted():
        _note(fi, "counted")
        return IncorrectPin(details={"remainingTries": 0})

    with pytest.raises(IncorrectPin) as refused:
        with operations.operation(SYSTEM, answered=lambda error: True) as operation:
            keep_if_refused(counted)
            raise IncorrectPin(details={"remainingTries": 1})
    with operations.operation(SYSTEM):
        answer = operation.keep(refused.value)
    assert answer.details == {"remainingTries": 0}
    assert _notes(fi) == ["counted"]


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


# --- part(): a piece of an operation that may be refused on its own -----------------------------


def _customer(institution, name: str) -> None:
    """A real write of the domain: a customer (its row and its `customer.created` event)."""
    customer_create(institution=institution, first_name=name, last_name="Part", country_code="276")


def _customers(institution) -> dict[str, int]:
    """How many customers of each name the institution has."""
    names = Customer.objects.filter(institution=institution, last_name="Part").values_list(
        "first_name", flat=True
    )
    return dict(Counter(names))


def test_a_refused_part_undoes_only_its_own_writes():
    fi = make_institution()
    with operations.operation(SYSTEM):
        _customer(fi, "before")
        with pytest.raises(ValidationFailed):
            with operations.part():
                _customer(fi, "in the part")
                raise ValidationFailed()
        # Undone at once; the operation goes on.
        assert _customers(fi) == {"before": 1}
        _customer(fi, "after")
    assert _customers(fi) == {"before": 1, "after": 1}
    # The part's event went with its row.
    assert Event.objects.filter(institution=fi, type="customer.created").count() == 2


def test_a_part_that_passes_commits_with_the_operation():
    fi = make_institution()
    with operations.operation(SYSTEM):
        with operations.part():
            _customer(fi, "in the part")
            keep_if_refused(lambda: _customer(fi, "kept"))  # nothing refused: never run
        _customer(fi, "after")
    assert _customers(fi) == {"in the part": 1, "after": 1}


def test_a_refused_parts_kept_write_runs_at_once_and_commits_with_the_operation():
    fi = make_institution()
    with operations.operation(SYSTEM):
        keep_if_refused(lambda: _customer(fi, "kept by the operation"))  # not the part's
        with pytest.raises(NotFound):
            with operations.part():
                _customer(fi, "undone")
                keep_if_refused(lambda: _customer(fi, "kept"))
                raise NotFound()
        assert _customers(fi) == {"kept": 1}  # run at once, after the part's rollback
        _customer(fi, "after")
    assert _customers(fi) == {"kept": 1, "after": 1}


def test_a_refused_parts_kept_write_may_answer_instead_of_its_refusal():
    fi = make_institution()
    with operations.operation(SYSTEM):
        with pytest.raises(IncorrectPin) as excinfo:
            with operations.part():
                keep_if_refused(lambda: IncorrectPin(details={"remainingTries": 1}))
                raise IncorrectPin(details={"remainingTries": 2})
        assert excinfo.value.details == {"remainingTries": 1}
        _customer(fi, "after")
    assert _customers(fi) == {"after": 1}


def test_a_refused_operation_redoes_a_refused_parts_kept_write_once():
    fi = make_institution()
    with pytest.raises(ValidationFailed):
        with operations.operation(SYSTEM):
            keep_if_refused(lambda: _customer(fi, "kept by the operation"))
            with pytest.raises(NotFound):
                with operations.part():
                    _customer(fi, "undone by the part")
                    keep_if_refused(lambda: _customer(fi, "kept by the part"))
                    raise NotFound()
            assert _customers(fi) == {"kept by the part": 1}
            _customer(fi, "undone by the operation")
            raise ValidationFailed()
    # The rollback undid the part's kept write: done again, once; the operation's own too.
    assert _customers(fi) == {"kept by the part": 1, "kept by the operation": 1}


def test_a_redone_parts_kept_write_does_not_answer_for_the_operation():
    # Its answer was the part's; the operation's refusal is the operation's.
    fi = make_institution()
    with pytest.raises(ValidationFailed):
        with operations.operation(SYSTEM):
            with pytest.raises(IncorrectPin):
                with operations.part():

                    def counted():
                        _customer(fi, "kept by the part")
                        return IncorrectPin(details={"remainingTries": 0})

                    keep_if_refused(counted)
                    raise IncorrectPin(details={"remainingTries": 1})
            raise ValidationFailed()
    assert _customers(fi) == {"kept by the part": 1}


def test_an_answered_refusal_redoes_a_refused_parts_kept_write_once():
    """The API's shape: the operation's rollback undid the part's kept write (its refusal was
    answered within the operation); the transaction that answers the operation's refusal does
    it again, once."""
    fi = make_institution()
    with pytest.raises(ValidationFailed) as refused:
        with operations.operation(SYSTEM, answered=lambda error: True) as operation:
            with pytest.raises(NotFound):
                with operations.part():
                    keep_if_refused(lambda: _customer(fi, "kept by the part"))
                    raise NotFound()
            _customer(fi, "undone")
            raise ValidationFailed()
    assert _customers(fi) == {}
    with operations.operation(SYSTEM):
        operation.keep(refused.value)
    assert _customers(fi) == {"kept by the part": 1}


@pytest.mark.django_db(transaction=True)
def test_a_refused_parts_kept_write_really_commits_once_after_the_rollback():
    fi = make_institution()
    with pytest.raises(ValidationFailed):
        with operations.operation(SYSTEM):
            with pytest.raises(NotFound):
                with operations.part():
                    _customer(fi, "undone by the part")
                    keep_if_refused(lambda: _customer(fi, "kept by the part"))
                    raise NotFound()
            _customer(fi, "undone by the operation")
            raise ValidationFailed()
    assert not connection.in_atomic_block
    assert _customers(fi) == {"kept by the part": 1}


def test_a_refused_outer_part_redoes_a_refused_inner_parts_kept_write():
    fi = make_institution()
    with operations.operation(SYSTEM):
        with pytest.raises(ValidationFailed):
            with operations.part():
                with pytest.raises(NotFound):
                    with operations.part():
                        keep_if_refused(lambda: _customer(fi, "kept by the inner part"))
                        raise NotFound()
                raise ValidationFailed()  # its rollback undid the inner part's kept write
        _customer(fi, "after")
    assert _customers(fi) == {"kept by the inner part": 1, "after": 1}


def test_a_part_left_by_another_exception_keeps_the_operations_kept_writes():
    fi = make_institution()
    with pytest.raises(ValidationFailed):
        with operations.operation(SYSTEM):
            keep_if_refused(lambda: _customer(fi, "kept by the operation"))
            with pytest.raises(ZeroDivisionError):
                with operations.part():
                    _customer(fi, "undone")
                    1 / 0  # noqa: B018
            raise ValidationFailed()
    assert _customers(fi) == {"kept by the operation": 1}


def test_part_outside_an_operation_raises():
    fi = make_institution()
    with pytest.raises(RuntimeError, match="part"):
        with operations.part():
            _customer(fi, "never")
    assert _customers(fi) == {}
