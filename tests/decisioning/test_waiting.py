"""While the program thinks (issue 31 items 2, 6, 7; docs/decisioning.md): nothing of TX is
held. Real threads, each with its own client and database connection, against a real program
on loopback: a transfer out of the card's own account completes before the program answers; a
retry of the same Idempotency-Key answers 409 `idempotency_key_in_use` meanwhile and replays the
first answer afterwards; two authorizations of one card racing its limit are decided one after
the other in TX's first transaction (the usage counted before the call), so the second is
declined by TX and never asked."""

import uuid

import pytest

from authorizations.models import Authorization
from tests.accounts.api.helpers import ANY, funded_account, transfer
from tests.authorizations.helpers import (
    MERCHANT,
    START,
    assert_error,
    authorization_of,
    authorize,
    balances,
    created,
    funded,
    money,
    present,
    reverse,
    usage,
)
from tests.cards.api.helpers import set_limits
from tests.conftest import Api
from tests.decisioning.helpers import APPROVE, InThread, Program, create_endpoint
from tests.transfers.test_concurrency_http import run_threads

pytestmark = pytest.mark.django_db(transaction=True)

AMOUNT = 1_500
THINKING = 1.5  # seconds the program takes (within timeoutMs 3000)


@pytest.fixture
def program():
    program = Program(answer=APPROVE, delay=THINKING, watch_transactions=True)
    yield program
    program.stop()


def awaiting(card_id: str) -> Authorization:
    [authorization] = Authorization.objects.filter(card_id=card_id)
    return authorization


def test_a_transfer_out_of_the_account_completes_while_the_program_thinks(api_v2, program):
    create_endpoint(api_v2, url=program.url, timeoutMs=3000)
    f = funded(api_v2)
    other = funded_account(api_v2, 0)["accountId"]

    pending = InThread(api_v2, lambda client: authorize(client, f.card_id, AMOUNT))
    assert program.called.wait(10), "the program was never called"

    # The program is thinking: the card's account is held for the authorization, not locked.
    response = transfer(api_v2, f.account_id, other, 2_000, description="rent")
    moved = created(response, "v2")
    assert pending.alive() and len(program.calls) == 1
    assert awaiting(f.card_id).decision == Authorization.Decision.AWAITING_PROGRAM
    assert moved["status"] == "posted"
    assert balances(api_v2, f.account_id) == money(START - 2_000, AMOUNT)
    assert balances(api_v2, other) == money(2_000)

    body = created(pending.result(), "v2")
    assert (body["approved"], body["decidedBy"], body["program"]["status"]) == (
        True,
        "program",
        200,
    )
    assert body["program"]["latencyMs"] >= THINKING * 1000
    [call] = program.calls
    assert call.open_transactions == 0
    # What the program was told is what was left when TX asked: before the transfer.
    assert call.payload["account"]["available"] == START - AMOUNT
    assert balances(api_v2, f.account_id) == money(START - 2_000, AMOUNT)


def test_a_retry_while_the_program_thinks_is_in_use_then_replays(api_v2, program):
    create_endpoint(api_v2, url=program.url, timeoutMs=3000)
    f = funded(api_v2)
    key = str(uuid.uuid4())

    first = InThread(
        api_v2, lambda client: authorize(client, f.card_id, AMOUNT, idempotency_key=key)
    )
    assert program.called.wait(10), "the program was never called"

    meanwhile = authorize(api_v2, f.card_id, AMOUNT, idempotency_key=key)
    assert_error(meanwhile, "v2", 409, "idempotency_key_in_use")
    assert meanwhile["Retry-After"] == "1"
    # Nor can the network clear or reverse what is not decided yet.
    authorization_id = awaiting(f.card_id).pk
    for refused in (present(api_v2, authorization_id), reverse(api_v2, authorization_id)):
        error = assert_error(refused, "v2", 409, "invalid_state_transition", details=ANY)
        assert error["details"]["from"] == "awaiting_program"
    assert first.alive()
    # Another body under the same key is still refused as another request.
    reused = authorize(api_v2, f.card_id, AMOUNT + 1, idempotency_key=key)
    assert_error(reused, "v2", 422, "idempotency_key_reused")

    answered = first.result()
    body = created(answered, "v2")
    assert (body["approved"], body["decidedBy"]) == (True, "program")

    again = authorize(api_v2, f.card_id, AMOUNT, idempotency_key=key)
    assert again.status_code == 201
    assert again.content == answered.content
    assert again["Idempotent-Replayed"] == "true"
    assert len(program.calls) == 1
    assert Authorization.objects.filter(card_id=f.card_id).count() == 1
    assert balances(api_v2, f.account_id) == money(START, AMOUNT)


def test_two_authorizations_racing_the_limit_one_is_asked(api_v2):
    program = Program(answer=APPROVE, delay=0.3)
    try:
        create_endpoint(api_v2, url=program.url)
        f = funded(api_v2)
        set_limits(api_v2, f.card_id, perTransaction=AMOUNT, daily=AMOUNT, dailyCash=0)

        def work(index):
            client = Api("v2", api_v2.key)
            body = {"cardId": f.card_id, "amount": AMOUNT, "currency": "EUR", "type": "Goods"}
            return created(
                client.post("/card-authorizations", {**body, "merchant": MERCHANT}), "v2"
            )

        decisions = run_threads(2, work)
    finally:
        program.stop()

    [approved] = [d for d in decisions if d["approved"]]
    [declined] = [d for d in decisions if not d["approved"]]
    assert (approved["decidedBy"], approved["program"]["answer"]) == ("program", {"approved": True})
    assert (declined["declineCode"], declined["decidedBy"], declined["program"]) == (
        "limit_exceeded",
        "tx",
        None,
    )
    assert declined["declineDetails"]["limit"] == "daily"
    assert declined["holdId"] is None
    [call] = program.calls
    assert call.payload["authorization"]["authorizationId"] == approved["authorizationId"]
    assert usage(api_v2, f.card_id) == (AMOUNT, 0, AMOUNT)
    assert balances(api_v2, f.account_id) == money(START, AMOUNT)
    assert authorization_of(api_v2, approved["authorizationId"])["status"] == "pending"
