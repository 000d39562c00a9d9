"""The statements one transfer costs, pinned (STYLE.md: pinned query counts on hot paths).

A change that adds a query to the transfer path fails here and has to say why. Measured with the
rate limits on, at their defaults (on PostgreSQL they cost one statement; docs/api-contract.md).
"""

import re

from django.db import connection
from django.test.utils import CaptureQueriesContext

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
    "SAVEPOINT",  # a business refusal undoes the operation, not the key's record
    "SELECT accounts_account",  # both endpoints in one query
    # The posting function (accounts/sql/posting.sql): both accounts locked in id order and
    # checked; the journal, both legs, both balances, the transfer, both statement lines and
    # the event written.
    "SELECT tx_post",
    # The event's webhook endpoints (none here): deliveries and their jobs are written only
    # when some endpoint is subscribed (two statements more, whatever their number).
    "SELECT webhooks_webhookendpoint",
    "RELEASE SAVEPOINT",
    "UPDATE api_idempotencyrecord",  # the response stored for replay
    "RELEASE SAVEPOINT",
]


def kind(sql: str) -> str:
    sql = " ".join(sql.split())
    table = re.search(r'(?:FROM|INTO|UPDATE) "?(\w+)"?', sql)
    verb = sql.split(" ", 1)[0]
    if verb in ("SAVEPOINT", "RELEASE"):
        return "RELEASE SAVEPOINT" if verb == "RELEASE" else "SAVEPOINT"
    function = re.match(r"SELECT (tx_\w+)\(", sql)
    if function:
        return f"SELECT {function.group(1)}"
    suffix = " FOR UPDATE" if sql.endswith("FOR UPDATE") else ""
    return f"{verb} {table.group(1)}{suffix}" if table else verb


def test_one_transfer_costs_these_statements(api_v2):
    source = funded_account(api_v2, 10_000)["accountId"]
    destination = open_account(api_v2)["accountId"]
    body = {
        "source": {"accountId": source},
        "destination": {"accountId": destination},
        "amount": 100,
        "currency": "EUR",
    }
    with CaptureQueriesContext(connection) as queries:
        created(api_v2.post("/transfers", body), "v2")
    assert [kind(query["sql"]) for query in queries.captured_queries] == EXPECTED
