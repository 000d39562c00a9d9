"""Transfer batches under real concurrency (docs/transfer-batches.md, "Locks"): real threads, each
with its own client, database connection and transactions. Batches over the same accounts in
opposite orders, and single transfers among them, queue on their first common row instead of
deadlocking: every request posts, the balances are exact and the ledger holds."""

import json
import time
import uuid

import pytest
from django.db import connection
from django.test import Client

from accounts.models import StatementLine
from accounts.verification import ledger_breaches
from events.models import Event
from tests.accounts.api.helpers import balances, funded_account, money
from tests.transfers.test_concurrency_http import post_transfer, run_threads, transfer_body
from transfers.models import Transfer, TransferBatch

pytestmark = pytest.mark.django_db(transaction=True)

START = 1_000_000  # enough that no item can run short, whatever the interleaving
ROUNDS = 4
SINGLES = 12


def post_batch(client: Client, secret: str, mode: str, items: list):
    return client.post(
        "/TX/v2/transfer-batches",
        data=json.dumps({"mode": mode, "transfers": items}),
        content_type="application/json",
        headers={"x-api-key": secret, "Idempotency-Key": str(uuid.uuid4())},
    )


def deadlocks() -> int:
    """PostgreSQL's count of deadlocks detected in this (test) database so far."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
        return cursor.fetchone()[0]


def test_batches_in_opposite_orders_and_single_transfers_do_not_deadlock(api_v2, key):
    secret = key[1]
    a, b, c = (funded_account(api_v2, START)["accountId"] for _ in range(3))
    forward = [
        (source, destination, 100 + 10 * step + turn)
        for step in range(3)
        for turn, (source, destination) in enumerate(((a, b), (b, c), (c, a)))
    ]
    # The other way round: the last pair first, each pair reversed.
    backward = [(destination, source, amount + 1) for source, destination, amount in forward[::-1]]
    batches = {
        0: ("atomic", forward),
        1: ("atomic", backward),
        2: ("independent", forward),
        3: ("independent", backward),
    }
    pairs = [(a, b), (c, b), (b, a), (a, c), (b, c), (c, a)]
    deadlocks_before = deadlocks()

    def work(index):
        client = Client(REMOTE_ADDR="127.0.0.1")
        done = []
        if index in batches:
            mode, moves = batches[index]
            items = [transfer_body(*move) for move in moves]
            for _ in range(ROUNDS):
                done.append(("batch", moves, post_batch(client, secret, mode, items)))
        else:
            for step in range(SINGLES):
                source, destination = pairs[(index + step) % len(pairs)]
                move = (source, destination, 7 + step)
                response = post_transfer(client, "v2", secret, transfer_body(*move), uuid.uuid4())
                done.append(("single", [move], response))
        return done

    results = [entry for result in run_threads(6, work) for entry in result]

    expected = {a: START, b: START, c: START}
    posted_ids = []
    for kind, moves, response in results:
        assert response.status_code == 201, (kind, response.status_code, response.content)
        payload = response.json()
        if kind == "batch":
            assert (payload["total"], payload["posted"], payload["failed"]) == (
                len(moves),
                len(moves),
                0,
            ), payload
            assert [r["status"] for r in payload["results"]] == ["posted"] * len(moves)
            posted_ids.extend(r["transferId"] for r in payload["results"])
        else:
            assert payload["status"] == "posted", payload
            posted_ids.append(payload["transferId"])
        for source, destination, amount in moves:
            expected[source] -= amount
            expected[destination] += amount

    assert len(results) == 4 * ROUNDS + 2 * SINGLES
    assert len(posted_ids) == 4 * ROUNDS * len(forward) + 2 * SINGLES
    assert len(set(posted_ids)) == len(posted_ids)
    assert sorted(Transfer.objects.values_list("pk", flat=True)) == sorted(posted_ids)
    assert TransferBatch.objects.count() == 4 * ROUNDS
    assert Transfer.objects.filter(batch__isnull=False).count() == 4 * ROUNDS * len(forward)
    for account_id, amount in expected.items():
        assert balances(api_v2, account_id) == money(amount)
    assert sum(expected.values()) == 3 * START
    assert StatementLine.objects.filter(transfer__isnull=False).count() == 2 * len(posted_ids)
    assert Event.objects.filter(type="transfer.posted").count() == len(posted_ids)
    assert ledger_breaches() == []
    # No request deadlocked and was retried or hidden: PostgreSQL saw none (its statistics
    # reach the view once the threads' backends have reported them).
    time.sleep(1.5)
    assert deadlocks() == deadlocks_before


def test_an_atomic_batch_refused_under_contention_leaves_nothing(api_v2, key):
    """Atomic batches whose last item fails run against batches and transfers that post over
    the same accounts: each refused batch undoes all its items, the others all post."""
    secret = key[1]
    a, b, c = (funded_account(api_v2, START)["accountId"] for _ in range(3))
    empty = funded_account(api_v2, 0)["accountId"]
    good = [(a, b, 5), (b, c, 6), (c, a, 7), (a, c, 8)]
    doomed = [*good[::-1], (empty, a, 1)]

    def work(index):
        client = Client(REMOTE_ADDR="127.0.0.1")
        moves = doomed if index % 2 else good
        items = [transfer_body(*move) for move in moves]
        return [(moves, post_batch(client, secret, "atomic", items)) for _ in range(ROUNDS)]

    results = [entry for result in run_threads(4, work) for entry in result]

    expected = {a: START, b: START, c: START, empty: 0}
    posted = 0
    for moves, response in results:
        if moves is doomed:
            assert response.status_code == 422, response.content
            error = response.json()
            assert error["code"] == "batch_item_failed"
            assert (error["details"]["index"], error["details"]["code"]) == (
                len(doomed) - 1,
                "insufficient_funds",
            )
        else:
            assert response.status_code == 201, response.content
            assert response.json()["posted"] == len(good)
            posted += len(good)
            for source, destination, amount in moves:
                expected[source] -= amount
                expected[destination] += amount
    assert Transfer.objects.count() == posted
    assert TransferBatch.objects.count() == 2 * ROUNDS
    for account_id, amount in expected.items():
        assert balances(api_v2, account_id) == money(amount)
    assert ledger_breaches() == []


def test_requests_racing_with_one_reference_post_it_once(api_v2, key):
    """Single transfers and batches over disjoint accounts (nothing makes them queue) race with
    one reference per round: one posts it; every other answers `duplicate_reference` as the
    contract says for its kind, and posts everything else it carries."""
    secret = key[1]
    pairs = [
        (funded_account(api_v2, 10_000)["accountId"], funded_account(api_v2, 0)["accountId"])
        for _ in range(4)
    ]
    rounds = 6

    def work(index):
        client = Client(REMOTE_ADDR="127.0.0.1")
        source, destination = pairs[index]
        done = []
        for round_ in range(rounds):
            reference = f"race-{round_}"
            raced = {**transfer_body(source, destination, 100), "reference": reference}
            filler = transfer_body(source, destination, 1)
            if index == 0:
                response = post_transfer(client, "v2", secret, raced, uuid.uuid4())
            elif index == 1:
                response = post_batch(client, secret, "independent", [filler, raced, filler])
            elif index == 2:
                response = post_batch(client, secret, "atomic", [filler, raced])
            else:
                response = post_batch(client, secret, "independent", [raced])
            done.append((round_, response))
        return done

    results = run_threads(4, work)

    moved = [0, 0, 0, 0]
    for round_ in range(rounds):
        reference = f"race-{round_}"
        winners = []
        for index in range(4):
            _, response = results[index][round_]
            payload = response.json()
            where = (index, round_, response.status_code, payload)
            if index == 0:
                if response.status_code == 201:
                    winners.append(index)
                    moved[index] += 100
                else:
                    assert response.status_code == 422, where
                    assert payload["code"] == "duplicate_reference", where
                    assert payload["details"] == {"reference": reference}, where
            elif index == 2:
                if response.status_code == 201:
                    winners.append(index)
                    moved[index] += 101
                else:
                    assert response.status_code == 422, where
                    assert payload["code"] == "batch_item_failed", where
                    details = payload["details"]
                    assert (details["index"], details["code"], details["details"]) == (
                        1,
                        "duplicate_reference",
                        {"reference": reference},
                    ), where
            else:
                assert response.status_code == 201, where
                results_ = payload["results"]
                raced = results_[1] if index == 1 else results_[0]
                fillers = [results_[0], results_[2]] if index == 1 else []
                assert all(r["status"] == "posted" for r in fillers), where
                moved[index] += len(fillers)
                assert raced["reference"] == reference, where
                if raced["status"] == "posted":
                    winners.append(index)
                    moved[index] += 100
                else:
                    assert raced["code"] == "duplicate_reference", where
        assert len(winners) == 1, (round_, winners)
        assert Transfer.objects.filter(reference=reference).count() == 1

    for (source, destination), amount in zip(pairs, moved, strict=True):
        assert balances(api_v2, source) == money(10_000 - amount)
        assert balances(api_v2, destination) == money(amount)
    assert ledger_breaches() == []
