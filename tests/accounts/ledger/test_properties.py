"""Random sequences of money operations against a model of the expected balances.

A hypothesis state machine drives adjustments, holds (placed, captured in part or in full,
released, expired), transfers and partial reversals, and freezes, on three customer accounts of
one institution. The model predicts every outcome: the balances after a success, and which
business error a refusal raises. After every step the stored balances equal the model's, the
ledger's invariants hold and no customer account is below zero.
"""

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    invariant,
    multiple,
    precondition,
    rule,
    run_state_machine_as_test,
)

from accounts.models import Account, Hold
from accounts.services import (
    account_set_status,
    adjustment_create,
    hold_capture,
    hold_place,
    hold_release,
    holds_expire,
)
from accounts.verification import ledger_breaches
from core.actors import SYSTEM
from core.exceptions import (
    AccountNotActive,
    AmountExceedsRemaining,
    InsufficientFunds,
    InvalidStateTransition,
)
from transfers.models import Transfer
from transfers.services import transfer_create, transfer_reverse

from .helpers import institution, open_account

START = 1000  # each account is loaded with this much first
ACCOUNTS = st.integers(min_value=0, max_value=2)
AMOUNTS = st.integers(min_value=1, max_value=800)
# A part of a hold or of what remains of a transfer: None (all of it), a percentage, or above
# 100 by that many minor units (to be refused).
PART = (
    st.none() | st.integers(min_value=1, max_value=100) | st.integers(min_value=101, max_value=103)
)
DUE = st.sampled_from([False, False, True])  # one hold in three is already due to expire


def part_of(whole: int, part: int | None) -> int | None:
    if part is None:
        return None
    return max(1, whole * part // 100) if part <= 100 else whole + part - 100


class LedgerMachine(RuleBasedStateMachine):
    holds = Bundle("holds")
    transfers = Bundle("transfers")

    def __init__(self):
        super().__init__()
        # Each example runs in a savepoint of the test's transaction, rolled back in teardown.
        self.savepoint = transaction.atomic()
        self.savepoint.__enter__()
        self.fi = institution()
        self.accounts = [open_account(self.fi, balance=START) for _ in range(3)]
        self.posted = [START] * 3
        self.pending = [0] * 3
        self.status = ["active"] * 3
        self.internal = {"funding": -3 * START, "settlement": 0}
        self.hold_model = {}  # id -> [account index, amount, status, due]
        self.transfer_model = {}  # id -> [source index, destination index, amount, reversed]
        self.calls = 0

    def teardown(self):
        transaction.set_rollback(True)
        self.savepoint.__exit__(None, None, None)

    # --- the model's predictions ------------------------------------------------------------

    def available(self, i):
        return self.posted[i] - self.pending[i]

    def debit_refusal(self, i, amount):
        """What the posting function answers a debit of `amount`, or None."""
        if self.status[i] != "active":
            return AccountNotActive
        if self.available(i) < amount:
            return InsufficientFunds
        return None

    def outcome(self, refusal, call):
        """Run `call` in a savepoint (the services take none of their own): it must pass when
        no refusal is predicted, else raise exactly the predicted error."""
        self.calls += 1
        if refusal is None:
            with transaction.atomic():
                return call()
        with pytest.raises(refusal):
            with transaction.atomic():
                call()
        return None

    # --- rules ------------------------------------------------------------------------------

    @rule(i=ACCOUNTS, amount=AMOUNTS)
    def credit(self, i, amount):
        self.outcome(None, lambda: self.adjust(i, "credit", amount))
        self.posted[i] += amount
        self.internal["funding"] -= amount

    @rule(i=ACCOUNTS, amount=AMOUNTS)
    def debit(self, i, amount):
        refusal = self.debit_refusal(i, amount)
        self.outcome(refusal, lambda: self.adjust(i, "debit", amount))
        if refusal is None:
            self.posted[i] -= amount
            self.internal["funding"] += amount

    @rule(target=holds, i=ACCOUNTS, amount=AMOUNTS, due=DUE)
    def place(self, i, amount, due):
        refusal = self.debit_refusal(i, amount)
        expires_at = timezone.now() + (timedelta(hours=-1) if due else timedelta(days=1))
        hold = self.outcome(
            refusal,
            lambda: hold_place(
                account=self.accounts[i],
                amount=amount,
                currency="EUR",
                expires_at=expires_at,
                actor=SYSTEM,
            ),
        )
        if refusal is not None:
            return multiple()
        self.pending[i] += amount
        self.hold_model[hold.pk] = [i, amount, "active", due]
        return hold.pk

    @rule(hold_id=holds, part=PART)
    def capture(self, hold_id, part):
        i, held, status, due = self.hold_model[hold_id]
        amount = part_of(held, part)
        captured = held if amount is None else amount
        if status != "active" or due:  # past its expiry, even before the job: 409
            refusal = InvalidStateTransition
        elif captured > held:
            refusal = AmountExceedsRemaining
        elif self.status[i] != "active":
            refusal = AccountNotActive
        else:
            refusal = None
        self.outcome(refusal, lambda: hold_capture(hold=Hold(pk=hold_id), amount=amount))
        if refusal is None:
            self.pending[i] -= held
            self.posted[i] -= captured
            self.internal["settlement"] += captured
            self.hold_model[hold_id][2] = "captured"

    @rule(hold_id=holds)
    def release(self, hold_id):
        i, held, status, _ = self.hold_model[hold_id]
        refusal = InvalidStateTransition if status != "active" else None
        self.outcome(refusal, lambda: hold_release(hold=Hold(pk=hold_id)))
        if refusal is None:
            self.pending[i] -= held
            self.hold_model[hold_id][2] = "released"

    def due_holds(self):
        return [
            hold_id
            for hold_id, (_, _, status, is_due) in self.hold_model.items()
            if status == "active" and is_due
        ]

    @precondition(lambda self: self.due_holds())
    @rule()
    def expire(self):
        due = self.due_holds()
        assert self.outcome(None, holds_expire) == len(due)
        for hold_id in due:
            i, held, _, _ = self.hold_model[hold_id]
            self.pending[i] -= held
            self.hold_model[hold_id][2] = "expired"

    @rule(target=transfers, i=ACCOUNTS, j=ACCOUNTS, amount=AMOUNTS)
    def transfer(self, i, j, amount):
        if i == j:
            return multiple()
        refusal = self.debit_refusal(i, amount)
        moved = self.outcome(
            refusal,
            lambda: transfer_create(
                institution=self.fi,
                source=self.accounts[i],
                destination=self.accounts[j],
                amount=amount,
                currency="EUR",
                actor=SYSTEM,
            ),
        )
        if refusal is not None:
            return multiple()
        self.posted[i] -= amount
        self.posted[j] += amount
        self.transfer_model[moved.pk] = [i, j, amount, 0]
        return moved.pk

    @rule(transfer_id=transfers, part=PART)
    def reverse(self, transfer_id, part):
        i, j, original, reversed_ = self.transfer_model[transfer_id]
        remaining = original - reversed_
        amount = part_of(remaining, part)
        back = remaining if amount is None else amount
        if remaining == 0:
            refusal = InvalidStateTransition
        elif back > remaining:
            refusal = AmountExceedsRemaining
        else:
            refusal = self.debit_refusal(j, back)
        self.outcome(
            refusal,
            lambda: transfer_reverse(
                transfer=Transfer(pk=transfer_id), amount=amount, actor=SYSTEM
            ),
        )
        if refusal is None:
            self.posted[j] -= back
            self.posted[i] += back
            self.transfer_model[transfer_id][3] += back

    @precondition(lambda self: self.calls % 4 == 3)  # now and then: a frozen account blocks a lot
    @rule(i=ACCOUNTS)
    def freeze_or_unfreeze(self, i):
        status = "frozen" if self.status[i] == "active" else "active"
        self.outcome(
            None,
            lambda: account_set_status(account=self.accounts[i], status=status),
        )
        self.status[i] = status

    def adjust(self, i, direction, amount):
        return adjustment_create(
            account=self.accounts[i],
            direction=direction,
            amount=amount,
            currency="EUR",
            actor=SYSTEM,
        )

    # --- after every step -------------------------------------------------------------------

    @invariant()
    def balances_are_the_models(self):
        rows = Account.objects.filter(institution=self.fi).values_list(
            "pk", "internal_code", "posted", "pending", "available", "status"
        )
        stored = {pk: tuple(row) for pk, *row in rows}
        for i, account in enumerate(self.accounts):
            expected = (None, self.posted[i], self.pending[i], self.available(i), self.status[i])
            assert stored.pop(account.pk) == expected
            assert self.available(i) >= 0
        internal = {code: posted for code, posted, *_ in stored.values()}
        assert {code: internal.get(code, 0) for code in self.internal} == self.internal
        assert sum(self.posted) + sum(internal.values()) == 0

    @invariant()
    def holds_and_transfers_are_the_models(self):
        assert dict(Hold.objects.filter(institution=self.fi).values_list("pk", "status")) == {
            hold_id: model[2] for hold_id, model in self.hold_model.items()
        }
        assert dict(
            Transfer.objects.filter(institution=self.fi).values_list("pk", "reversed_amount")
        ) == {transfer_id: model[3] for transfer_id, model in self.transfer_model.items()}

    @invariant()
    def ledger_holds(self):
        assert ledger_breaches() == []


@pytest.mark.django_db
def test_random_money_operations_match_the_model():
    run_state_machine_as_test(
        LedgerMachine,
        settings=settings(
            max_examples=25,
            stateful_step_count=20,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow],
            report_multiple_bugs=False,  # shrink one failure, not each (a slow database test)
        ),
    )
