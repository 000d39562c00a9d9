"""When a dispute credits the cardholder and when it takes the credit back (issue 32 items 3 and
6; docs/disputes.md, "Money"): a card product's `disputeProvisionalCredit` (`at_submission`, or
`by_deadline`: on the policy's provisional-credit deadline if the dispute is still open, what the
cardholder keeps at its close otherwise), a staff grant apart from the stages, and the reversal
held for the policy's notice (Reg E: five business days of the institution's calendar) and
posted by the deadline job the day after. The clock is frozen where the calendar matters."""

from datetime import date, datetime
from unittest import mock

import pytest
from django.db import transaction

from accounts.models import Account
from core.actors import SYSTEM
from core.exceptions import InvalidStateTransition
from core.timestamps import iso_millis
from disputes.models import Dispute
from disputes.services.stages import dispute_grant_provisional_credit
from institutions.services import holiday_add
from tests.accounts.api.helpers import assert_error, balances, money
from tests.authorizations.helpers import START, card_lines, event_data
from tests.authorizations.test_concurrency import LEDGER_OK, verify_ledger
from tests.cards.api.helpers import product_rid

from .helpers import (
    PAID,
    answered,
    dispute_of,
    filed,
    internal_balance,
    move,
    moved,
    payment,
    split,
)
from .test_deadlines import FRIDAY, counts, watch
from .test_value_dates import debited_at

pytestmark = pytest.mark.django_db

CLEARING = Account.InternalCode.DISPUTE_CLEARING


def product(api, institution, policy: str, credit: str | None = None) -> dict:
    """The standard prepaid product's dispute policy and when it credits; the institution in
    UTC."""
    body = {"disputePolicy": policy}
    if credit:
        body["disputeProvisionalCredit"] = credit
    rid = product_rid(api, "PREPAID_STANDARD")
    response = api.patch(f"/products/cards/{rid}", body)
    assert response.status_code == 200, response.content
    institution.time_zone = "UTC"
    institution.save(update_fields=["time_zone"])
    return response.json()


def at(instant: str):
    """The clock frozen at `instant` (the services read `timezone.now`)."""
    return mock.patch(
        "django.utils.timezone.now",
        return_value=datetime.fromisoformat(instant.replace("Z", "+00:00")),
    )


def kinds(dispute: dict) -> list[str]:
    return [step["kind"] for step in dispute["steps"]]


def deadline(dispute: dict, name: str) -> dict:
    return next(d for d in dispute["deadlines"] if d["name"] == name)


def dispute_lines(api, p) -> list[tuple[str, int, str | None]]:
    """(type, amount, valueAt) of the card's dispute lines, oldest first."""
    return [
        (line["type"], line["amount"], line["valueAt"])
        for line in reversed(card_lines(api, p.card_id))
        if line["category"] == "dispute"
    ]


def payment_line_at(api, p) -> str:
    """When the disputed payment debited the account (the dispute's credits' value date)."""
    return iso_millis(debited_at(p))


def test_the_product_says_when_its_disputes_credit(api_v2, institution):
    rid = product_rid(api_v2, "PREPAID_STANDARD")
    assert api_v2.get(f"/products/cards/{rid}").json()["disputeProvisionalCredit"] == (
        "at_submission"
    )
    assert product(api_v2, institution, "regE", "by_deadline")["disputeProvisionalCredit"] == (
        "by_deadline"
    )
    response = api_v2.patch(f"/products/cards/{rid}", {"disputeProvisionalCredit": "later"})
    assert response.status_code == 400, response.content
    assert list(response.json()["details"]) == ["disputeProvisionalCredit"]


def test_by_deadline_credits_on_the_deadline_day_while_still_open(api_v2, institution):
    product(api_v2, institution, "regE", "by_deadline")
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id, cardholderContactedAt=FRIDAY)["disputeId"]

    submitted = moved(api_v2, dispute_id, "submitted")
    assert (submitted["provisionalCredit"], kinds(submitted)) == (0, ["created", "submitted"])
    assert deadline(submitted, "provisional_credit")["metAt"] is None  # due Friday 4 December
    assert deadline(submitted, "network_filing")["metAt"] is not None
    assert balances(api_v2, p.account_id) == money(START - PAID)

    assert watch("2026-12-03T12:00:00Z") == counts(1, 0, 0)  # warned, not credited yet
    assert balances(api_v2, p.account_id) == money(START - PAID)
    assert watch("2026-12-04T00:30:00Z") == counts(0, 0, 0, credited=1)
    assert watch("2026-12-04T12:00:00Z") == counts(0, 0, 0)  # once

    credited = dispute_of(api_v2, dispute_id)
    assert credited["provisionalCredit"] == PAID
    assert kinds(credited)[-1] == "provisional_credit"
    assert credited["steps"][-1]["reason"] == "The policy's provisional credit deadline."
    assert deadline(credited, "provisional_credit")["missedAt"] is None
    assert deadline(credited, "provisional_credit")["metAt"] is not None
    assert balances(api_v2, p.account_id) == money(START)
    assert dispute_lines(api_v2, p) == [("CashInc", PAID, payment_line_at(api_v2, p))]
    assert event_data(api_v2, "dispute.updated", dispute_id)[0]["changedFields"] == [
        "provisionalCredit"
    ]

    answered(api_v2, dispute_id, "chargeback_accepted")
    won = moved(api_v2, dispute_id, "closed")
    assert (won["outcome"], won["provisionalCredit"], "credit" in kinds(won)) == (
        "won",
        PAID,
        False,
    )
    assert balances(api_v2, p.account_id) == money(START)
    assert internal_balance(CLEARING, p.account_id) == 0
    assert verify_ledger() == LEDGER_OK


@pytest.mark.parametrize(("liability", "kept"), [("issuer", PAID), ("cardholder", PAID - 1_000)])
def test_by_deadline_closed_before_it_credits_what_the_cardholder_keeps(
    api_v2, institution, liability, kept
):
    product(api_v2, institution, "regE", "by_deadline")
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]
    moved(api_v2, dispute_id, "submitted")
    answered(api_v2, dispute_id, "chargeback_accepted")
    answered(api_v2, dispute_id, "representment_received", amount=1_000)

    closed = moved(api_v2, dispute_id, "closed", liability=liability)

    assert (closed["outcome"], closed["provisionalCredit"]) == ("partly_won", kept)
    assert kinds(closed)[-2:] == ["credit", "closed"]
    assert closed["provisionalCreditReversesOn"] is None  # nothing was credited to take back
    assert balances(api_v2, p.account_id) == money(START - PAID + kept)
    assert dispute_lines(api_v2, p) == [("CashInc", kept, payment_line_at(api_v2, p))]
    assert internal_balance(CLEARING, p.account_id) == 0
    assert verify_ledger() == LEDGER_OK
    # The deadline is met by the close: the job credits nothing more.
    assert watch("2027-01-15T12:00:00Z")["credited"] == 0
    assert balances(api_v2, p.account_id) == money(START - PAID + kept)


def test_by_deadline_denied_before_it_moves_no_money(api_v2, institution):
    product(api_v2, institution, "regE", "by_deadline")
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]
    moved(api_v2, dispute_id, "submitted")

    denied = moved(api_v2, dispute_id, "closed", outcome="denied")

    assert (denied["provisionalCredit"], split(denied)) == (0, (0, PAID, 0, 0))
    assert [step["amount"] for step in denied["steps"]] == [0, 0, 0]
    assert balances(api_v2, p.account_id) == money(START - PAID)
    assert dispute_lines(api_v2, p) == []


def test_staff_grant_the_credit_apart_from_the_stages_once(api_v2, institution):
    product(api_v2, institution, "regE", "by_deadline")
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]
    dispute = Dispute.objects.get(pk=dispute_id)

    dispute_grant_provisional_credit(dispute=dispute, actor=SYSTEM, reason="Called twice")

    draft = dispute_of(api_v2, dispute_id)  # a draft, credited before it is filed
    assert (draft["status"], draft["provisionalCredit"]) == ("draft", PAID)
    assert draft["steps"][-1]["reason"] == "Called twice"
    assert deadline(draft, "provisional_credit")["metAt"] is not None
    assert balances(api_v2, p.account_id) == money(START)
    with pytest.raises(InvalidStateTransition) as again, transaction.atomic():
        dispute_grant_provisional_credit(dispute=dispute, actor=SYSTEM)
    assert again.value.details == {"from": "draft", "to": "provisionally_credited"}
    assert dispute_of(api_v2, dispute_id)["provisionalCredit"] == PAID
    # Submitting it credits nothing more; withdrawing it takes the credit back.
    assert moved(api_v2, dispute_id, "submitted")["provisionalCredit"] == PAID
    assert balances(api_v2, p.account_id) == money(START)
    withdrawn = moved(api_v2, dispute_id, "closed", outcome="withdrawn")
    assert withdrawn["provisionalCreditReversesOn"] is not None  # Reg E's notice
    with pytest.raises(InvalidStateTransition), transaction.atomic():
        dispute_grant_provisional_credit(dispute=dispute, actor=SYSTEM)


def test_reg_e_holds_the_reversal_for_five_business_days(api_v2, institution):
    product(api_v2, institution, "regE")
    holiday_add(institution=institution, date=date(2026, 12, 8), name="A bank holiday")
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]
    moved(api_v2, dispute_id, "submitted")

    with at("2026-12-04T15:00:00Z"):  # a Friday
        denied = moved(api_v2, dispute_id, "closed", outcome="denied")

    # Monday 7, (Tuesday 8 a holiday), 9, 10, 11, Monday 14: the notice's last day.
    assert (denied["status"], denied["outcome"]) == ("closed", "denied")
    assert (denied["provisionalCredit"], denied["provisionalCreditReversesOn"]) == (
        PAID,
        "2026-12-14",
    )
    assert split(denied) == (0, PAID, 0, 0)
    assert kinds(denied)[-2:] == ["reversal_notice", "closed"]
    assert balances(api_v2, p.account_id) == money(START)  # the cardholder keeps it meanwhile
    [notice] = event_data(api_v2, "dispute.provisional_credit_reversal_scheduled", dispute_id)
    assert (notice["reversalAmount"], notice["provisionalCreditReversesOn"]) == (
        PAID,
        "2026-12-14",
    )
    assert notice["status"] == "closed"

    assert watch("2026-12-14T23:30:00Z")["reversed"] == 0  # still the notice's day
    assert watch("2026-12-15T00:30:00Z")["reversed"] == 1
    assert watch("2026-12-16T00:30:00Z")["reversed"] == 0  # once

    reversed_ = dispute_of(api_v2, dispute_id)
    assert (reversed_["provisionalCredit"], reversed_["provisionalCreditReversesOn"]) == (0, None)
    assert kinds(reversed_)[-1] == "provisional_credit_reversed"
    assert balances(api_v2, p.account_id) == money(START - PAID)
    assert [line[:2] for line in dispute_lines(api_v2, p)] == [
        ("CashInc", PAID),
        ("CashDec", PAID),
    ]
    assert internal_balance(CLEARING, p.account_id) == 0
    assert verify_ledger() == LEDGER_OK


def test_reg_e_holds_only_what_the_cardholder_bears(api_v2, institution):
    product(api_v2, institution, "regE")
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]
    moved(api_v2, dispute_id, "submitted")
    answered(api_v2, dispute_id, "chargeback_accepted")
    answered(api_v2, dispute_id, "representment_received", amount=1_000)

    with at("2026-12-04T15:00:00Z"):
        lost = moved(api_v2, dispute_id, "closed", liability="cardholder")

    assert (lost["outcome"], lost["provisionalCreditReversesOn"]) == ("partly_won", "2026-12-11")
    [notice] = event_data(api_v2, "dispute.provisional_credit_reversal_scheduled", dispute_id)
    assert notice["reversalAmount"] == 1_000
    assert watch("2026-12-12T00:30:00Z")["reversed"] == 1
    after = dispute_of(api_v2, dispute_id)
    assert (after["provisionalCredit"], split(after)) == (PAID - 1_000, (PAID - 1_000, 1_000, 0, 0))
    assert balances(api_v2, p.account_id) == money(START - 1_000)
    assert internal_balance(CLEARING, p.account_id) == 0
    assert verify_ledger() == LEDGER_OK


@pytest.mark.parametrize("policy", ["psd2", "none"])
def test_without_a_notice_the_reversal_is_at_once(api_v2, institution, policy):
    product(api_v2, institution, policy)
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]
    moved(api_v2, dispute_id, "submitted")

    denied = moved(api_v2, dispute_id, "closed", outcome="denied")

    assert (denied["provisionalCredit"], denied["provisionalCreditReversesOn"]) == (0, None)
    assert "reversal_notice" not in kinds(denied)
    assert balances(api_v2, p.account_id) == money(START - PAID)
    assert event_data(api_v2, "dispute.provisional_credit_reversal_scheduled", dispute_id) == []


def test_closing_a_chargeback_has_nothing_open_to_bear(api_v2):
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]
    moved(api_v2, dispute_id, "submitted")
    answered(api_v2, dispute_id, "chargeback_accepted")

    assert_error(
        move(api_v2, dispute_id, "closed", liability="cardholder"),
        "v2",
        400,
        "validation_error",
        {"liability": "Nothing is open to bear: all was charged back."},
    )
    assert dispute_of(api_v2, dispute_id)["status"] == "chargeback"
