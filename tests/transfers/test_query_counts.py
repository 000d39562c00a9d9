"""The statements one transfer costs, pinned (docs/design.md section 2: a hot path's statements
are pinned).

A change that adds a query to the transfer path fails here and has to say why. Measured with the
rate limits on, at their defaults, and with the test settings' RATE_LIMIT_FLUSH_EVERY=1 (one
counting statement per request); with the production default a request sends it only when its
process's batch is due (docs/api-contract.md, the last test here).
"""

import re
import types

from django.db import connection
from django.test.utils import CaptureQueriesContext

from api import ratelimit
from config.settings import base
from tests.accounts.api.helpers import created, funded_account, open_account

# One POST /TX/v2/transfers with an Idempotency-Key, in order (the test's own transaction
# turns BEGIN/COMMIT of the request into a savepoint pair).
EXPECTED = [
    "SELECT api_apikey",  # the key, its institution and allowlist: one query
    # Rate limits: the key's and the institution's counters, the address's refusals read.
    "WITH api_rate_counter",
    "SAVEPOINT",  # the request's durable transaction
    # Claim the Idempotency-Key, its wait bounded for this statement only: one function
    # (`api.idempotency.claim`, api/sql/idempotency.sql).
    "SELECT tx_idempotency_claim",
    # No savepoint: a business refusal undoes the whole transaction, and a second one stores
    # its answer (`api.views.TXView._answer_refusal`).
    "SELECT accounts_account",  # both endpoints in one query
    # The posting function (accounts/sql/posting.sql): both accounts locked in id order and
    # checked; the journal, both legs, both balances, the transfer, both statement lines and
    # the event written. The same statement reads the event's webhook endpoints (none here;
    # `events.consumers.Lookup`): deliveries and their jobs are written only when some
    # endpoint is subscribed (two statements more, whatever their number).
    "SELECT tx_post",
    "UPDATE api_idempotencyrecord",  # the response stored for replay
    "RELEASE SAVEPOINT",
]


def kind(sql: str) -> str:
    sql = " ".join(sql.split())
    table = re.search(r'(?:FROM|INTO|UPDATE) "?(\w+)"?', sql)
    verb = sql.split(" ", 1)[0]
    if verb in ("SAVEPOINT", "RELEASE", "ROLLBACK"):
        return {"SAVEPOINT": "SAVEPOINT", "RELEASE": "RELEASE SAVEPOINT"}.get(
            verb, "ROLLBACK TO SAVEPOINT"
        )
    function = re.match(r"SELECT ((?:tx|pg)_\w+)\(", sql)
    if function:
        return f"SELECT {function.group(1)}"
    suffix = " FOR UPDATE" if sql.endswith("FOR UPDATE") else ""
    return f"{verb} {table.group(1)}{suffix}" if table else verb


def transfer_between(api_v2, *, funded: int) -> dict:
    """The body of a transfer of 100 from a new account loaded with `funded` to a new one."""
    source = funded_account(api_v2, funded)["accountId"]
    destination = open_account(api_v2)["accountId"]
    return {
        "source": {"accountId": source},
        "destination": {"accountId": destination},
        "amount": 100,
        "currency": "EUR",
    }


def test_one_transfer_costs_these_statements(api_v2):
    body = transfer_between(api_v2, funded=10_000)
    with CaptureQueriesContext(connection) as queries:
        created(api_v2.post("/transfers", body), "v2")
    assert [kind(query["sql"]) for query in queries.captured_queries] == EXPECTED


# The same transfer refused (insufficient funds): the operation is undone whole, then a second
# transaction claims the key again and stores the refusal (`api.views.TXView._answer_refusal`);
# refusals pay the second transaction so that every transfer that passes costs no savepoint.
REFUSED_EXPECTED = [
    "SELECT api_apikey",
    "WITH api_rate_counter",
    "SAVEPOINT",
    "SELECT tx_idempotency_claim",
    "SELECT accounts_account",
    "SELECT tx_post",  # refused: SQLSTATE TX001
    "ROLLBACK TO SAVEPOINT",  # with the RELEASE after it, one ROLLBACK outside a test
    "RELEASE SAVEPOINT",
    "SAVEPOINT",
    "SELECT tx_idempotency_claim",
    "UPDATE api_idempotencyrecord",
    "RELEASE SAVEPOINT",
]


def test_a_refused_transfer_costs_these_statements(api_v2):
    body = transfer_between(api_v2, funded=10)
    with CaptureQueriesContext(connection) as queries:
        assert api_v2.post("/transfers", body).status_code == 422
    assert [kind(query["sql"]) for query in queries.captured_queries] == REFUSED_EXPECTED


# One atomic POST /TX/v2/transfer-batches of account-to-account items, in order: the same
# request around `transfer_batch_create` (transfers/batches.py).
BATCH_EXPECTED = [
    "SELECT api_apikey",
    "WITH api_rate_counter",
    "SAVEPOINT",
    "SELECT tx_idempotency_claim",
    "SELECT accounts_account",  # the accounts of every item in one query
    # The batch's row with the results it has if every item posts, before the queue.
    "INSERT transfers_transferbatch",
    # The queue of the institution's batches, then what its holder does before its commit:
    # everything of every item in one call, the webhook endpoints of the events, the answer.
    "SELECT pg_advisory_xact_lock",
    "SAVEPOINT",  # a reference taken meanwhile undoes this call only
    "SELECT tx_post_many",  # with the events' webhook endpoints
    "RELEASE SAVEPOINT",
    "UPDATE api_idempotencyrecord",
    "RELEASE SAVEPOINT",
]


def batch_of(accounts: list[str], count: int) -> dict:
    return {
        "mode": "atomic",
        "transfers": [
            {
                "source": {"accountId": accounts[i % 2]},
                "destination": {"accountId": accounts[(i + 1) % 2]},
                "amount": 1 + i,
                "currency": "EUR",
            }
            for i in range(count)
        ],
    }


def test_a_batch_costs_these_statements_whatever_its_size(api_v2):
    accounts = [funded_account(api_v2, 10_000)["accountId"] for _ in range(2)]
    for count in (2, 50):
        with CaptureQueriesContext(connection) as queries:
            created(api_v2.post("/transfer-batches", batch_of(accounts, count)), "v2")
        assert [kind(query["sql"]) for query in queries.captured_queries] == BATCH_EXPECTED


def test_an_independent_batch_with_a_refusal_writes_its_actual_results(api_v2):
    accounts = [funded_account(api_v2, 10)["accountId"] for _ in range(2)]
    body = batch_of(accounts, 3) | {"mode": "independent"}
    body["transfers"][1]["amount"] = 1_000  # more than the source holds
    with CaptureQueriesContext(connection) as queries:
        answer = created(api_v2.post("/transfer-batches", body), "v2")
    kinds = [kind(query["sql"]) for query in queries.captured_queries]
    # The row written ahead said every item posted: corrected once the refusal is known.
    assert kinds.count("UPDATE transfers_transferbatch") == 1
    assert [result["status"] for result in answer["results"]] == ["posted", "failed", "posted"]
    stored = api_v2.get(f"/transfer-batches/{answer['batchId']}").json()
    assert stored["results"] == answer["results"]


def test_with_the_production_batches_a_transfer_sends_no_counting_statement_until_one_is_due(
    api_v2, settings, monkeypatch
):
    batch = base.RATE_LIMIT_FLUSH_EVERY  # the production default (tests/config pins it)
    settings.RATE_LIMIT_FLUSH_EVERY = batch
    # A fresh process, and a clock that stands still (no window change, no flush by time).
    monkeypatch.setattr(ratelimit, "local_counters", ratelimit.LocalCounters())
    monkeypatch.setattr(ratelimit, "time", types.SimpleNamespace(time=lambda: 1_700_000_015.0))
    body = transfer_between(api_v2, funded=10_000)
    ratelimit.flush()  # the steady state: nothing pending
    kinds = []
    for _ in range(batch):
        with CaptureQueriesContext(connection) as queries:
            created(api_v2.post("/transfers", body), "v2")
        kinds.append([kind(query["sql"]) for query in queries.captured_queries])
    steady = [k for k in EXPECTED if k != "WITH api_rate_counter"]
    assert kinds == [steady] * (batch - 1) + [EXPECTED]
