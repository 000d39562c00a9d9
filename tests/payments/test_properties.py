"""Random sequences of payment-order operations on one bank against a model of the balances
(issue 49 item 10; docs/payments.md, "Money").

Hypothesis draws days, on one institution with an ACH profile and one customer's USD account
(its returns hold of debit_hold_days 2, or none): each day so many days after the last, the
simulated bank's answers first or not, the payments job at 09:00, the morning's actions, the job
at 17:00 (after the 16:45 cut-off), the evening's. An action is a credit or a debit of a random
amount to an external account at one of the simulated bank's scenario numbers
(sandbox/simulated_bank.py: returned R01 and R03 the day after, R29 five days after, rejected
R19 at once, a notification of change C01, and one that settles), an order cancelled, money
spent from the account (an adjustment debit), the account frozen or made active again, the
cut-off alone, the job again, or the bank answering. The model predicts each answer and, after
every step, the account's posted, pending and available balances, the rail_clearing,
rail_settlement and returns_receivable accounts, each order's status, and
`ledger_breaches() == []`.

The model's bank (`Model.bank`): an answer is due on the file's date (a rejection) or the
entry's effective date plus its scenario's days; each run of the simulated bank writes the due
ones into one file, its returns first and then its changes, each in the order of the files it
read (by date) and of their entries (by order id); the payments job reads the files in the
order written. The share of returned debits taken from the account does not depend on their
order, but a credit's return before a debit's adds to what is there: so the order is modelled.

Each example runs in a savepoint of the test's transaction, rolled back at its end, so that
the payments job of one example sees no other example's institution; it is marked as the test
case's own, as Django's TestCase marks its, since the API's operations open durable
transactions, which nest only in those. 25 examples (2 to 6 days, some 15 steps checked on
average) take 13 to 25 s on the 2-core machine, by the load of other test runs beside it.
"""

from dataclasses import dataclass, field
from datetime import date, timedelta

import pytest
from django.db import transaction
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from accounts.models import Account
from accounts.verification import ledger_breaches
from payments.calendar import ach_days_after, is_ach_day
from payments.models import PaymentOrder
from sandbox.simulated_bank import SCENARIOS, Scenario
from tests.accounts.api.helpers import ANY, assert_error, created
from tests.payments.helpers import ach_bank, bank_answers, cutoff, local, rails_at
from tests.payments.test_orders import business_day

EXAMPLES = 25


def world_settings(examples: int) -> settings:
    """The payments properties' hypothesis settings: `examples` drawn after the explicit ones, no
    explain phase and one bug shrunk (at half a second an example, reporting would take
    minutes); the function-scoped fixtures are fine: rails_dir (tests/payments/conftest.py)
    gives each example's institution its own folders."""
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
        report_multiple_bugs=False,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


MIN_DAYS, MAX_DAYS = 2, 6
START = 10_000  # the account is loaded with this much
AMOUNTS = st.integers(min_value=1, max_value=6_000)
# The external accounts: one that settles, and the simulated bank's scenarios.
NUMBERS = ("123456789", "1111000001", "1111000003", "1111000029", "3333000019", "2222000001")
CUTOFF_HOUR = 16  # 16:45: a job at 17:00 is after it, one at 09:00 before


@dataclass
class Order:
    id: str
    direction: str
    amount: int
    external: int  # index in the model's external accounts
    status: str = "approved"
    window: date | None = None  # its file's date
    effective: date | None = None
    scenario: Scenario | None = None  # what the bank will answer, by the number in the file
    returns_hold: int = 0  # a settled debit's active returns hold
    hold_until: date | None = None  # its last day


@dataclass
class File:
    window: date
    orders: list[str]  # by id, as the entries are
    delivered: bool = False
    read_by_bank: bool = False


@dataclass
class Model:
    # The calendar a collected debit's returns hold counts its days on (the SEPA model's its
    # own: tests/payments/test_properties_sepa.py).
    days_after = staticmethod(ach_days_after)

    numbers: list[str]  # each external account's number now (a change corrects it)
    hold_days: int  # the profile's debit_hold_days
    posted: int = START
    pending: int = 0
    clearing: int = 0
    settlement: int = 0
    receivable: int = 0
    frozen: bool = False
    orders: dict[str, Order] = field(default_factory=dict)
    files: dict[date, File] = field(default_factory=dict)
    answers: list[tuple[date, str, str]] = field(default_factory=list)  # (due, kind, order id)
    inbox: list[list[tuple[str, str]]] = field(default_factory=list)  # files of (kind, order id)

    @property
    def available(self) -> int:
        return self.posted - self.pending

    # --- the cut-off, the payments job, the bank --------------------------------------------

    def cutoff(self, institution, day: date) -> File | None:
        """The window of `day`: its file if written already; else every approved order (a
        frozen account's credit waits) in a new file, or None."""
        if day in self.files:
            return self.files[day]
        taken = sorted(
            order.id
            for order in self.orders.values()
            if order.status == "approved" and not (order.direction == "credit" and self.frozen)
        )
        if not taken:
            return None
        effective = ach_days_after(institution, day, 1)
        for order_id in taken:
            order = self.orders[order_id]
            order.status, order.window, order.effective = "scheduled", day, effective
            order.scenario = SCENARIOS.get(self.numbers[order.external])
            if order.direction == "credit":  # the hold captured into the rail's clearing
                self.pending -= order.amount
                self.posted -= order.amount
                self.clearing += order.amount
        self.files[day] = File(day, taken)
        return self.files[day]

    def job(self, institution, day: date, hour: int) -> None:
        """`rails_run` at `hour` on `day` (docs/payments.md, "Jobs"), step by step."""
        if is_ach_day(institution, day) and hour > CUTOFF_HOUR:
            self.cutoff(institution, day)
        for file in self.files.values():
            if not file.delivered:
                file.delivered = True
                for order_id in file.orders:
                    if self.orders[order_id].status == "scheduled":
                        self.orders[order_id].status = "sent"
        for order in self.orders.values():
            if order.status == "sent" and order.effective <= day:
                self.settle(institution, order)
        for order in self.orders.values():
            if order.returns_hold and day > order.hold_until:  # held to the end of its day
                self.pending -= order.returns_hold
                order.returns_hold = 0
        for answers in self.inbox:
            for kind, order_id in answers:
                self.apply(kind, self.orders[order_id])
        self.inbox = []

    def settle(self, institution, order: Order) -> None:
        order.status = "settled"
        if order.direction == "credit":
            self.clearing -= order.amount
            self.settlement += order.amount
            return
        self.settlement -= order.amount
        self.posted += order.amount
        if self.hold_days:  # what came in, held for its returns (all: none was below zero)
            order.returns_hold = min(order.amount, self.available)
            order.hold_until = self.days_after(institution, order.effective, self.hold_days)
            self.pending += order.returns_hold

    def apply(self, kind: str, order: Order) -> None:
        if kind == "change":
            self.numbers[order.external] = order.scenario.corrected_data
            return
        if order.status not in ("scheduled", "sent", "settled"):
            return
        settled = order.status == "settled"
        order.status = "returned" if settled else "rejected"
        if order.direction == "credit":  # the money back, from where it was
            self.posted += order.amount
            if settled:
                self.settlement -= order.amount
            else:
                self.clearing -= order.amount
        elif settled:  # the collected money taken back, as far as it is available
            self.pending -= order.returns_hold
            order.returns_hold = 0
            taken = min(order.amount, self.available)
            self.posted -= taken
            self.receivable -= order.amount - taken
            self.settlement += order.amount

    def bank(self, day: date) -> bool:
        """The simulated bank on `day`: reads the delivered files, writes what is due into one
        file (returns, then changes); whether it wrote one."""
        for window in sorted(self.files):
            file = self.files[window]
            if not file.delivered or file.read_by_bank:
                continue
            file.read_by_bank = True
            for order_id in file.orders:
                order = self.orders[order_id]
                if order.scenario is None:
                    continue
                after = file.window if order.scenario.kind == "reject" else order.effective
                due = after + timedelta(days=order.scenario.delay_days)
                self.answers.append((due, order.scenario.kind, order_id))
        due = [(kind, order_id) for when, kind, order_id in self.answers if when <= day]
        self.answers = [answer for answer in self.answers if answer[0] > day]
        if not due:
            return False
        self.inbox.append(
            [each for each in due if each[0] != "change"]
            + [each for each in due if each[0] == "change"]
        )
        return True


class World:
    """The bank, the model, the simulated clock; one method a step, checked after each."""

    currency = "USD"

    def __init__(self, hold_days: int):
        self.bank = ach_bank(load_amount=START, debit_hold_days=hold_days)
        self.externals = [self.bank.external(number)["externalAccountId"] for number in NUMBERS]
        self.model = Model(numbers=list(NUMBERS), hold_days=hold_days)
        self.day, self.hour = business_day(), 9

    def order(self, direction, amount, external):
        response = self.bank.order(self.externals[external], amount, direction)
        model = self.model
        if direction == "credit" and model.frozen:
            assert_error(response, "v2", 422, "account_not_active", ANY)
        elif direction == "credit" and amount > model.available:
            assert_error(response, "v2", 422, "insufficient_funds", ANY)
        else:
            order_id = created(response, "v2")["paymentOrderId"]
            model.orders[order_id] = Order(order_id, direction, amount, external)
            if direction == "credit":
                model.pending += amount

    def cancel(self, pick):
        if not self.model.orders:
            return
        order = list(self.model.orders.values())[pick % len(self.model.orders)]
        response = self.bank.api.post(f"/payment-orders/{order.id}/cancellations", {})
        if order.status != "approved":
            assert_error(response, "v2", 409, "invalid_state_transition", ANY)
            return
        assert created(response, "v2")["status"] == "cancelled"
        order.status = "cancelled"
        if order.direction == "credit":
            self.model.pending -= order.amount

    def spend(self, amount):
        response = self.bank.api.post(
            f"/accounts/{self.bank.account_id}/adjustments",
            {"direction": "debit", "amount": amount, "currency": self.currency},
        )
        if self.model.frozen:
            assert_error(response, "v2", 422, "account_not_active", ANY)
        elif amount > self.model.available:
            assert_error(response, "v2", 422, "insufficient_funds", ANY)
        else:
            created(response, "v2")
            self.model.posted -= amount

    def freeze(self):
        """Frozen, or active again."""
        status = "active" if self.model.frozen else "frozen"
        response = self.bank.api.patch(f"/accounts/{self.bank.account_id}", {"status": status})
        assert response.status_code == 200, response.content
        self.model.frozen = not self.model.frozen

    def cutoff(self):
        """Today's window's cut-off, whatever the time (its file delivered by the next job)."""
        expected = self.model.cutoff(self.bank.institution, self.day)
        rail_file = cutoff(self.bank, self.day)
        if expected is None:
            assert rail_file is None
        else:
            assert rail_file is not None
            assert sorted(rail_file.orders.values_list("pk", flat=True)) == expected.orders

    def job(self, hour=None):
        """The payments job at `hour` of the day (default: now again)."""
        self.hour = hour or self.hour
        self.model.job(self.bank.institution, self.day, self.hour)
        rails_at(local(self.day, self.hour))

    def bank_answers(self):
        wrote = self.model.bank(self.day)
        assert len(bank_answers(self.bank, self.day)) == (1 if wrote else 0)

    def check(self):
        model = self.model
        account = Account.objects.get(pk=self.bank.account_id)
        assert (account.posted, account.pending, account.available) == (
            model.posted,
            model.pending,
            model.available,
        )
        assert account.available >= 0  # the product allows no overdraft
        internal = dict(
            Account.objects.filter(
                institution=self.bank.institution,
                kind=Account.Kind.INTERNAL,
                currency=self.currency,
            ).values_list("internal_code", "posted")
        )
        assert (
            internal.get("rail_clearing", 0),
            internal.get("rail_settlement", 0),
            internal.get("returns_receivable", 0),
        ) == (model.clearing, model.settlement, model.receivable)
        statuses = dict(
            PaymentOrder.objects.filter(institution=self.bank.institution).values_list(
                "pk", "status"
            )
        )
        assert statuses == {order.id: order.status for order in model.orders.values()}
        assert ledger_breaches() == []


ORDER = st.tuples(
    st.just("order"),
    st.sampled_from(["credit", "debit"]),
    AMOUNTS,
    st.integers(min_value=0, max_value=len(NUMBERS) - 1),
)
CREDIT_R19, DEBIT_R01 = ("order", "credit", 2_000, 4), ("order", "debit", 5_000, 1)
CREDIT_R29, DEBIT_C01 = ("order", "credit", 1_000, 3), ("order", "debit", 500, 5)
CREDIT, FREEZE = ("order", "credit", 100, 0), ("freeze",)


def days(order, *more):
    """A day: so many days after the last, the bank's answers first or not, the job at 09:00,
    the morning's actions, the job at 17:00 (after the cut-off), the evening's. What may happen
    between the job's runs, orders (drawn by `order`) more often than the rest (one_of draws its
    strategies alike): the job again at the same time, the cut-offs alone, the bank (or the
    clearing) answering, and `more`."""
    action = st.one_of(
        order,
        st.tuples(st.just("cancel"), st.integers(min_value=0, max_value=99)),
        order,
        st.tuples(st.just("spend"), AMOUNTS),
        st.just(FREEZE),
        order,
        st.tuples(st.just("job")),
        st.tuples(st.just("cutoff")),
        st.tuples(st.just("bank_answers")),
        *more,
    )
    return st.tuples(
        st.integers(min_value=1, max_value=3),
        st.booleans(),
        st.lists(action, min_size=1, max_size=4),
        st.lists(action, max_size=3),
    )


DAY = days(ORDER)


@pytest.mark.django_db
@world_settings(EXAMPLES)
# Every path at least once, whatever is drawn: a credit rejected before it settles, a debit
# collected into a frozen account, then returned after its money was spent (the rest owed), a
# frozen account's credit waiting for a window, a credit returned late, a notification of change.
@example(
    hold_days=0,
    days=[
        (
            1,
            False,
            [CREDIT_R19, DEBIT_R01, ("cutoff",), ("job",)],
            [("bank_answers",), ("job",), FREEZE],
        ),
        (3, False, [FREEZE, ("spend", 6_000), ("spend", 6_000), CREDIT_R29], [CREDIT, FREEZE]),
        (1, True, [("cutoff",), DEBIT_C01], [FREEZE]),
        (3, True, [("bank_answers",)], []),
        (3, True, [("bank_answers",)], []),
        (3, True, [("bank_answers",)], []),
    ],
)
@given(hold_days=st.sampled_from([2, 0]), days=st.lists(DAY, min_size=MIN_DAYS, max_size=MAX_DAYS))
def test_random_payment_orders_the_jobs_and_the_bank_match_the_model(hold_days, days):
    savepoint = transaction.atomic()
    savepoint._from_testcase = True  # the API's durable transactions nest in it
    with savepoint:
        world = World(hold_days)
        world.check()
        for forward, bank_first, morning, evening in days:
            world.day += timedelta(days=forward)
            steps = [("job", 9), *morning, ("job", 17), *evening]
            for name, *arguments in [("bank_answers",), *steps] if bank_first else steps:
                getattr(world, name)(*arguments)
                world.check()
        transaction.set_rollback(True)
