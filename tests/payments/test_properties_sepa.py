"""Random sequences of SEPA payment-order operations on one bank against a model of the balances
(issue 50 item 8; docs/payments.md, "SEPA credit transfers through files" and "Mandates and
direct debits"): tests/payments/test_properties.py's property, on SEPA's files.

Hypothesis draws days, on one institution in Berlin with an `initiation` SEPA profile and a
creditor identifier (its returns hold of debit_hold_days 2, 10 or none: a refund comes ten days or
more after its booking; pre-notification 1 day) and one customer's EUR account: each day so many
days after the last, the simulated bank's answers first or not, the payments job at 09:00, the
morning's actions, the job at 17:00 (after the 15:00 cut-offs), the evening's. An action is a
credit transfer (`sepa_ct`, executed on today's SEPA day or one or two after) or a direct debit
(`sepa_dd`, under the external account's recurrent mandate, due one to three SEPA days after today)
of a random amount to one of the simulated bank's scenario IBANs (sandbox/simulated_bank.py: a
transfer rejected AC04 by the pain.002, or booked and returned AC04 two days after; a collection
rejected AC04, refunded MD06 ten days after its booking, returned MD01 thirty days after; and the
account anything else settles), an order cancelled, money spent from the account, the account
frozen or made active again, the two cut-offs alone, the job again, or the bank answering. The
model predicts each answer and, after every step, the account's posted, pending and available
balances, the EUR rail_clearing, rail_settlement and returns_receivable accounts, each order's
status, sequence type and return code, and `ledger_breaches() == []`.

A SEPA order settles only when the bank's camt.054 books it, never by its date: a transfer on
its execution date (or the day the bank read the pain.001, if later), a collection on its due
date. A collection whose due date is less than one SEPA day after a cut-off it could go in
(made after today's with a due date tomorrow) waits `approved` for ever.

The model's bank (`SepaModel.bank`): each run reads the delivered files (by name: date, then
the order they were written in), writes a pain.002 for each at once, and one camt.054 of the
bookings and returns due, in the order the bank queued them (file by file, transaction by
transaction); the payments job reads the inbox by name: the camt.054 files before the pain.002
ones. The order matters: a transfer's money coming back before a refunded collection adds to
what the refund can take.

The same for a bank in the clearing (an `interbank` profile; docs/payments.md, "An interbank
profile's credit transfers", "... direct debits", "SEPA Instant", "Inbound direct debits"), on
the same model and world: the simulated clearing (`SepaModel.clearing_answers`) answers each
delivered pacs.008 or pacs.003 once its settlement date has come (the window's date; the due
date, a collection presented the SEPA day before it only) with a pacs.002 (ACSC books, RJCT
rejects), and the returns due so many days after the settlement date in one pacs.004. Its
draws add instant payments (`sepa_inst`, answered before the request: settled, or rejected
AC04; not the timeout scenarios, each would cost the whole timeout) and collections another
bank's creditor presents through the clearing (`send_collection`), under the customer's mandate
or another reference, settling today or one or two days after: read into a frozen account
rejected AC06, without the mandate MD01; on their settlement date, in the order read, returned
AC06 (frozen), AM04 (less available than the amount) or debited to rail_settlement; each
entry's status and code checked too. One explicit example (every path) and 2 drawn (2 to 3
days) take 1.4 to 3 s on the 2-core machine (load average 2.3 to 5.5): the suite's budget allows
no more (320 drawn, up to 5 days, passed once).

Each example runs in a savepoint, as the ACH property's does (its module docstring). The
world's external accounts and mandates are made by the services (test_mandates.py makes them
through the API): six of each through it cost as much as an example's steps. 12 examples (2 to
5 days) and the 3 explicit ones take 9 to 21 s on the 2-core machine, by the load of other test
runs beside them (load average 4 to 8); the ACH property's, 9 to 30 s in the same runs.
"""

from dataclasses import dataclass, field
from datetime import date, timedelta

import pytest
from django.db import transaction
from hypothesis import example, given
from hypothesis import strategies as st

from accounts.models import Account
from cards.dates import today_of
from core.actors import SYSTEM
from payments.account_ibans import account_iban
from payments.calendar import is_sepa_day, sepa_days_after
from payments.models import InboundEntry, PaymentOrder, Rail
from payments.services.debtor_register import debtor_mandate_create
from payments.services.external_accounts import sepa_external_account_create
from payments.services.mandates import mandate_create
from sandbox.simulated_bank import (
    SEPA_DD_SCENARIOS,
    SEPA_SCENARIOS,
    german_iban,
    simulated_sepa_bank_run,
)
from sandbox.simulated_clearing import send_collection, simulated_clearing_run
from tests.accounts.api.helpers import ANY, assert_error, created
from tests.payments.helpers import BERLIN, COLLECTING_CREDITOR, IBAN, cutoff, local, rails_at
from tests.payments.test_mandates import CREDITOR_ID, collection, creditor
from tests.payments.test_properties import (
    AMOUNTS,
    START,
    File,
    Model,
    Order,
    World,
    days,
    world_settings,
)
from tests.payments.test_sepa_interbank import interbank_bank

EXAMPLES = 12
MIN_DAYS, MAX_DAYS = 2, 5
INTERBANK_EXAMPLES, INTERBANK_MAX_DAYS = 2, 3
# The external accounts (each with a recurrent mandate): one that settles, the credit
# transfers' rejected AC04 and returned AC04, the collections' rejected AC04, refunded MD06,
# returned MD01.
IBANS = (IBAN, *(german_iban(f"0000000{each}") for each in (104, 204, 304, 306, 301)))
MANDATED = "MDT-1"  # the reference of the customer's mandate of the collecting creditor
CUTOFF_HOUR = 15  # 15:00 Berlin, both cut-offs: a job at 17:00 is after them, one at 09:00 before


@dataclass
class SepaOrder(Order):
    rail: str = Rail.SEPA_CT
    requested: date | None = None  # a transfer's execution date, a collection's due date
    sequence: str = ""
    code: str = ""  # its return code


@dataclass
class SepaFile(File):
    rail: str = Rail.SEPA_CT
    name: tuple[date, int] | None = None  # its window, then the files of the day before it


@dataclass
class Presented:
    """A collection another bank's creditor presented through the clearing (`send_collection`),
    by its transaction id in the model."""

    amount: int
    mandated: bool  # under the mandate the customer registered, or a reference it did not
    settles_on: date
    status: str = ""  # none until the payments job reads its pacs.003
    code: str = ""


@dataclass
class SepaModel(Model):
    """The ACH model's money (`settle`, `apply`) on SEPA's files and bank, or an interbank
    profile's clearing."""

    days_after = staticmethod(sepa_days_after)

    institution: object = None
    interbank: bool = False
    written: int = 0  # the files the bank (or clearing) wrote (it numbers them)
    presented: dict[str, Presented] = field(default_factory=dict)  # in the order sent
    read: list[str] = field(default_factory=list)  # the presented ones, in the order read
    # `numbers`: the external accounts' IBANs; `files`: by rail and window date.

    def cutoff(self, rail: str, day: date) -> SepaFile | None:
        """The rail's window of `day`: its file if written already; else the due orders (a
        frozen account's transfers wait; a collection due at least a SEPA day after `day`) in
        a new file, or None."""
        if (rail, day) in self.files:
            return self.files[rail, day]
        approved = [
            order
            for order in sorted(self.orders.values(), key=lambda order: order.id)
            if order.rail == rail and order.status == "approved"
        ]
        if rail == Rail.SEPA_CT:
            taken = [o for o in approved if o.requested <= day and not self.frozen]
        else:
            first = sepa_days_after(self.institution, day, 1)
            if self.interbank:  # a pacs.003 settles on the due date: presented the day before
                taken = [o for o in approved if day < o.requested <= first]
            else:
                taken = [o for o in approved if o.requested >= first]
        if not taken:
            return None
        collected = {
            o.external
            for o in self.orders.values()
            if o.rail == Rail.SEPA_DD and o.window is not None and o.status != "rejected"
        }
        for order in taken:
            order.status, order.window = "scheduled", day
            if rail == Rail.SEPA_CT:
                order.effective = day
                order.scenario = SEPA_SCENARIOS.get(self.numbers[order.external])
                self.pending -= order.amount  # the hold captured into the rail's clearing
                self.posted -= order.amount
                self.clearing += order.amount
                continue
            order.effective = order.requested
            order.scenario = SEPA_DD_SCENARIOS.get(self.numbers[order.external])
            order.sequence = "RCUR" if order.external in collected else "FRST"
            collected.add(order.external)
        if rail == Rail.SEPA_DD:  # pain.008: an instruction per due date and sequence type
            taken.sort(key=lambda order: (order.requested, order.sequence))
        written = sum(1 for each in self.files.values() if each.window == day)
        self.files[rail, day] = SepaFile(day, [o.id for o in taken], rail=rail, name=(day, written))
        return self.files[rail, day]

    def job(self, institution, day: date, hour: int) -> None:
        """`rails_run` at `hour` on `day`, step by step."""
        if is_sepa_day(institution, day) and hour >= CUTOFF_HOUR:
            self.cutoff(Rail.SEPA_CT, day)
            self.cutoff(Rail.SEPA_DD, day)
        for file in self.files.values():
            if not file.delivered:
                file.delivered = True
                for order_id in file.orders:
                    if self.orders[order_id].status == "scheduled":
                        self.orders[order_id].status = "sent"
        for order in self.orders.values():
            if order.returns_hold and day > order.hold_until:  # held to the end of its day
                self.pending -= order.returns_hold
                order.returns_hold = 0
        for _, answers in sorted(self.inbox):
            for kind, order_id, code in answers:
                if kind == "collection":
                    self.collection_read(order_id)
                    continue
                order = self.orders[order_id]
                if kind == "booking":
                    if order.status == "sent":
                        self.settle(institution, order)
                elif order.status in ("scheduled", "sent", "settled"):
                    order.code = code
                    self.apply(kind, order)
        self.inbox = []
        self.collections_settle(day)

    def instant(self, order: SepaOrder) -> None:
        """A `sepa_inst` order sent at once, the clearing's answer by the creditor IBAN's
        scenario (a return scenario settles): its hold released, the money on to settlement."""
        scenario = SEPA_SCENARIOS.get(self.numbers[order.external])
        self.pending -= order.amount
        if scenario is not None and scenario.kind == "reject":
            order.status, order.code = "rejected", scenario.code
            return
        order.status = "settled"
        self.posted -= order.amount
        self.settlement += order.amount

    def present(self, amount: int, mandated: bool, settles_on: date) -> str:
        """The clearing's pacs.003 of a collection from the account into the inbox; its
        name."""
        self.written += 1
        transaction_id = f"SIMCLR-DD-{settles_on:%Y%m%d}-{len(self.presented) + 1:06d}"
        self.presented[transaction_id] = Presented(amount, mandated, settles_on)
        name = f"simulated-clearing-pacs003-{settles_on:%Y%m%d}-{self.written:04d}.xml"
        self.inbox.append((name, [("collection", transaction_id, "")]))
        return name

    def collection_read(self, transaction_id: str) -> None:
        """Read: rejected AC06 (the account frozen), MD01 (no mandate), or kept."""
        collection = self.presented[transaction_id]
        collection.status = "received"
        if self.frozen:
            collection.status, collection.code = "rejected", "AC06"
        elif not collection.mandated:
            collection.status, collection.code = "rejected", "MD01"
        self.read.append(transaction_id)

    def collections_settle(self, day: date) -> None:
        """On (or after) its settlement date, in the order read: returned AC06 (frozen), AM04
        (less available than the amount), or debited to the rail's settlement."""
        for transaction_id in self.read:
            collection = self.presented[transaction_id]
            if collection.status != "received" or collection.settles_on > day:
                continue
            code = "AC06" if self.frozen else "AM04" if collection.amount > self.available else ""
            if code:
                collection.status, collection.code = "returned", code
                continue
            collection.status = "applied"
            self.posted -= collection.amount
            self.settlement += collection.amount

    def bank(self, day: date) -> list[str]:
        """The simulated bank on `day`: a pain.002 for each delivered file it has not read,
        then a camt.054 of what is due; the names of the files it wrote."""
        if self.interbank:
            return self.clearing_answers(day)
        names = []
        for file in sorted(self.files.values(), key=lambda file: file.name):
            if not file.delivered or file.read_by_bank:
                continue
            file.read_by_bank = True
            rejected = []
            for order_id in file.orders:
                order = self.orders[order_id]
                scenario = order.scenario
                if scenario is not None and scenario.kind == "reject":
                    rejected.append(("reject", order_id, scenario.code))
                    continue
                booked = max(order.effective, day)  # its execution or due date, or today
                self.answers.append((booked, "booking", order_id))
                if scenario is not None and scenario.kind == "return":
                    back = booked + timedelta(days=scenario.delay_days)
                    self.answers.append((back, "return", order_id))
            names.append(self.put("pain002", day, rejected))
        due = [
            (kind, order_id, self.orders[order_id].scenario.code if kind == "return" else "")
            for when, kind, order_id in self.answers
            if when <= day
        ]
        self.answers = [answer for answer in self.answers if answer[0] > day]
        if due:
            names.append(self.put("camt054", day, due))
        return names

    def clearing_answers(self, day: date) -> list[str]:
        """The simulated clearing on `day`: a pacs.002 for each delivered file it has not read
        whose settlement date has come (a pacs.008's its window's date, a pacs.003's its due
        date), bookings and rejections; then a pacs.004 of the returns due (so many days after
        the settlement date); the names of the files it wrote."""
        names = []
        for file in sorted(self.files.values(), key=lambda file: file.name):
            orders = [self.orders[order_id] for order_id in file.orders]
            settles_on = file.window if file.rail == Rail.SEPA_CT else orders[0].requested
            if not file.delivered or file.read_by_bank or settles_on > day:
                continue
            file.read_by_bank = True
            statuses = []
            for order in orders:
                scenario = order.scenario
                if scenario is not None and scenario.kind == "reject":
                    statuses.append(("reject", order.id, scenario.code))
                    continue
                statuses.append(("booking", order.id, ""))
                if scenario is not None and scenario.kind == "return":
                    back = settles_on + timedelta(days=scenario.delay_days)
                    self.answers.append((back, "return", order.id))
            names.append(self.put("pacs002", day, statuses))
        due = [
            ("return", order_id, self.orders[order_id].scenario.code)
            for when, _, order_id in self.answers
            if when <= day
        ]
        self.answers = [answer for answer in self.answers if answer[0] > day]
        if due:
            names.append(self.put("pacs004", day, due))
        return names

    def put(self, kind: str, day: date, entries: list[tuple[str, str, str]]) -> str:
        self.written += 1
        sender = "simulated-clearing" if self.interbank else "simulated-bank"
        name = f"{sender}-{kind}-{day:%Y%m%d}-{self.written:04d}.xml"
        self.inbox.append((name, entries))
        return name


class SepaWorld(World):
    """The ACH property's world (its spending, freezing, cancelling and checks) on a SEPA bank,
    or (`interbank`) a bank in the clearing."""

    currency = "EUR"

    def __init__(self, hold_days: int, interbank: bool = False):
        fields = {"debit_hold_days": hold_days, "pre_notification_days": 1}
        if interbank:
            self.bank = interbank_bank(START, creditor_identifier=CREDITOR_ID, **fields)
        else:
            self.bank = creditor(load_amount=START, **fields)
        institution = self.bank.institution
        # By the services, not the API (module docstring).
        self.externals, self.mandates = [], []
        for number, iban in enumerate(IBANS):
            external = sepa_external_account_create(
                institution=institution,
                customer_id=self.bank.customer_id,
                holder_name="Ada Lovelace",
                country_code="276",
                currency="EUR",
                iban=iban,
                bic="DEUTDEFF",  # between banks the creditor's (or debtor's) bank is named
                actor=SYSTEM,
            )
            mandate = mandate_create(
                institution=institution,
                external_account_id=external.pk,
                reference=f"MANDATE-{number}",
                signature_date=today_of(institution) - timedelta(days=30),
                scheme="CORE",
                type="recurrent",
                actor=SYSTEM,
            )
            self.externals.append(external.pk)
            self.mandates.append(mandate.pk)
        self.model = SepaModel(
            numbers=list(IBANS), hold_days=hold_days, institution=institution, interbank=interbank
        )
        if interbank:  # the customer's mandate of the creditor collecting from the account
            debtor_mandate_create(
                institution=institution,
                account_id=self.bank.account_id,
                creditor_identifier=COLLECTING_CREDITOR,
                mandate_reference=MANDATED,
                actor=SYSTEM,
            )
            account = Account.objects.get(pk=self.bank.account_id)
            self.iban = account_iban(account, self.bank.profile)
        # A SEPA day a week ahead: every due date drawn is past the earliest one allowed today.
        start = today_of(institution) + timedelta(days=7)
        self.day, self.hour = sepa_days_after(institution, start, 0), 9

    def order(self, rail, amount, external, lead):
        """A transfer executed `lead - 1` SEPA days after today, or a collection due `lead`
        SEPA days after it, or an instant payment (sent at once)."""
        model, institution = self.model, self.bank.institution
        if rail != Rail.SEPA_DD:
            requested, fields = None, {"rail": rail}
            if rail == Rail.SEPA_CT:
                requested = sepa_days_after(institution, self.day, lead - 1)
                fields["requestedExecutionDate"] = requested.isoformat()
            response = self.bank.order(self.externals[external], amount, **fields)
            if model.frozen:
                assert_error(response, "v2", 422, "account_not_active", ANY)
                return
            if amount > model.available:
                assert_error(response, "v2", 422, "insufficient_funds", ANY)
                return
            model.pending += amount
        else:
            requested = sepa_days_after(institution, self.day, lead)
            response = collection(
                self.bank,
                self.externals[external],
                self.mandates[external],
                amount,
                requestedExecutionDate=requested.isoformat(),
            )
        made = created(response, "v2")
        order_id = made["paymentOrderId"]
        direction = "debit" if rail == Rail.SEPA_DD else "credit"
        model.orders[order_id] = order = SepaOrder(
            order_id, direction, amount, external, rail=rail, requested=requested
        )
        if rail == Rail.SEPA_INST:  # answered before the request's
            model.instant(order)
            assert made["status"] == order.status
            return
        assert (made["status"], made["requestedExecutionDate"]) == (
            "approved",
            requested.isoformat(),
        )

    def present(self, amount, mandated, days):
        """Another bank's creditor collects `amount` from the account under the customer's
        mandate or a reference it never gave, settling `days` after today."""
        settles_on = self.day + timedelta(days=days)
        expected = self.model.present(amount, mandated, settles_on)
        _, name = send_collection(
            iban=self.iban,
            amount=amount,
            creditor_id=COLLECTING_CREDITOR,
            mandate_reference=MANDATED if mandated else "MDT-NEVER-GIVEN",
            today=settles_on,
        )
        assert name == expected

    def cutoff(self):
        """Today's windows' cut-offs, whatever the day and time (their files delivered by the
        next job)."""
        profile = self.bank.profile
        windows = {
            Rail.SEPA_CT: profile.credit_transfer_cutoff,
            Rail.SEPA_DD: profile.direct_debit_cutoff,
        }
        for rail, window in windows.items():
            expected = self.model.cutoff(rail, self.day)
            rail_file = cutoff(self.bank, self.day, window, rail)
            if expected is None:
                assert rail_file is None
            else:
                assert rail_file is not None
                assert sorted(rail_file.orders.values_list("pk", flat=True)) == sorted(
                    expected.orders
                )

    def job(self, hour=None):
        self.hour = hour or self.hour
        self.model.job(self.bank.institution, self.day, self.hour)
        rails_at(local(self.day, self.hour, zone=BERLIN))

    def bank_answers(self):
        """The simulated bank's answers, or the clearing's."""
        expected = self.model.bank(self.day)
        run = simulated_clearing_run if self.model.interbank else simulated_sepa_bank_run
        assert run(institution=self.bank.institution, today=self.day) == expected

    def check(self):
        super().check()
        orders = PaymentOrder.objects.filter(institution=self.bank.institution)
        assert {
            pk: (sequence, code)
            for pk, sequence, code in orders.values_list("pk", "sequence_type", "return_code")
        } == {order.id: (order.sequence, order.code) for order in self.model.orders.values()}
        entries = InboundEntry.objects.filter(institution=self.bank.institution)
        assert {
            reference: (status, code)
            for reference, status, code in entries.values_list(
                "sepa_reference", "status", "return_code"
            )
        } == {
            reference: (each.status, each.code)
            for reference, each in self.model.presented.items()
            if each.status
        }


LEADS = st.integers(min_value=1, max_value=3)
CT, DD, INST = Rail.SEPA_CT, Rail.SEPA_DD, Rail.SEPA_INST


def orders(*rails: str):
    return st.tuples(
        st.just("order"),
        st.sampled_from(rails),
        AMOUNTS,
        st.integers(min_value=0, max_value=len(IBANS) - 1),
        LEADS,
    )


CT_REJECTED, CT_RETURNED = ("order", CT, 2_000, 1, 1), ("order", CT, 1_000, 2, 1)
DD_REJECTED, DD_MD06 = ("order", DD, 500, 3, 1), ("order", DD, 5_000, 4, 1)
DD_MD01, FREEZE = ("order", DD, 700, 5, 2), ("freeze",)
DAY = days(orders(CT, DD))
# An interbank profile's: its instant payments too (the scenario IBANs settle or reject: no
# timeout's, each would cost it), and collections the clearing presents from the account,
# under the customer's mandate or not, settling today or one or two days after.
PRESENT = st.tuples(
    st.just("present"), AMOUNTS, st.booleans(), st.integers(min_value=0, max_value=2)
)
INTERBANK_DAY = days(orders(CT, DD, INST), PRESENT)


def play(days, hold_days: int, interbank: bool = False) -> None:
    """The days on a new world, checked after every step, in a savepoint rolled back."""
    savepoint = transaction.atomic()
    savepoint._from_testcase = True  # the API's durable transactions nest in it
    with savepoint:
        world = SepaWorld(hold_days, interbank)
        world.check()
        for forward, bank_first, morning, evening in days:
            world.day += timedelta(days=forward)
            steps = [("job", 9), *morning, ("job", 17), *evening]
            for name, *arguments in [("bank_answers",), *steps] if bank_first else steps:
                getattr(world, name)(*arguments)
                world.check()
        transaction.set_rollback(True)


@pytest.mark.django_db
@world_settings(EXAMPLES)
# Every path at least once, whatever is drawn: a transfer rejected by the pain.002 and one
# booked then returned; a collection rejected, and one collected into a frozen account (held),
# spent once free, then refunded MD06 (the rest owed); a frozen account's transfer waiting for a
# window after it is active again.
@example(
    hold_days=2,
    days=[
        (
            1,
            False,
            [CT_REJECTED, CT_RETURNED, DD_MD06, DD_REJECTED, ("cutoff",), ("job",)],
            [("bank_answers",), ("job",), ("order", CT, 100, 0, 1), FREEZE],
        ),
        (3, True, [("spend", 100), ("order", CT, 100, 0, 1), ("cutoff",)], [FREEZE]),
        (4, True, [("cutoff",), ("job",)], [("spend", 14_900), ("spend", 100)]),
        (10, True, [("bank_answers",)], []),
    ],
)
# A collection returned MD01 thirty days after its booking, its money partly spent (no hold);
# one whose due date came too close while it waited, cancelled; a cancellation refused.
@example(
    hold_days=0,
    days=[
        (
            1,
            False,
            [DD_MD01, ("order", CT, 300, 0, 3), ("cutoff",), ("job",)],
            [("order", DD, 400, 0, 1), ("bank_answers",)],
        ),
        (
            5,
            True,
            [("spend", 10_300)],
            [("cutoff",), ("job",), ("cancel", 2), ("cancel", 0), ("bank_answers",)],
        ),
        (33, True, [], [("bank_answers",), ("job",)]),
    ],
)
# A collection refunded while its money is still held (a profile's long returns hold).
@example(
    hold_days=10,
    days=[
        (1, False, [DD_MD06, ("cutoff",), ("job",), ("bank_answers",)], [("spend", 10_000)]),
        (3, True, [], []),
        (10, True, [], []),
    ],
)
@given(
    hold_days=st.sampled_from([2, 10, 0]), days=st.lists(DAY, min_size=MIN_DAYS, max_size=MAX_DAYS)
)
def test_random_sepa_orders_the_jobs_and_the_bank_match_the_model(hold_days, days):
    play(days, hold_days)


INST_SETTLED, INST_REJECTED = ("order", INST, 300, 0, 1), ("order", INST, 400, 1, 1)


@pytest.mark.django_db
@world_settings(INTERBANK_EXAMPLES)
# Every path at least once: a transfer rejected by the clearing's pacs.002, one settled then
# returned in its pacs.004; instant payments settled and rejected; a collection rejected, one
# refunded MD06 after it was spent, one due two SEPA days after (presented in the next day's
# window only); collections presented under the mandate (debited, or returned AM04 for want
# of money on their date, AC06 frozen by then), without it (MD01) and into a frozen account
# (AC06).
@example(
    hold_days=2,
    days=[
        (
            1,
            False,
            [CT_REJECTED, CT_RETURNED, DD_MD06, DD_REJECTED, DD_MD01, INST_SETTLED],
            [
                INST_REJECTED,
                ("present", 800, True, 0),
                ("present", 900, False, 1),
                ("present", 9_950, True, 1),
                ("present", 100, True, 2),
                ("cutoff",),
                ("job",),
            ],
        ),
        (
            1,
            True,
            [("bank_answers",), ("present", 200, True, 0)],
            [FREEZE, ("present", 300, True, 1)],
        ),
        (1, True, [FREEZE], []),
        (5, True, [("spend", 13_000)], [("bank_answers",), ("job",)]),
        (10, True, [], [("bank_answers",), ("job",)]),
    ],
)
@given(
    hold_days=st.sampled_from([2, 0]),
    days=st.lists(INTERBANK_DAY, min_size=MIN_DAYS, max_size=INTERBANK_MAX_DAYS),
)
def test_random_interbank_orders_the_jobs_and_the_clearing_match_the_model(hold_days, days):
    play(days, hold_days, interbank=True)
