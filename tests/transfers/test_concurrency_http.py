"""Concurrent money movements over HTTP: real threads, each with its own client, database
connection and transactions. Nothing here is mocked: the row locks, the idempotency records
and the ledger's database rules do the work."""

import json
import threading
import uuid

import pytest
from django.db import connection
from django.test import Client

from accounts.models import Account, StatementLine
from accounts.verification import ledger_breaches
from events.models import Event
from tests.accounts.api.helpers import CREATED, balances, funded_account, money
from transfers.models import Transfer

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 8
TRANSFERS_PER_THREAD = 10
START = 10_000


def run_threads(count: int, target) -> list:
    """Run `target(index)` on `count` threads released together; each closes its database
    connection at the end. Returns the results in thread order; re-raises the first error."""
    barrier = threading.Barrier(count)
    results: list = [None] * count
    errors: list = []

    def run(index):
        try:
            barrier.wait(timeout=10)
            results[index] = target(index)
        except BaseException as error:  # noqa: BLE001 - re-raised below, in the test
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a thread is stuck"
    if errors:
        raise errors[0]
    return results


def post_transfer(client: Client, version: str, secret: str, body: dict, key=None):
    headers = {"x-api-key": secret}
    if key is not None:
        headers["Idempotency-Key"] = str(key)
    return client.post(
        f"/TX/{version}/transfers",
        data=json.dumps(body),
        content_type="application/json",
        headers=headers,
    )


def transfer_body(source: str, destination: str, amount: int) -> dict:
    return {
        "source": {"accountId": source},
        "destination": {"accountId": destination},
        "amount": amount,
        "currency": "EUR",
    }


def test_concurrent_transfers_among_three_accounts_keep_the_ledger(api_v2, key):
    secret = key[1]
    accounts = [funded_account(api_v2, START)["accountId"] for _ in range(3)]

    def work(index):
        # Even threads speak v2 with a key per request, odd ones v1 without one.
        version = "v2" if index % 2 == 0 else "v1"
        client = Client(REMOTE_ADDR="127.0.0.1")
        outcomes = []
        for step in range(TRANSFERS_PER_THREAD):
            source = accounts[(index + step) % 3]
            destination = accounts[(index + step + 1 + index % 2) % 3]
            amount = 100 + (index * 37 + step * 211) % 900
            response = post_transfer(
                client,
                version,
                secret,
                transfer_body(source, destination, amount),
                uuid.uuid4() if version == "v2" else None,
            )
            outcomes.append((version, source, destination, amount, response))
        return outcomes

    outcomes = [outcome for result in run_threads(THREADS, work) for outcome in result]

    assert len(outcomes) == THREADS * TRANSFERS_PER_THREAD
    expected = {account_id: START for account_id in accounts}
    posted_ids = []
    for version, source, destination, amount, response in outcomes:
        payload = response.json()
        if response.status_code == CREATED[version]:
            body = payload["data"] if version == "v1" else payload
            assert (body["amount"], body["status"]) == (amount, "posted")
            posted_ids.append(body["transferId"])
            expected[source] -= amount
            expected[destination] += amount
        else:
            # The only acceptable refusal: the source ran dry at that moment.
            error = payload["error"] if version == "v1" else payload
            assert (response.status_code, error["code"]) == (422, "insufficient_funds"), payload
    assert posted_ids, "no transfer went through"
    assert len(set(posted_ids)) == len(posted_ids)
    assert sorted(Transfer.objects.values_list("pk", flat=True)) == sorted(posted_ids)
    assert ledger_breaches() == []
    for account_id in accounts:
        assert balances(api_v2, account_id) == money(expected[account_id])
    assert sum(expected.values()) == 3 * START
    customer_posted = Account.objects.filter(kind=Account.Kind.CUSTOMER).values_list(
        "posted", flat=True
    )
    assert sum(customer_posted) == 3 * START
    assert StatementLine.objects.filter(transfer__isnull=False).count() == 2 * len(posted_ids)
    assert Event.objects.filter(type="transfer.posted").count() == len(posted_ids)


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_concurrent_retries_with_one_key_post_the_transfer_once(api_v2, key, version):
    secret = key[1]
    source = funded_account(api_v2, START)["accountId"]
    destination = funded_account(api_v2, 0)["accountId"]
    idempotency_key = uuid.uuid4()
    body = transfer_body(source, destination, 1_234)

    def retry(index):
        return post_transfer(
            Client(REMOTE_ADDR="127.0.0.1"), version, secret, body, idempotency_key
        )

    responses = run_threads(6, retry)

    originals = [r for r in responses if not r.has_header("Idempotent-Replayed")]
    replays = [r for r in responses if r.has_header("Idempotent-Replayed")]
    in_use = [r for r in originals if r.status_code == 409]
    [original] = [r for r in originals if r.status_code != 409]
    assert original.status_code == CREATED[version], original.content
    for response in replays:
        assert response["Idempotent-Replayed"] == "true"
        assert (response.status_code, response.content) == (original.status_code, original.content)
    for response in in_use:  # gave up waiting for the first: told to retry, never run twice
        payload = response.json()
        error = payload["error"] if version == "v1" else payload
        assert error["code"] == "idempotency_key_in_use"
        assert response["Retry-After"] == "1"
    assert len(replays) + len(in_use) == 5

    [posted] = Transfer.objects.all()
    payload = original.json()
    assert (payload["data"] if version == "v1" else payload)["transferId"] == posted.pk
    assert balances(api_v2, source) == money(START - 1_234)
    assert balances(api_v2, destination) == money(1_234)
    assert Event.objects.filter(type="transfer.posted").count() == 1
    assert ledger_breaches() == []

    # A late retry replays the same answer.
    late = post_transfer(Client(REMOTE_ADDR="127.0.0.1"), version, secret, body, idempotency_key)
    assert (late.status_code, late.content) == (original.status_code, original.content)
    assert Transfer.objects.count() == 1
