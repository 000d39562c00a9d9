"""A hypothesis property over sequences of a dispute's stages (issue 32 item 7; docs/disputes.md,
"Stages" and "Money"): whatever the issuer and the network do, in whatever order, the ledger
balances and each dispute's liability split stays whole.

One presented payment of PAID (through the API, of a new institution each example), one
dispute of a drawn amount filed on it, then MIN_STEPS to MAX_STEPS steps, each one of:

- `advance`: a run of one to four moves the contract allows at the dispute's stage, each drawn
  among them (the issuer's or the network's: submit, withdraw, deny, the chargeback, a
  representment of a drawn amount, pre-arbitration, its answer, arbitration, its ruling,
  closing won or with a drawn liability; the last one closing the dispute one time in four),
  so that sequences reach the late stages;
- `any`: any of the issuer's moves or the network's messages, whatever the stage (mostly
  refused: 409 `invalid_state_transition`, 422 `amount_exceeds_remaining` for a representment
  above what was charged back, 400 for a loss accepted without a liability);
- `file`: a second dispute of a drawn amount on the same payment (422 beyond what is left to
  dispute: what was presented less what the open disputes and the closed disputes' recovered
  and written-off parts count).

A model (`Expected`) predicts every answer: its status, its error code and details, and the
dispute's stage, outcome, provisional credit, liability split and steps (kind and money). After
every step, each dispute read through the API equals the model, and:

- recovered + cardholderLiable + writtenOff + remaining == amount, each >= 0,
  provisionalCredit <= amount;
- a refused move changed nothing: the dispute read before == the dispute read after;
- the cardholder's posted balance == START - PAID + sum(provisionalCredit) (docs/disputes.md,
  "Money": only the provisional credit and its reversal touch the cardholder's account), and
  so do its dispute statement lines (CashInc - CashDec);
- dispute clearing's posted balance == sum(recovered + writtenOff - provisionalCredit)
  (services/money.py: the credit granted debits it, the chargeback and every recovery credit
  it, a representment debits it, a reversal and a write-off credit it; with
  provisionalCredit = granted - reversed and recovered = charged back + recovered again -
  re-presented, the sum is recovered + writtenOff - provisionalCredit); 0 for a closed one;
- card clearing's posted balance == what it was after the payment - sum(recovered); dispute
  losses' == -sum(writtenOff);
- the authorization counts (presented, returned, disputed) == (PAID, 0, sum(amount) less the
  closed disputes' cardholderLiable).

At the end of each example `verify_ledger` passes. EXAMPLES examples and one explicit example
(every refusal at least once), derandomized (the same sequences every run): about 45 s on the
2-core machine. Faults planted in disputes/services while it was written were caught: the whole
provisional credit reversed when the cardholder bears part of it, a closing that does not give
the authorization back what the cardholder bears (both by the explicit example), a write-off
paid from card clearing instead of into dispute clearing (by the drawn examples).
"""

from dataclasses import dataclass, field

import pytest
from django.db.models import Sum
from hypothesis import HealthCheck, Phase, event, example, given, settings
from hypothesis import strategies as st

from accounts.models import Account, StatementLine
from authorizations.models import Authorization
from tests.accounts.api.helpers import assert_error, balances, created, money
from tests.authorizations.test_concurrency import LEDGER_OK, verify_ledger
from tests.conftest import Api
from tests.factories import InstitutionFactory, issue_key

from .helpers import PAID, START, dispute_of, file, internal_balance, move, network, payment

pytestmark = pytest.mark.django_db

DISPUTE_CLEARING = Account.InternalCode.DISPUTE_CLEARING
CARD_CLEARING = Account.InternalCode.CARD_CLEARING
LOSSES = Account.InternalCode.DISPUTE_LOSSES
EXAMPLES = 30
MIN_STEPS, MAX_STEPS = 4, 16
MAX_DISPUTES = 2

# (kind, `to` or the network's message, its fields)
ISSUER = [
    ("move", "submitted", {}),
    ("move", "prearbitration", {}),
    ("move", "arbitration", {}),
    ("move", "closed", {}),
    ("move", "closed", {"outcome": "withdrawn"}),
    ("move", "closed", {"outcome": "denied"}),
    ("move", "closed", {"liability": "cardholder"}),
    ("move", "closed", {"liability": "issuer"}),
]
NETWORK = [
    ("network", "chargeback_accepted", {}),
    ("network", "representment_received", {}),  # the drawn amount, or none
    ("network", "prearbitration_response", {"accepted": True}),
    ("network", "prearbitration_response", {"accepted": False}),
    ("network", "arbitration_ruling", {"inFavorOfIssuer": True}),
    ("network", "arbitration_ruling", {"inFavorOfIssuer": False}),
]
WHICH = st.integers(min_value=0, max_value=1)  # which dispute (modulo how many there are)
AMOUNT = st.integers(min_value=1, max_value=PAID)
# A second dispute or a representment: any amount, or one at the edges of what is left.
ASKED = st.one_of(
    st.integers(min_value=1, max_value=PAID + 1_000), st.sampled_from([PAID // 2, PAID, PAID + 1])
)
# Whether an allowed move goes on (three times in four) or closes the dispute, which of them,
# and the amount of a representment (none: all that was charged back).
# A run of one to four allowed moves of one dispute (each one of those that go on, drawn by its
# index, the last one closing the dispute one time in four) and the amount of a representment
# (none: all that was charged back).
ADVANCE = st.tuples(
    st.just("advance"),
    WHICH,
    st.lists(st.integers(min_value=0, max_value=1), min_size=1, max_size=4),
    st.sampled_from([False, False, False, True]),
    st.none() | AMOUNT,
)
STEP = st.one_of(
    ADVANCE,
    ADVANCE,  # twice as often as the others: the late stages need runs of allowed moves
    st.tuples(st.just("any"), WHICH, st.sampled_from(ISSUER + NETWORK), st.none() | ASKED),
    st.tuples(st.just("file"), ASKED),
)


@dataclass
class Expected:
    """What the model says of one dispute."""

    pk: str
    amount: int
    status: str = "draft"
    outcome: str | None = None
    provisional_credit: int = 0
    recovered: int = 0
    cardholder_liable: int = 0
    written_off: int = 0
    remaining: int = 0
    steps: list[tuple[str, int]] = field(default_factory=lambda: [("created", 0)])
    submitted: bool = False

    def __post_init__(self):
        self.remaining = self.amount

    def view(self) -> dict:
        return {
            "amount": self.amount,
            "status": self.status,
            "outcome": self.outcome,
            "provisionalCredit": self.provisional_credit,
            "recovered": self.recovered,
            "cardholderLiable": self.cardholder_liable,
            "writtenOff": self.written_off,
            "remaining": self.remaining,
            "steps": self.steps,
            "submitted": self.submitted,
            "closed": self.status == "closed",
        }

    @property
    def declined(self) -> bool:
        return self.status == "prearbitration" and self.steps[-1][0] == "prearbitration_declined"

    def allowed(self) -> tuple[list, list]:
        """The moves the contract allows now (docs/disputes.md, the two tables): (those that go
        on, those that close the dispute)."""
        closing = [
            ("move", "closed", {"liability": "cardholder"}),
            ("move", "closed", {"liability": "issuer"}),
        ]
        return {
            "draft": ([ISSUER[0]], [ISSUER[4], ISSUER[5]]),
            "submitted": ([NETWORK[0]], [ISSUER[4], ISSUER[5]]),
            "chargeback": ([NETWORK[1]], [ISSUER[3]]),
            "representment": ([ISSUER[1]], closing),
            "prearbitration": ([ISSUER[2]], closing)
            if self.declined
            else ([NETWORK[2], NETWORK[3]], closing),
            "arbitration": ([NETWORK[4], NETWORK[5]], []),
            "closed": ([], []),
        }[self.status]

    # --- the money (services/money.py, as docs/disputes.md describes it)
    def recover(self, kind: str) -> None:
        self.steps.append((kind, self.remaining))
        self.recovered += self.remaining
        self.remaining = 0

    def cardholder_bears(self) -> None:
        reversed_ = min(self.remaining, self.provisional_credit)
        if reversed_:
            self.steps.append(("provisional_credit_reversed", reversed_))
            self.provisional_credit -= reversed_
        self.cardholder_liable += self.remaining
        self.remaining = 0

    def close(self, outcome: str | None = None) -> None:
        if outcome is None:
            if self.recovered == self.amount:
                outcome = "won"
            else:
                outcome = "partly_won" if self.recovered else "lost"
        self.status, self.outcome = "closed", outcome
        self.steps.append(("closed", 0))

    def apply(self, kind: str, name: str, fields: dict):
        """Predict the answer to one move and, when allowed, apply it: None (201), or the
        refusal (status, code, details)."""
        refused = (409, "invalid_state_transition", {"from": self.status, "to": name})
        if kind == "network":
            return self._network(name, fields, refused)
        if name == "submitted" and self.status == "draft":
            self.status, self.submitted = "submitted", True
            self.steps += [("submitted", 0), ("provisional_credit", self.amount)]
            self.provisional_credit = self.amount
        elif name == "prearbitration" and self.status == "representment":
            self.status = "prearbitration"
            self.steps.append(("prearbitration_filed", 0))
        elif name == "arbitration" and self.declined:
            self.status = "arbitration"
            self.steps.append(("arbitration_filed", 0))
        elif name == "closed" and "outcome" in fields:
            if self.status not in ("draft", "submitted"):
                return refused
            self.cardholder_bears()
            self.close(fields["outcome"])
        elif name == "closed" and self.status == "chargeback":
            if "liability" in fields:  # nothing is open to bear
                return (
                    400,
                    "validation_error",
                    {"liability": "Nothing is open to bear: all was charged back."},
                )
            self.close()  # won: nothing was re-presented
        elif name == "closed" and self.status in ("representment", "prearbitration"):
            if "liability" not in fields:
                return (
                    400,
                    "validation_error",
                    {"liability": "Who bears what is open: one of ['cardholder', 'issuer']."},
                )
            if fields["liability"] == "cardholder":
                self.cardholder_bears()
            else:
                self.steps.append(("write_off", self.remaining))
                self.written_off += self.remaining
                self.remaining = 0
            self.close()
        else:
            return refused
        return None

    def _network(self, name: str, fields: dict, refused):
        if name == "chargeback_accepted" and self.status == "submitted":
            self.status = "chargeback"
            self.recover("chargeback")
        elif name == "representment_received" and self.status == "chargeback":
            amount = fields.get("amount", self.recovered)
            if amount > self.recovered:
                return (
                    422,
                    "amount_exceeds_remaining",
                    {"amount": amount, "remaining": self.recovered},
                )
            self.status = "representment"
            self.steps.append(("representment", amount))
            self.recovered -= amount
            self.remaining += amount
        elif name == "prearbitration_response" and self.status == "prearbitration":
            if self.declined:
                return refused
            if fields["accepted"]:
                self.recover("prearbitration_accepted")
                self.close()
            else:
                self.steps.append(("prearbitration_declined", 0))
        elif name == "arbitration_ruling" and self.status == "arbitration":
            if fields["inFavorOfIssuer"]:
                self.recover("arbitration_won")
            else:
                self.steps.append(("arbitration_lost", 0))
                self.cardholder_bears()
            self.close()
        else:
            return refused
        return None


def seen(body: dict) -> dict:
    """A dispute as read through the API, in the model's terms."""
    return {
        "amount": body["amount"],
        "status": body["status"],
        "outcome": body["outcome"],
        "provisionalCredit": body["provisionalCredit"],
        "recovered": body["recovered"],
        "cardholderLiable": body["cardholderLiable"],
        "writtenOff": body["writtenOff"],
        "remaining": body["remaining"],
        "steps": [(step["kind"], step["amount"]) for step in body["steps"]],
        "submitted": body["submittedAt"] is not None,
        "closed": body["closedAt"] is not None,
    }


class Sequence:
    """Sends the steps over HTTP, predicting each answer with the model, and compares the
    database with it after every step."""

    def __init__(self, api, p):
        self.api, self.p = api, p
        self.disputes: list[Expected] = []
        self.read: dict[str, dict] = {}  # each dispute as the last check read it
        self.card_clearing = internal_balance(CARD_CLEARING, p.account_id)

    def disputable(self) -> int:
        return PAID - sum(
            d.amount - (d.cardholder_liable if d.status == "closed" else 0) for d in self.disputes
        )

    def file(self, amount: int) -> None:
        if len(self.disputes) >= MAX_DISPUTES:
            return
        left = self.disputable()
        response = file(self.api, self.p.authorization_id, amount)
        if amount > left:
            assert_error(
                response,
                "v2",
                422,
                "amount_exceeds_remaining",
                {"amount": amount, "remaining": left},
            )
            event("refused 422 amount_exceeds_remaining: a dispute beyond what is left")
            return
        body = created(response, "v2")
        event(f"filed dispute {len(self.disputes) + 1}")
        expected = Expected(body["disputeId"], amount)
        assert seen(body) == expected.view()
        self.disputes.append(expected)

    def advance(self, which: int, indexes: list[int], close: bool, amount: int | None) -> None:
        """A run of moves the contract allows, each one that goes on (the last one closing
        the dispute when `close` says so and it can), checked after each."""
        expected = self.disputes[which % len(self.disputes)]
        for position, index in enumerate(indexes):
            if position:
                self.check()
            going_on, closing = expected.allowed()
            last = position == len(indexes) - 1
            among = closing if (close and last and closing) or not going_on else going_on
            if not among:
                return
            kind, name, fields = among[index % len(among)]
            drawn = None
            if name == "representment_received" and amount is not None:
                drawn = 1 + (amount - 1) % expected.recovered
            self.send(expected, kind, name, fields, drawn)

    def any(self, which: int, move_: tuple, amount: int | None) -> None:
        kind, name, fields = move_
        expected = self.disputes[which % len(self.disputes)]
        self.send(
            expected, kind, name, fields, amount if name == "representment_received" else None
        )

    def send(self, expected: Expected, kind: str, name: str, fields: dict, amount) -> None:
        fields = dict(fields) if amount is None else {**fields, "amount": amount}
        before = self.read[expected.pk]
        stage = expected.status
        refusal = expected.apply(kind, name, fields)
        if kind == "network":
            response = network(self.api, expected.pk, name, **fields)
        else:
            response = move(self.api, expected.pk, name, **fields)
        if refusal is None:
            assert seen(created(response, "v2")) == expected.view(), (kind, name, fields)
            event(f"{name} {sorted(fields.items())} from {stage}".replace(f"{amount}", "n"))
        else:
            status, code, details = refusal
            event(f"refused {status} {code}: {name} from {stage}")
            assert_error(response, "v2", status, code, details)
            assert dispute_of(self.api, expected.pk) == before

    def check(self) -> None:
        for expected in self.disputes:
            body = self.read[expected.pk] = dispute_of(self.api, expected.pk)
            assert seen(body) == expected.view()
            parts = (body["recovered"], body["cardholderLiable"], body["writtenOff"])
            assert sum(parts) + body["remaining"] == body["amount"]
            assert min(*parts, body["remaining"], body["provisionalCredit"]) >= 0
            assert body["provisionalCredit"] <= body["amount"]
            if body["status"] == "closed":
                assert body["remaining"] == 0
        credit = sum(d.provisional_credit for d in self.disputes)
        recovered = sum(d.recovered for d in self.disputes)
        written_off = sum(d.written_off for d in self.disputes)
        account_id = self.p.account_id
        assert balances(self.api, account_id) == money(START - PAID + credit)
        lines = dict(
            StatementLine.objects.filter(account_id=account_id, category="dispute")
            .values_list("type")
            .annotate(total=Sum("amount"))
        )
        assert lines.get("CashInc", 0) - lines.get("CashDec", 0) == credit
        assert internal_balance(DISPUTE_CLEARING, account_id) == recovered + written_off - credit
        for expected in self.disputes:
            if expected.status == "closed":
                assert expected.recovered + expected.written_off == expected.provisional_credit
        assert internal_balance(CARD_CLEARING, account_id) == self.card_clearing - recovered
        assert internal_balance(LOSSES, account_id) == -written_off
        authorization = Authorization.objects.get(pk=self.p.authorization_id)
        assert (
            authorization.presented_amount,
            authorization.returned_amount,
            authorization.disputed_amount,
        ) == (PAID, 0, PAID - self.disputable())


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=True,
    # No explain phase: at a second an example it would take minutes to report a failure.
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
# Every refusal at least once, whatever is drawn: a second dispute beyond what is left (before
# and after the first closed with the cardholder bearing part of it), a representment beyond
# what was charged back, a loss accepted without a liability, a pre-arbitration answered twice.
@example(
    first=PAID // 2,
    steps=[
        ("file", PAID),  # 422: 2,000 left
        ("advance", 0, [0, 0], False, None),  # submitted, chargeback
        ("any", 0, NETWORK[1], PAID),  # 422: 2,000 charged back
        ("advance", 0, [0, 0], False, 500),  # 500 re-presented, pre-arbitration filed
        ("any", 0, ISSUER[3], None),  # 400: who bears it?
        ("advance", 0, [1], False, None),  # declined
        ("any", 0, NETWORK[2], None),  # 409: answered already
        ("advance", 0, [0, 1], False, None),  # arbitration, ruled against: partly won,
        # the cardholder bearing the 500 re-presented
        ("file", PAID),  # 422: 2,500 left
        ("file", PAID // 2 + 500),
        ("advance", 1, [0, 0], False, None),  # submitted, chargeback
        ("advance", 1, [0], True, None),  # closed, won
    ],
)
@given(first=AMOUNT, steps=st.lists(STEP, min_size=MIN_STEPS, max_size=MAX_STEPS))
def test_any_sequence_of_stages_keeps_the_ledger_and_the_liability_split(db, first, steps):
    # A fresh institution each example: its internal accounts start from nothing. (The API's
    # writes are durable transactions: an example cannot run in a savepoint to roll back.)
    api = Api("v2", issue_key(InstitutionFactory())[1])
    sequence = Sequence(api, payment(api))
    sequence.file(first)
    sequence.check()
    for name, *arguments in steps:
        getattr(sequence, name)(*arguments)
        sequence.check()
    assert verify_ledger() == LEDGER_OK
