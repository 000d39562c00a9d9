"""bench/transfers.py --without: its copies of the posting functions leave out the rows they
name, and only those (bench/README.md, "A floor, not the service").

The floor's figures bound what issue 35's schema moves can buy; they mean that only while its
copies match today's SQL. A change to the posting functions that the floor's patterns no longer
find fails here, not in a benchmark run by hand. The copies are made in the test's transaction
and rolled back with it.
"""

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from accounts.models import Entry, Journal, StatementLine
from tests.accounts.api.helpers import balances, created, funded_account, open_account
from tests.transfers.test_batches import item
from transfers.models import Transfer

BENCH = Path(settings.BASE_DIR) / "bench"


@pytest.fixture
def floor(monkeypatch):
    """bench/transfers.py as a module (it imports bench/common.py and bench/cpu.py by name; the
    folder goes last on the path, so that `transfers` stays the app)."""
    monkeypatch.setattr(sys, "path", [*sys.path, str(BENCH)])
    spec = importlib.util.spec_from_file_location("bench_transfers", BENCH / "transfers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def install(floor, omitted: list[str]) -> None:
    with connection.cursor() as cursor:
        definitions = {}
        for function in floor.FLOOR_FUNCTIONS:
            cursor.execute("SELECT pg_get_functiondef(%s::regproc)", [function])
            definitions[function] = cursor.fetchone()[0]
        for statement in floor.floor_functions(definitions, omitted):
            cursor.execute(statement)


def test_without_lines_and_transfer_a_transfer_posts_its_journal_entries_and_event_only(
    api_v2, floor
):
    source = funded_account(api_v2, 10_000)["accountId"]
    destination = open_account(api_v2)["accountId"]
    install(floor, ["lines", "transfer"])

    response = api_v2.post("/transfers", item(source, destination, 100))
    transfer_id = created(response, "v2")["transferId"]
    batch = api_v2.post(
        "/transfer-batches", {"mode": "atomic", "transfers": [item(source, destination, 100)]}
    )
    assert batch.status_code == 201, batch.content
    batched_id = batch.json()["results"][0]["transferId"]

    for posted in (transfer_id, batched_id):
        assert not Transfer.objects.filter(pk=posted).exists()
        assert not StatementLine.objects.filter(transfer_id=posted).exists()
    # Each posting's journal and its two legs are written, the balances moved.
    journals = Journal.objects.filter(entries__account_id=destination).distinct()
    assert journals.count() == 2
    assert Entry.objects.filter(journal__in=journals).count() == 4
    assert balances(api_v2, destination)["posted"] == 200


def test_without_lines_the_transfer_row_stays(api_v2, floor):
    source = funded_account(api_v2, 10_000)["accountId"]
    destination = open_account(api_v2)["accountId"]
    install(floor, ["lines"])

    response = api_v2.post("/transfers", item(source, destination, 100))
    transfer_id = created(response, "v2")["transferId"]

    assert Transfer.objects.filter(pk=transfer_id).exists()
    assert not StatementLine.objects.filter(transfer_id=transfer_id).exists()


def test_a_posting_function_the_floor_does_not_recognise_stops_it(floor):
    definitions = {name: "CREATE FUNCTION changed() ..." for name in floor.FLOOR_FUNCTIONS}
    with pytest.raises(RuntimeError, match="--without lines: 0 matches in tx_post"):
        floor.floor_functions(definitions, ["lines"])


@pytest.mark.urls("bench.floor")
def test_the_frameworks_floor_answers_the_reads_json_with_no_key_and_no_query(
    db, client, tmp_path, monkeypatch, django_assert_num_queries
):
    """bench/transfers.py --floor (bench/floor.py): the bare view renders the body the bench
    wrote, a real read's, without a key and without the database; the service's routes stay."""
    from bench import floor as framework_floor

    body = {"id": "acct_floor", "balances": {"posted": 1, "pending": 0}, "metadata": {}}
    written = tmp_path / "floor-body.json"
    written.write_text(json.dumps(body))
    monkeypatch.setattr(framework_floor, "FLOOR_BODY", written)
    framework_floor._body.cache_clear()
    try:
        with django_assert_num_queries(0):
            response = client.get("/TX/floor/accounts/acct_floor")
        assert response.status_code == 200 and response.json() == body
        assert client.get("/TX/v2/accounts/acct_floor").status_code == 401  # the service's
    finally:
        framework_floor._body.cache_clear()


@pytest.mark.urls("bench.floor")
def test_the_statement_floors_read_the_account_as_the_read_does_or_one_row_then_the_body(
    api_v2, client, tmp_path, monkeypatch, django_assert_num_queries
):
    """bench/floor.py's two routes with a statement: no key, the read's one statement
    (`account_get`) or an empty one, then the floor's body; with the read's, an account that is
    not there is the read's 404."""
    from bench import floor as framework_floor

    account_id = open_account(api_v2)["accountId"]
    body = {"id": account_id, "balances": {"posted": 0, "pending": 0}}
    written = tmp_path / "floor-body.json"
    written.write_text(json.dumps(body))
    monkeypatch.setattr(framework_floor, "FLOOR_BODY", written)
    framework_floor._body.cache_clear()
    monkeypatch.setattr(framework_floor, "_INSTITUTION", {})
    try:
        client.get(f"/TX/floor/statement/accounts/{account_id}")  # the institution, once
        with django_assert_num_queries(1) as queries:
            response = client.get(f"/TX/floor/statement/accounts/{account_id}")
        assert response.status_code == 200 and response.json() == body
        assert "accounts_account" in queries.captured_queries[0]["sql"]
        with django_assert_num_queries(1) as queries:
            trip = client.get(f"/TX/floor/round-trip/accounts/{account_id}")
        assert trip.status_code == 200 and trip.json() == body
        assert queries.captured_queries[0]["sql"] == "SELECT 1"
        account_id_elsewhere = account_id[:-1] + ("0" if account_id[-1] != "0" else "1")
        missing = client.get(f"/TX/floor/statement/accounts/{account_id_elsewhere}")
        assert missing.status_code == 404
    finally:
        framework_floor._body.cache_clear()


def test_the_service_has_no_floor(client):
    assert client.get("/TX/floor/accounts/acct_floor").status_code == 404
