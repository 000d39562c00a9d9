"""A dispute end to end over HTTP (issue 32 items 1-4, 7; docs/disputes.md): each path (won,
lost, partly won, withdrawn, denied), the money of every step (the cardholder's balance, its
statement lines, the dispute and card clearing accounts, the liability split), and
`verify_ledger` after each path."""

import pytest

from accounts.models import Account
from tests.accounts.api.helpers import assert_error, balances, money
from tests.authorizations.helpers import START, card_lines, event_data
from tests.authorizations.test_concurrency import LEDGER_OK, verify_ledger

from .helpers import (
    PAID,
    answered,
    dispute_of,
    file,
    filed,
    internal_balance,
    move,
    moved,
    network,
    payment,
    split,
)

pytestmark = pytest.mark.django_db

DISPUTE_CLEARING = Account.InternalCode.DISPUTE_CLEARING
CARD_CLEARING = Account.InternalCode.CARD_CLEARING
LOSSES = Account.InternalCode.DISPUTE_LOSSES
AFTER_PAYMENT = START - PAID


def kinds(dispute: dict) -> list[str]:
    return [step["kind"] for step in dispute["steps"]]


def dispute_lines(api, p) -> list[tuple[str, int, str]]:
    """(type, amount, disputeId-bearing description) of the card's dispute lines, oldest first."""
    return [
        (line["type"], line["amount"], line["category"])
        for line in reversed(card_lines(api, p.card_id))
        if line["category"] == "dispute"
    ]


def test_a_draft_is_filed_on_a_presented_payment_and_moves_nothing(api_v2):
    p = payment(api_v2)

    body = filed(
        api_v2,
        p.authorization_id,
        1_500,
        note="Parcel never came",
        evidence={"explanation": "Tracking shows it was lost", "expectedAt": "2026-11-15"},
        metadata={"case": "A-17"},
    )

    assert body["disputeId"].startswith("dsp_")
    assert (body["status"], body["outcome"], body["amount"], body["currency"]) == (
        "draft",
        None,
        1_500,
        "EUR",
    )
    assert (body["authorizationId"], body["cardId"], body["accountId"]) == (
        p.authorization_id,
        p.card_id,
        p.account_id,
    )
    assert body["evidence"] == {
        "explanation": "Tracking shows it was lost",
        "expectedAt": "2026-11-15",
    }
    assert (body["provisionalCredit"], *split(body)) == (0, 0, 0, 0, 1_500)
    assert kinds(body) == ["created"]
    assert body["metadata"] == {"case": "A-17"}
    assert balances(api_v2, p.account_id) == money(AFTER_PAYMENT)
    assert event_data(api_v2, "dispute.created", body["disputeId"])[0]["remaining"] == 1_500


def test_won_by_the_chargeback(api_v2):
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]

    submitted = moved(api_v2, dispute_id, "submitted")
    assert (submitted["status"], submitted["provisionalCredit"]) == ("submitted", PAID)
    assert balances(api_v2, p.account_id) == money(START)
    assert internal_balance(DISPUTE_CLEARING, p.account_id) == -PAID
    assert dispute_lines(api_v2, p) == [("CashInc", PAID, "dispute")]

    charged_back = answered(api_v2, dispute_id, "chargeback_accepted")
    assert charged_back["status"] == "chargeback"
    assert split(charged_back) == (PAID, 0, 0, 0)
    assert internal_balance(DISPUTE_CLEARING, p.account_id) == 0

    won = moved(api_v2, dispute_id, "closed", reason="No representment within the time limit")
    assert (won["status"], won["outcome"], won["resolutionReason"]) == (
        "closed",
        "won",
        "No representment within the time limit",
    )
    assert (won["provisionalCredit"], *split(won)) == (PAID, PAID, 0, 0, 0)
    assert kinds(won) == ["created", "submitted", "provisional_credit", "chargeback", "closed"]
    assert balances(api_v2, p.account_id) == money(START)
    assert [e["to"] for e in event_data(api_v2, "dispute.stage_changed", dispute_id)] == [
        "closed",
        "chargeback",
        "submitted",
    ]
    assert event_data(api_v2, "dispute.closed", dispute_id)[0]["outcome"] == "won"
    assert verify_ledger() == LEDGER_OK


def test_lost_in_arbitration_reverses_the_provisional_credit(api_v2):
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]
    moved(api_v2, dispute_id, "submitted")
    answered(api_v2, dispute_id, "chargeback_accepted")

    represented = answered(api_v2, dispute_id, "representment_received")
    assert (represented["status"], *split(represented)) == ("representment", 0, 0, 0, PAID)
    assert internal_balance(DISPUTE_CLEARING, p.account_id) == -PAID
    moved(api_v2, dispute_id, "prearbitration")
    declined = answered(api_v2, dispute_id, "prearbitration_response", accepted=False)
    assert declined["status"] == "prearbitration"
    moved(api_v2, dispute_id, "arbitration")

    lost = answered(api_v2, dispute_id, "arbitration_ruling", inFavorOfIssuer=False)

    assert (lost["status"], lost["outcome"]) == ("closed", "lost")
    assert (lost["provisionalCredit"], *split(lost)) == (0, 0, PAID, 0, 0)
    assert balances(api_v2, p.account_id) == money(AFTER_PAYMENT)
    assert dispute_lines(api_v2, p) == [
        ("CashInc", PAID, "dispute"),
        ("CashDec", PAID, "dispute"),
    ]
    assert internal_balance(DISPUTE_CLEARING, p.account_id) == 0
    assert kinds(lost)[-4:] == [
        "arbitration_filed",
        "arbitration_lost",
        "provisional_credit_reversed",
        "closed",
    ]
    assert verify_ledger() == LEDGER_OK


def test_partly_won_the_issuer_writing_off_what_was_re_presented(api_v2):
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]
    moved(api_v2, dispute_id, "submitted")
    answered(api_v2, dispute_id, "chargeback_accepted")
    answered(api_v2, dispute_id, "representment_received", amount=1_000)

    closed = moved(api_v2, dispute_id, "closed", liability="issuer", reason="Goodwill")

    assert (closed["outcome"], closed["provisionalCredit"]) == ("partly_won", PAID)
    assert split(closed) == (PAID - 1_000, 0, 1_000, 0)
    assert balances(api_v2, p.account_id) == money(START)  # the cardholder keeps the credit
    assert internal_balance(LOSSES, p.account_id) == -1_000
    assert internal_balance(DISPUTE_CLEARING, p.account_id) == 0
    assert verify_ledger() == LEDGER_OK


def test_partly_won_the_cardholder_bearing_what_was_re_presented(api_v2):
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]
    moved(api_v2, dispute_id, "submitted")
    answered(api_v2, dispute_id, "chargeback_accepted")
    answered(api_v2, dispute_id, "representment_received", amount=1_000)
    moved(api_v2, dispute_id, "prearbitration")
    answered(api_v2, dispute_id, "prearbitration_response", accepted=False)

    closed = moved(api_v2, dispute_id, "closed", liability="cardholder")

    assert closed["outcome"] == "partly_won"
    assert (closed["provisionalCredit"], *split(closed)) == (
        PAID - 1_000,
        PAID - 1_000,
        1_000,
        0,
        0,
    )
    assert balances(api_v2, p.account_id) == money(START - 1_000)
    assert verify_ledger() == LEDGER_OK


def test_won_in_pre_arbitration(api_v2):
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]
    moved(api_v2, dispute_id, "submitted")
    answered(api_v2, dispute_id, "chargeback_accepted")
    answered(api_v2, dispute_id, "representment_received")
    moved(api_v2, dispute_id, "prearbitration")

    won = answered(api_v2, dispute_id, "prearbitration_response", accepted=True)

    assert (won["status"], won["outcome"], *split(won)) == ("closed", "won", PAID, 0, 0, 0)
    assert internal_balance(DISPUTE_CLEARING, p.account_id) == 0
    assert balances(api_v2, p.account_id) == money(START)
    assert verify_ledger() == LEDGER_OK


@pytest.mark.parametrize("outcome", ["withdrawn", "denied"])
def test_withdrawn_or_denied_after_submission_reverses_the_credit(api_v2, outcome):
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]
    moved(api_v2, dispute_id, "submitted")

    closed = moved(api_v2, dispute_id, "closed", outcome=outcome, reason="Cardholder found it")

    assert (closed["status"], closed["outcome"]) == ("closed", outcome)
    assert (closed["provisionalCredit"], *split(closed)) == (0, 0, PAID, 0, 0)
    assert balances(api_v2, p.account_id) == money(AFTER_PAYMENT)
    # What the cardholder bears is no longer disputed: the merchant may refund it.
    refund = api_v2.post(
        "/card-returns",
        {
            "cardId": p.card_id,
            "authorizationId": p.authorization_id,
            "amount": PAID,
            "currency": "EUR",
            "merchant": {
                "name": "Corner Shop",
                "mcc": "5411",
                "countryCode": "276",
                "channel": "pos",
            },
        },
    )
    assert refund.status_code == 201, refund.content
    assert verify_ledger() == LEDGER_OK


def test_a_draft_withdrawn_moves_no_money(api_v2):
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]

    closed = moved(api_v2, dispute_id, "closed", outcome="withdrawn")

    assert (closed["outcome"], *split(closed)) == ("withdrawn", 0, PAID, 0, 0)
    assert [step["amount"] for step in closed["steps"]] == [0, 0]
    assert balances(api_v2, p.account_id) == money(AFTER_PAYMENT)


def test_a_return_after_a_won_chargeback_never_credits_twice(api_v2):
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]
    moved(api_v2, dispute_id, "submitted")
    answered(api_v2, dispute_id, "chargeback_accepted")
    moved(api_v2, dispute_id, "closed")

    refund = api_v2.post(
        "/card-returns",
        {
            "cardId": p.card_id,
            "authorizationId": p.authorization_id,
            "amount": 1,
            "currency": "EUR",
            "merchant": {
                "name": "Corner Shop",
                "mcc": "5411",
                "countryCode": "276",
                "channel": "pos",
            },
        },
    )

    assert_error(refund, "v2", 422, "amount_exceeds_remaining", {"amount": 1, "remaining": 0})
    assert balances(api_v2, p.account_id) == money(START)


def test_several_partial_disputes_never_more_than_presented(api_v2):
    p = payment(api_v2)
    filed(api_v2, p.authorization_id, 1_000)
    filed(api_v2, p.authorization_id, 2_500)

    too_much = file(api_v2, p.authorization_id, 501)

    assert_error(too_much, "v2", 422, "amount_exceeds_remaining", {"amount": 501, "remaining": 500})
    assert filed(api_v2, p.authorization_id, 500)["amount"] == 500


# --- refusals
def test_only_a_presented_payment_can_be_disputed(api_v2):
    p = payment(api_v2)
    from tests.authorizations.helpers import approved

    pending = approved(api_v2, p.card_id, 100)

    assert_error(
        file(api_v2, pending["authorizationId"], 100),
        "v2",
        409,
        "invalid_state_transition",
        {"from": "pending", "to": "disputed"},
    )


@pytest.mark.parametrize(
    ("steps", "to", "fields", "status"),
    [
        ([], "prearbitration", {}, "draft"),
        ([], "arbitration", {}, "draft"),
        ([], "closed", {}, "draft"),
        (["submitted"], "submitted", {}, "submitted"),
        (["submitted"], "closed", {"liability": "issuer"}, "submitted"),
        (["submitted", "chargeback_accepted"], "closed", {"outcome": "withdrawn"}, "chargeback"),
        (["submitted", "chargeback_accepted"], "prearbitration", {}, "chargeback"),
        (
            ["submitted", "chargeback_accepted", "representment_received", "prearbitration"],
            "arbitration",
            {},
            "prearbitration",
        ),
    ],
)
def test_every_other_move_is_409_and_changes_nothing(api_v2, steps, to, fields, status):
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]
    for step in steps:
        if step in ("submitted", "prearbitration"):
            moved(api_v2, dispute_id, step)
        else:
            answered(api_v2, dispute_id, step)
    before = dispute_of(api_v2, dispute_id)

    refused = move(api_v2, dispute_id, to, **fields)

    assert_error(refused, "v2", 409, "invalid_state_transition", {"from": status, "to": to})
    assert dispute_of(api_v2, dispute_id) == before


@pytest.mark.parametrize(
    ("steps", "message", "fields"),
    [
        ([], "chargeback_accepted", {}),
        (["submitted"], "representment_received", {}),
        (["submitted"], "arbitration_ruling", {"inFavorOfIssuer": True}),
        (["submitted", "chargeback_accepted"], "chargeback_accepted", {}),
        (["submitted", "chargeback_accepted"], "prearbitration_response", {"accepted": True}),
    ],
)
def test_a_network_message_out_of_its_stage_is_409(api_v2, steps, message, fields):
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]
    for step in steps:
        if step == "submitted":
            moved(api_v2, dispute_id, step)
        else:
            answered(api_v2, dispute_id, step)
    before = dispute_of(api_v2, dispute_id)

    refused = network(api_v2, dispute_id, message, **fields)

    assert_error(
        refused, "v2", 409, "invalid_state_transition", {"from": before["status"], "to": message}
    )
    assert dispute_of(api_v2, dispute_id) == before


def test_a_pre_arbitration_answered_once(api_v2):
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]
    moved(api_v2, dispute_id, "submitted")
    answered(api_v2, dispute_id, "chargeback_accepted")
    answered(api_v2, dispute_id, "representment_received")
    moved(api_v2, dispute_id, "prearbitration")
    answered(api_v2, dispute_id, "prearbitration_response", accepted=False)

    again = network(api_v2, dispute_id, "prearbitration_response", accepted=True)

    assert_error(
        again,
        "v2",
        409,
        "invalid_state_transition",
        {"from": "prearbitration", "to": "prearbitration_response"},
    )


def test_a_representment_beyond_what_was_charged_back_is_refused(api_v2):
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]
    moved(api_v2, dispute_id, "submitted")
    answered(api_v2, dispute_id, "chargeback_accepted")

    refused = network(api_v2, dispute_id, "representment_received", amount=PAID + 1)

    assert_error(
        refused, "v2", 422, "amount_exceeds_remaining", {"amount": PAID + 1, "remaining": PAID}
    )
    assert dispute_of(api_v2, dispute_id)["status"] == "chargeback"


def test_evidence_and_note_only_while_a_draft(api_v2):
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]
    changed = api_v2.patch(
        f"/disputes/{dispute_id}",
        {"evidence": {"files": [{"name": "receipt.pdf", "reference": "doc-991"}]}, "note": "x"},
    )
    assert changed.status_code == 200, changed.content
    assert changed.json()["evidence"] == {
        "files": [{"name": "receipt.pdf", "reference": "doc-991"}]
    }
    moved(api_v2, dispute_id, "submitted")

    late = api_v2.patch(f"/disputes/{dispute_id}", {"note": "y"})
    assert_error(late, "v2", 409, "invalid_state_transition", {"from": "submitted", "to": "draft"})
    tagged = api_v2.patch(f"/disputes/{dispute_id}", {"metadata": {"case": "B-2"}})
    assert tagged.json()["metadata"] == {"case": "B-2"}


def test_a_closing_with_the_loss_accepted_names_who_bears_it(api_v2):
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]
    moved(api_v2, dispute_id, "submitted")
    answered(api_v2, dispute_id, "chargeback_accepted")
    answered(api_v2, dispute_id, "representment_received")

    assert_error(
        move(api_v2, dispute_id, "closed"),
        "v2",
        400,
        "validation_error",
        {"liability": "Who bears what is open: one of ['cardholder', 'issuer']."},
    )


def test_v1_has_no_disputes(api_v1):
    assert api_v1.get("/disputes").status_code == 404
