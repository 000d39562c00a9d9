"""Concurrent disputes over HTTP (issue 32 item 7; docs/disputes.md, "What may be disputed" and
"Locks"): real threads, each with its own client and database connection, released together by
a barrier. The authorization's row serializes disputes and returns of one presentment, and the
dispute's row serializes the network's messages about it: whatever the order, never more than
was presented is disputed or returned, and a dispute's money moves once per step."""

import pytest

from accounts.models import Account, StatementLine
from authorizations.models import Authorization
from disputes.models import Dispute, DisputeStep
from tests.accounts.api.helpers import assert_error, balances, created, money
from tests.authorizations.helpers import MERCHANT, START
from tests.authorizations.test_concurrency import LEDGER_OK, verify_ledger
from tests.conftest import Api
from tests.transfers.test_concurrency_http import run_threads

from .helpers import PAID, file, filed, internal_balance, moved, network, payment

pytestmark = pytest.mark.django_db(transaction=True)

DISPUTE_CLEARING = Account.InternalCode.DISPUTE_CLEARING
CARD_CLEARING = Account.InternalCode.CARD_CLEARING
THREADS = 6
SHARE = PAID * 60 // 100  # 2,400 of 4,000: two of them never fit


def counted(authorization_id: str) -> tuple[int, int, int]:
    """(presented, returned, disputed) on the authorization's row."""
    authorization = Authorization.objects.get(pk=authorization_id)
    return (
        authorization.presented_amount,
        authorization.returned_amount,
        authorization.disputed_amount,
    )


def test_concurrent_disputes_of_one_payment_never_pass_what_was_presented(api_v2, key):
    p = payment(api_v2)

    responses = run_threads(
        THREADS, lambda index: file(Api("v2", key[1]), p.authorization_id, SHARE)
    )

    won = [r for r in responses if r.status_code == 201]
    refused = [r for r in responses if r.status_code != 201]
    assert len(won) == 1, [r.content for r in responses]
    assert len(refused) == THREADS - 1
    for response in refused:
        assert_error(
            response,
            "v2",
            422,
            "amount_exceeds_remaining",
            {"amount": SHARE, "remaining": PAID - SHARE},
        )
    body = created(won[0], "v2")
    assert (body["status"], body["amount"], body["remaining"]) == ("draft", SHARE, SHARE)
    assert list(
        Dispute.objects.filter(authorization_id=p.authorization_id).values_list("pk", "amount")
    ) == [(body["disputeId"], SHARE)]
    assert counted(p.authorization_id) == (PAID, 0, SHARE)
    assert DisputeStep.objects.filter(dispute_id=body["disputeId"]).count() == 1
    assert balances(api_v2, p.account_id) == money(START - PAID)
    # What is left is still open to a dispute of exactly that much.
    assert filed(api_v2, p.authorization_id, PAID - SHARE)["amount"] == PAID - SHARE
    assert counted(p.authorization_id) == (PAID, 0, PAID)
    assert verify_ledger() == LEDGER_OK


ROUNDS = 3  # a dispute and a return racing, on a payment each


def test_a_dispute_and_a_return_racing_for_the_whole_payment_one_wins(api_v2, key):
    payments = [payment(api_v2) for _ in range(ROUNDS)]

    def race(index):
        client = Api("v2", key[1])
        p = payments[index // 2]
        if index % 2 == 0:
            return "dispute", file(client, p.authorization_id, PAID)
        return "return", client.post(
            "/card-returns",
            {
                "cardId": p.card_id,
                "authorizationId": p.authorization_id,
                "amount": PAID,
                "currency": "EUR",
                "merchant": MERCHANT,
            },
        )

    results = run_threads(2 * ROUNDS, race)

    for round_, p in enumerate(payments):
        outcomes = dict(results[2 * round_ : 2 * round_ + 2])
        passed = [kind for kind, response in outcomes.items() if response.status_code == 201]
        assert len(passed) == 1, {k: r.content for k, r in outcomes.items()}
        [winner] = passed
        loser = "return" if winner == "dispute" else "dispute"
        assert_error(
            outcomes[loser], "v2", 422, "amount_exceeds_remaining", {"amount": PAID, "remaining": 0}
        )
        disputes = Dispute.objects.filter(authorization_id=p.authorization_id)
        returns = StatementLine.objects.filter(
            account_id=p.account_id, type=StatementLine.Type.RETURN
        )
        presented, returned, disputed = counted(p.authorization_id)
        assert returned + disputed <= presented
        if winner == "dispute":
            assert (presented, returned, disputed) == (PAID, 0, PAID)
            assert (disputes.count(), returns.count()) == (1, 0)
            assert balances(api_v2, p.account_id) == money(START - PAID)
        else:
            assert (presented, returned, disputed) == (PAID, PAID, 0)
            assert (disputes.count(), returns.count()) == (0, 1)
            assert balances(api_v2, p.account_id) == money(START)
    assert verify_ledger() == LEDGER_OK


MESSENGERS = 4  # "two threads" at least: one message, several deliveries


def test_one_network_message_sent_concurrently_moves_the_money_once(api_v2, key):
    p = payment(api_v2)
    dispute_id = filed(api_v2, p.authorization_id)["disputeId"]
    moved(api_v2, dispute_id, "submitted")
    card_clearing = internal_balance(CARD_CLEARING, p.account_id)
    assert internal_balance(DISPUTE_CLEARING, p.account_id) == -PAID

    responses = run_threads(
        MESSENGERS,
        lambda index: network(Api("v2", key[1]), dispute_id, "chargeback_accepted"),
    )

    won = [r for r in responses if r.status_code == 201]
    assert len(won) == 1, [r.content for r in responses]
    for response in responses:
        if response is not won[0]:
            assert_error(
                response,
                "v2",
                409,
                "invalid_state_transition",
                {"from": "chargeback", "to": "chargeback_accepted"},
            )
    body = created(won[0], "v2")
    assert (body["status"], body["provisionalCredit"], body["recovered"], body["remaining"]) == (
        "chargeback",
        PAID,
        PAID,
        0,
    )
    assert list(
        DisputeStep.objects.filter(dispute_id=dispute_id, kind="chargeback").values_list(
            "amount", flat=True
        )
    ) == [PAID]
    assert internal_balance(DISPUTE_CLEARING, p.account_id) == 0
    assert internal_balance(CARD_CLEARING, p.account_id) == card_clearing - PAID
    assert balances(api_v2, p.account_id) == money(START)
    assert verify_ledger() == LEDGER_OK
