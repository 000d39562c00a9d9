"""A hold past its `expires_at`, before the expiry job has closed it (security review L5).

The answer must not depend on when the job last ran: a standalone hold past its time cannot be
captured (409, as after the job), may still be released (it frees the funds, as the expiry
would), and a card authorization's hold may still be presented (a network's late presentment,
docs/card-transactions.md).
"""

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from accounts.models import Account, Hold
from accounts.services import hold_capture, hold_place, hold_release, holds_expire
from core.actors import SYSTEM
from core.exceptions import InvalidStateTransition
from events.models import Event

from .helpers import assert_ledger_ok, balance, institution, ledger_state, open_account

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def ledger_check(db):
    yield
    assert_ledger_ok()


def overdue_hold(account, amount, *, purpose=Hold.Purpose.HOLD) -> Hold:
    """An active hold whose `expires_at` passed a second ago (the job has not run)."""
    hold = hold_place(
        account=account,
        amount=amount,
        currency="EUR",
        expires_at=timezone.now() + timedelta(days=1),
        actor=SYSTEM,
        purpose=purpose,
    )
    Hold.objects.filter(pk=hold.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    return Hold.objects.get(pk=hold.pk)


def test_an_overdue_hold_cannot_be_captured_and_nothing_changes():
    account = open_account(institution(), balance=1_000)
    hold = overdue_hold(account, 400)
    before = ledger_state()

    with pytest.raises(InvalidStateTransition) as excinfo:
        with transaction.atomic():
            hold_capture(hold=hold, amount=100)

    error = excinfo.value
    assert error.details == {"from": "expired", "to": "captured"}
    assert error.message.startswith("This hold expired at ")
    assert error.message.endswith("; it cannot be captured.")
    assert ledger_state() == before
    assert balance(account) == (1_000, 400, 600)
    assert Hold.objects.get(pk=hold.pk).status == Hold.Status.ACTIVE
    # The job then closes it as usual, and the answer to a capture stays the same.
    assert holds_expire() == 1
    assert balance(account) == (1_000, 0, 1_000)
    with pytest.raises(InvalidStateTransition) as excinfo, transaction.atomic():
        hold_capture(hold=hold)
    assert excinfo.value.details == {"from": "expired", "to": "captured"}


def test_a_hold_still_in_time_is_captured():
    account = open_account(institution(), balance=1_000)
    hold = hold_place(
        account=account,
        amount=400,
        currency="EUR",
        expires_at=timezone.now() + timedelta(seconds=30),
        actor=SYSTEM,
    )

    captured = hold_capture(hold=hold, amount=100)

    assert captured.status == Hold.Status.CAPTURED
    assert balance(account) == (900, 0, 900)


def test_an_overdue_hold_may_be_released_and_the_job_then_skips_it():
    account = open_account(institution(), balance=1_000)
    hold = overdue_hold(account, 400)

    released = hold_release(hold=hold)

    assert released.status == Hold.Status.RELEASED
    assert balance(account) == (1_000, 0, 1_000)
    assert holds_expire() == 0
    assert Event.objects.filter(object_id=hold.pk, type="hold.released").count() == 1
    assert not Event.objects.filter(object_id=hold.pk, type="hold.expired").exists()


def test_an_overdue_card_authorization_hold_may_still_be_presented():
    fi = institution()
    account = open_account(fi, balance=1_000)
    hold = overdue_hold(account, 400, purpose=Hold.Purpose.CARD_AUTHORIZATION)

    captured = hold_capture(
        hold=hold,
        amount=400,
        purpose=Hold.Purpose.CARD_AUTHORIZATION,
        counterparty=Account.InternalCode.CARD_CLEARING,
        statement_line=False,
    )

    assert captured.status == Hold.Status.CAPTURED
    assert balance(account) == (600, 0, 600)
