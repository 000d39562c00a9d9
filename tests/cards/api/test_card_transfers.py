"""Card and PAN transfers over HTTP, in both versions: a card (by `cardId` or `pan`) names its
account, the sending card must be active and within its limits, a receiving card must be live;
the card shows on the transfer and on the statement lines. Balances are checked exactly
wherever money moves, or must not."""

import threading

import pytest
from django.db import connection
from stdnum import luhn

from accounts.verification import ledger_breaches
from institutions import scopes as api_scopes
from tests.conftest import Api
from tests.factories import issue_key
from transfers.models import Transfer

from .helpers import (
    CREATED,
    GHS_ACCOUNT,
    PREPAID_VIRTUAL,
    account,
    account_number,
    assert_error,
    assert_validation_error,
    backdate,
    balances,
    body_of,
    card_in,
    created,
    customer,
    issue,
    money,
    new_key,
    secrets_of,
    sensitive_api,
    set_limits,
    set_status,
    statement,
    usage_of,
)

START = 100_000


@pytest.fixture
def key(institution):
    """Every scope: PAN transfers need `cards:sensitive` (refused without it in test_scopes.py)."""
    return issue_key(institution, scopes=api_scopes.ALL)


class World:
    """Ada's funded prepaid account with an active card; Bob's empty account with one too."""

    def __init__(self, api, institution):
        self.api = api
        self.sensitive = sensitive_api(api, institution)
        self.ada = customer(api)
        self.bob = customer(api, "Bob", "Builder")
        self.ada_acc = account(api, self.ada, load=START)
        self.bob_acc = account(api, self.bob)
        self.card = issue(api, self.ada_acc, self.ada, status="active")["cardId"]
        self.bob_card = issue(api, self.bob_acc, self.bob, status="active")["cardId"]

    def pan(self, card_id):
        return secrets_of(self.sensitive, card_id)["pan"]

    def send(self, source, destination, amount, currency="EUR", **kwargs):
        return self.api.post(
            "/transfers",
            {"source": source, "destination": destination, "amount": amount, "currency": currency},
            **kwargs,
        )

    def assert_balances(self, ada, bob):
        assert balances(self.api, self.ada_acc) == money(ada)
        assert balances(self.api, self.bob_acc) == money(bob)


@pytest.fixture
def world(api, institution):
    return World(api, institution)


def transfer_ok(response, version) -> dict:
    assert response.status_code == CREATED[version], response.content
    return created(response, version)


def test_by_card_id_to_an_account(api, world):
    body = transfer_ok(
        world.send({"cardId": world.card}, {"accountId": world.bob_acc}, 2_500), api.version
    )
    assert body["source"] == {"accountId": world.ada_acc, "cardId": world.card}
    assert body["destination"] == {"accountId": world.bob_acc, "cardId": None}
    assert (body["amount"], body["currency"], body["status"], body["reversedAmount"]) == (
        2_500,
        "EUR",
        "posted",
        0,
    )
    world.assert_balances(START - 2_500, 2_500)
    # The statement lines carry the card on the side that named one.
    [debit] = [line for line in statement(api, world.ada_acc) if line["type"] == "CashDec"]
    assert (debit["cardId"], debit["transferId"], debit["amount"], debit["direction"]) == (
        world.card,
        body["transferId"],
        2_500,
        "debit",
    )
    assert debit["settlementStatus"] == "Presentment"
    [credit] = statement(api, world.bob_acc)
    assert (credit["type"], credit["cardId"], credit["transferId"]) == (
        "CashInc",
        None,
        body["transferId"],
    )
    card_lines = [
        line["transactionId"]
        for line in statement(api, world.ada_acc)
        if line["cardId"] == world.card
    ]
    assert card_lines == [debit["transactionId"]]
    read = body_of(api.get(f"/transfers/{body['transferId']}"), api.version)
    assert (read["source"], read["destination"]) == (body["source"], body["destination"])


def test_every_mix_of_endpoints(api, world):
    ada_pan, bob_pan = world.pan(world.card), world.pan(world.bob_card)
    ada_number = account_number(api, world.ada_acc)
    bob_number = account_number(api, world.bob_acc)
    # (source, destination, amount, source card, destination card, direction ada->bob?)
    cases = [
        ({"pan": ada_pan}, {"accountNumber": bob_number}, 1_000, world.card, None, True),
        (
            {"cardId": world.card},
            {"cardId": world.bob_card},
            2_000,
            world.card,
            world.bob_card,
            True,
        ),
        ({"pan": ada_pan}, {"pan": bob_pan}, 3_000, world.card, world.bob_card, True),
        ({"accountId": world.ada_acc}, {"pan": bob_pan}, 4_000, None, world.bob_card, True),
        (
            {"accountNumber": ada_number},
            {"cardId": world.bob_card},
            5_000,
            None,
            world.bob_card,
            True,
        ),
        ({"cardId": world.bob_card}, {"pan": ada_pan}, 500, world.bob_card, world.card, False),
        ({"pan": bob_pan}, {"accountId": world.ada_acc}, 700, world.bob_card, None, False),
    ]
    ada, bob = START, 0
    for source, destination, amount, source_card, destination_card, forward in cases:
        body = transfer_ok(world.send(source, destination, amount), api.version)
        source_acc, destination_acc = (
            (world.ada_acc, world.bob_acc) if forward else (world.bob_acc, world.ada_acc)
        )
        assert body["source"] == {"accountId": source_acc, "cardId": source_card}, source
        assert body["destination"] == {"accountId": destination_acc, "cardId": destination_card}, (
            destination
        )
        ada, bob = (ada - amount, bob + amount) if forward else (ada + amount, bob - amount)
        world.assert_balances(ada, bob)
        [line] = [
            line
            for line in statement(api, destination_acc)
            if line["transferId"] == body["transferId"]
        ]
        assert (line["type"], line["cardId"]) == ("CashInc", destination_card)
        [line] = [
            line for line in statement(api, source_acc) if line["transferId"] == body["transferId"]
        ]
        assert (line["type"], line["cardId"]) == ("CashDec", source_card)
    assert usage_of(api, world.card)["daily"] == 6_000
    assert usage_of(api, world.bob_card)["daily"] == 1_200


def test_a_card_not_active_cannot_send(api, world):
    for status in ("inactive", "suspended", "closed", "lost", "stolen", "expired"):
        card = card_in(api, status, world.ada_acc, world.ada)["cardId"]
        sources = [{"cardId": card}]
        if status in ("inactive", "suspended"):  # a live card's PAN is still readable
            sources.append({"pan": world.pan(card)})
        for source in sources:
            response = world.send(source, {"accountId": world.bob_acc}, 100)
            assert_error(
                response, api.version, 422, "card_not_active", {"cardId": card, "status": status}
            )
        assert usage_of(api, card)["daily"] == 0
    world.assert_balances(START, 0)
    assert Transfer.objects.count() == 0


def test_a_closed_cards_pan_cannot_send(api, world):
    pan = world.pan(world.card)
    assert set_status(api, world.card, "closed").status_code == 200
    assert_error(
        world.send({"pan": pan}, {"accountId": world.bob_acc}, 100),
        api.version,
        422,
        "card_not_active",
        {"cardId": world.card, "status": "closed"},
    )
    world.assert_balances(START, 0)


def test_a_card_past_its_expiry_cannot_send(api, world):
    backdate(world.card)
    assert_error(
        world.send({"cardId": world.card}, {"accountId": world.bob_acc}, 100),
        api.version,
        422,
        "card_not_active",
        {"cardId": world.card, "status": "active", "expired": True},
        message="The card is past its expiry date.",
    )
    world.assert_balances(START, 0)


def test_a_dead_card_cannot_receive(api, world):
    for status in ("closed", "lost", "stolen", "expired"):
        card = card_in(api, status, world.bob_acc, world.bob)["cardId"]
        assert_error(
            world.send({"accountId": world.ada_acc}, {"cardId": card}, 100),
            api.version,
            422,
            "card_not_active",
            {"cardId": card, "status": status},
        )
    world.assert_balances(START, 0)


def test_a_live_card_not_active_can_receive(api, world):
    received = 0
    for status in ("inactive", "suspended"):
        card = card_in(api, status, world.bob_acc, world.bob)["cardId"]
        body = transfer_ok(world.send({"cardId": world.card}, {"cardId": card}, 300), api.version)
        assert body["destination"] == {"accountId": world.bob_acc, "cardId": card}
        received += 300
        world.assert_balances(START - received, received)


def test_per_transaction_limit_at_the_boundary(api, world):
    set_limits(api, world.card, perTransaction=1_000)
    assert_error(
        world.send({"cardId": world.card}, {"accountId": world.bob_acc}, 1_001),
        api.version,
        422,
        "limit_exceeded",
        {"limit": "perTransaction", "value": 1_000, "used": 0, "amount": 1_001, "remaining": 1_000},
    )
    world.assert_balances(START, 0)
    transfer_ok(
        world.send({"cardId": world.card}, {"accountId": world.bob_acc}, 1_000), api.version
    )
    world.assert_balances(START - 1_000, 1_000)
    # Paying into the card's account is not limited by it.
    transfer_ok(
        world.send({"accountId": world.bob_acc}, {"cardId": world.card}, 1_000), api.version
    )
    world.assert_balances(START, 0)
    # A zero limit blocks every payment.
    set_limits(api, world.card, perTransaction=0)
    assert_error(
        world.send({"cardId": world.card}, {"accountId": world.bob_acc}, 1),
        api.version,
        422,
        "limit_exceeded",
        {"limit": "perTransaction", "value": 0, "used": 0, "amount": 1, "remaining": 0},
    )
    world.assert_balances(START, 0)


def test_daily_limit_at_the_boundary(api, world):
    set_limits(api, world.card, perTransaction=1_000, daily=2_500, dailyCash=0)
    for amount in (1_000, 1_000):
        transfer_ok(
            world.send({"cardId": world.card}, {"accountId": world.bob_acc}, amount), api.version
        )
    assert_error(
        world.send({"cardId": world.card}, {"accountId": world.bob_acc}, 501),
        api.version,
        422,
        "limit_exceeded",
        {"limit": "daily", "value": 2_500, "used": 2_000, "amount": 501, "remaining": 500},
    )
    world.assert_balances(START - 2_000, 2_000)
    transfer_ok(
        world.send({"pan": world.pan(world.card)}, {"accountId": world.bob_acc}, 500), api.version
    )
    world.assert_balances(START - 2_500, 2_500)
    assert_error(
        world.send({"cardId": world.card}, {"accountId": world.bob_acc}, 1),
        api.version,
        422,
        "limit_exceeded",
        {"limit": "daily", "value": 2_500, "used": 2_500, "amount": 1, "remaining": 0},
    )
    world.assert_balances(START - 2_500, 2_500)
    assert usage_of(api, world.card)["daily"] == 2_500
    # The account itself is not limited by its card.
    transfer_ok(
        world.send({"accountId": world.ada_acc}, {"accountId": world.bob_acc}, 5_000), api.version
    )
    world.assert_balances(START - 7_500, 7_500)
    assert usage_of(api, world.card)["daily"] == 2_500


def test_insufficient_funds_by_card_counts_nothing(api, world):
    assert_error(
        world.send({"cardId": world.bob_card}, {"accountId": world.ada_acc}, 1),
        api.version,
        422,
        "insufficient_funds",
        {"accountId": world.bob_acc, "available": 0, "amount": 1},
    )
    assert usage_of(api, world.bob_card)["daily"] == 0
    world.assert_balances(START, 0)


def test_a_frozen_account_cannot_send_by_card(api, world):
    assert api.patch(f"/accounts/{world.ada_acc}", {"status": "frozen"}).status_code == 200
    assert_error(
        world.send({"cardId": world.card}, {"accountId": world.bob_acc}, 100),
        api.version,
        422,
        "account_not_active",
        {"accountId": world.ada_acc, "status": "frozen"},
    )
    assert usage_of(api, world.card)["daily"] == 0
    world.assert_balances(START, 0)


def test_a_reversed_card_transfer_shows_the_card_on_its_lines(api, world):
    body = transfer_ok(
        world.send({"cardId": world.card}, {"cardId": world.bob_card}, 2_000), api.version
    )
    response = api.post(f"/transfers/{body['transferId']}/reversals", {"amount": 500})
    assert response.status_code == CREATED[api.version], response.content
    world.assert_balances(START - 1_500, 1_500)
    lines = {
        (line["type"], line["amount"], line["cardId"])
        for line in statement(api, world.ada_acc)
        if line["transferId"] == body["transferId"]
    }
    assert lines == {("CashDec", 2_000, world.card), ("CashInc", 500, world.card)}
    lines = {
        (line["type"], line["amount"], line["cardId"])
        for line in statement(api, world.bob_acc)
        if line["transferId"] == body["transferId"]
    }
    assert lines == {("CashInc", 2_000, world.bob_card), ("CashDec", 500, world.bob_card)}


def test_invalid_and_foreign_pans(api, world, other_api, other_institution):
    pan = world.pan(world.card)
    bad = pan[:-1] + str((int(pan[-1]) + 1) % 10)
    assert not luhn.is_valid(bad)
    message = "Must be 12 to 19 digits with a valid check digit."
    assert_validation_error(
        world.send({"pan": bad}, {"accountId": world.bob_acc}, 100),
        api.version,
        {"source.pan": message},
    )
    assert_validation_error(
        world.send({"accountId": world.bob_acc}, {"pan": bad}, 100),
        api.version,
        {"destination.pan": message},
    )
    for wrong in ("4000 0200 0000 0000", "40000200000000000000", 4000020000000006, "abc"):
        response = world.send({"pan": wrong}, {"accountId": world.bob_acc}, 100)
        assert response.status_code == 400, (wrong, response.content)
    # A valid PAN that no card of this institution holds: another institution's, or nobody's.
    theirs = customer(other_api, "Eve")
    their_card = issue(other_api, account(other_api, theirs, load=1_000), theirs, status="active")[
        "cardId"
    ]
    their_pan = secrets_of(sensitive_api(other_api, other_institution), their_card)["pan"]
    nobody = "400002123456789" + luhn.calc_check_digit("400002123456789")
    for foreign in (their_pan, nobody):
        for body in (
            ({"pan": foreign}, {"accountId": world.bob_acc}),
            ({"accountId": world.ada_acc}, {"pan": foreign}),
        ):
            assert_error(
                world.send(*body, 100),
                api.version,
                404,
                "not_found",
                message="No card with this PAN.",
            )
    for body in (
        ({"cardId": their_card}, {"accountId": world.bob_acc}),
        ({"accountId": world.ada_acc}, {"cardId": their_card}),
    ):
        assert_error(
            world.send(*body, 100), api.version, 404, "not_found", message="No card with this id."
        )
    world.assert_balances(START, 0)
    assert balances(other_api, account_of(other_api, their_card)) == money(1_000)


def account_of(api, card_id):
    return body_of(api.get(f"/cards/{card_id}"), api.version)["accountId"]


def test_malformed_endpoints(api, world):
    one_of = "Give exactly one of accountId, accountNumber, cardId or pan."
    cases = [
        (
            {"cardId": world.card, "accountId": world.ada_acc},
            {"accountId": world.bob_acc},
            {"source": one_of},
        ),
        ({}, {"accountId": world.bob_acc}, {"source": one_of}),
        (
            {"cardId": world.card},
            {"cardId": world.bob_card, "pan": world.pan(world.bob_card)},
            {"destination": one_of},
        ),
        ({"cardId": 5}, {"accountId": world.bob_acc}, {"source.cardId": "Not a valid string."}),
        # The card's own account on the other side.
        (
            {"cardId": world.card},
            {"accountId": world.ada_acc},
            {"destination": "Must be another account than the source's."},
        ),
        (
            {"cardId": world.card},
            {"pan": world.pan(world.card)},
            {"destination": "Must be another account than the source's."},
        ),
    ]
    for source, destination, details in cases:
        assert_validation_error(world.send(source, destination, 100), api.version, details)
    world.assert_balances(START, 0)


def test_currency_of_a_card_account(api, world):
    cedi = account(api, world.ada, GHS_ACCOUNT, load=5_000)
    card = issue(api, cedi, world.ada, PREPAID_VIRTUAL, status="active")["cardId"]
    assert_error(
        world.send({"cardId": card}, {"accountId": world.bob_acc}, 100),
        api.version,
        422,
        "currency_mismatch",
        {"accountId": cedi, "accountCurrency": "GHS", "currency": "EUR"},
    )
    assert_error(
        world.send({"cardId": card}, {"accountId": world.bob_acc}, 100, currency="GHS"),
        api.version,
        422,
        "currency_mismatch",
        {"accountId": world.bob_acc, "accountCurrency": "EUR", "currency": "GHS"},
    )
    assert balances(api, cedi) == money(5_000)
    world.assert_balances(START, 0)
    assert usage_of(api, card)["daily"] == 0


def test_a_replayed_card_transfer_moves_and_counts_once(api, world):
    key = new_key()
    first = world.send(
        {"cardId": world.card}, {"accountId": world.bob_acc}, 1_500, idempotency_key=key
    )
    replay = world.send(
        {"cardId": world.card}, {"accountId": world.bob_acc}, 1_500, idempotency_key=key
    )
    assert first.status_code == CREATED[api.version]
    assert (replay.status_code, replay.content) == (first.status_code, first.content)
    world.assert_balances(START - 1_500, 1_500)
    assert usage_of(api, world.card)["daily"] == 1_500
    assert Transfer.objects.count() == 1


# --- concurrency: real threads, each with its own client and database connection
DAILY = 5_000


@pytest.mark.django_db(transaction=True)
def test_concurrent_card_payments_never_exceed_the_daily_limit(api, key, institution):
    world = World(api, institution)
    set_limits(api, world.card, perTransaction=1_500, daily=DAILY, dailyCash=0)
    pan = world.pan(world.card)
    secret, version = key[1], api.version
    threads = 8
    amounts = [
        [600 + 100 * ((index * 3 + step) % 8) for step in range(2)] for index in range(threads)
    ]

    barrier = threading.Barrier(threads)
    results: list = [None] * threads
    errors: list = []

    def run(index):
        try:
            client = Api(version, secret)
            barrier.wait(timeout=10)
            # Half the threads name the card by id, half by PAN.
            source = {"cardId": world.card} if index % 2 else {"pan": pan}
            results[index] = [
                (
                    amount,
                    client.post(
                        "/transfers",
                        {
                            "source": source,
                            "destination": {"accountId": world.bob_acc},
                            "amount": amount,
                            "currency": "EUR",
                        },
                    ),
                )
                for amount in amounts[index]
            ]
        except BaseException as error:  # noqa: BLE001 - re-raised below
            errors.append(error)
        finally:
            connection.close()

    workers = [threading.Thread(target=run, args=(index,)) for index in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert not any(worker.is_alive() for worker in workers), "a thread is stuck"
    if errors:
        raise errors[0]

    posted, refused = [], []
    for amount, response in (outcome for result in results for outcome in result):
        if response.status_code == CREATED[version]:
            posted.append(amount)
        else:
            error = response.json()["error"] if version == "v1" else response.json()
            assert (response.status_code, error["code"]) == (422, "limit_exceeded"), error
            details = error["details"]
            assert details["limit"] == "daily"
            assert details["used"] + amount > DAILY
            refused.append(amount)
    spent = sum(posted)
    assert posted and refused
    assert spent <= DAILY
    # Every refusal was right: even at the end there was no room for it.
    assert all(spent + amount > DAILY for amount in refused)
    assert usage_of(api, world.card)["daily"] == spent
    world.assert_balances(START - spent, spent)
    assert sorted(Transfer.objects.values_list("amount", flat=True)) == sorted(posted)
    assert ledger_breaches() == []
