"""`/transfer-batches` and transfer references over HTTP (v2 only; docs/transfer-batches.md):
atomic and independent batches, each item an ordinary transfer, references unique per
institution, idempotent replays, validation, and a property: an independent batch ends as the
same transfers posted one by one."""

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts.models import StatementLine
from events.models import Event
from tests.accounts.api.helpers import (
    ANY,
    GHS_PREPAID,
    TIMESTAMP,
    adjust,
    assert_error,
    assert_validation_error,
    balances,
    created,
    events,
    funded_account,
    items_of,
    money,
    open_account,
    prefixed_id,
    resource,
    statement,
    transfer,
    unknown_id,
)
from tests.cards.api import helpers as cards
from tests.conftest import Api, error_of
from tests.factories import InstitutionFactory, issue_key
from transfers.models import Transfer, TransferBatch, TransferReversal

BATCH_ID = prefixed_id("trb")
TRANSFER_ID = prefixed_id("tr")
NO_ACCOUNT = "No account with this id."
AMOUNT_MESSAGE = "Must be an integer number of minor units, e.g. 1050."


class _AnyMessage(str):
    """Equal to any string: for messages the contract does not fix."""

    def __eq__(self, other):
        return isinstance(other, str)

    __hash__ = str.__hash__


ANY_MESSAGE = _AnyMessage()


# --- helpers


def assert_item_failed(response, index: int, code: str, details) -> None:
    """An atomic batch refused at item `index` with the item's own `code` and `details`."""
    assert_error(
        response,
        "v2",
        422,
        "batch_item_failed",
        {"index": index, "code": code, "message": ANY_MESSAGE, "details": details},
    )


def item(source: str, destination: str, amount: int, currency: str = "EUR", **fields) -> dict:
    """One batch item (a `POST /transfers` body) between two accounts named by id."""
    return {
        "source": {"accountId": source},
        "destination": {"accountId": destination},
        "amount": amount,
        "currency": currency,
        **fields,
    }


def post_batch(api, mode: str, items: list, **kwargs):
    return api.post("/transfer-batches", {"mode": mode, "transfers": items}, **kwargs)


def batch_of(response) -> dict:
    """The 201 document of a batch, checked for its shape (without `meta`)."""
    document = created(response, "v2")
    assert set(document) == {
        "batchId",
        "mode",
        "total",
        "posted",
        "failed",
        "results",
        "createdAt",
    }, document
    assert BATCH_ID.match(document["batchId"]), document["batchId"]
    assert TIMESTAMP.match(document["createdAt"]), document["createdAt"]
    results = document["results"]
    assert [result["index"] for result in results] == list(range(len(results)))
    assert document["total"] == len(results)
    statuses = [result["status"] for result in results]
    assert document["posted"] == statuses.count("posted")
    assert document["failed"] == statuses.count("failed")
    for result in results:
        if result["status"] == "posted":
            assert set(result) == {"index", "status", "transferId", "reference"}, result
            assert TRANSFER_ID.match(result["transferId"])
        else:
            assert result["status"] == "failed", result
            assert set(result) == {"index", "status", "code", "message", "reference"}, result
    return document


def outcomes(document: dict) -> list:
    """Each result without its transfer id: (status, code or None, reference)."""
    return [(r["status"], r.get("code"), r["reference"]) for r in document["results"]]


def snapshot(api, *account_ids) -> dict:
    """What a refused batch or transfer must leave as it was."""
    return {
        "balances": [balances(api, account_id) for account_id in account_ids],
        "statements": [statement(api, account_id) for account_id in account_ids],
        "transfers": Transfer.objects.count(),
        "reversals": TransferReversal.objects.count(),
        "batches": TransferBatch.objects.count(),
        "lines": StatementLine.objects.count(),
        "events": Event.objects.filter(type__startswith="transfer.").count(),
    }


def line_summary(line) -> tuple:
    return (line["type"], line["direction"], line["amount"], line["transferId"])


def refusal(response) -> dict:
    """A single transfer's refusal as a batch item's error names it: {code, message, details}."""
    assert response.status_code in (404, 422), response.content
    error = error_of(response, "v2")
    return {"code": error["code"], "message": error["message"], "details": error.get("details")}


@pytest.fixture
def trio(api_v2):
    """Three accounts of three customers holding 10 000, 2 000 and nothing."""
    return tuple(funded_account(api_v2, amount)["accountId"] for amount in (10_000, 2_000, 0))


# --- atomic batches that post
def test_atomic_batch_posts_every_item_as_an_ordinary_transfer(api_v2, trio):
    a, b, c = trio
    items = [
        item(a, b, 1_000, description="Salary", reference="pay-2026-11-0001"),
        # b spends more than it held before the batch: item 0 credited it.
        item(b, c, 2_500, description="Rent", reference="pay-2026-11-0002"),
        item(c, a, 400),
    ]

    response = post_batch(api_v2, "atomic", items)

    assert response.status_code == 201, response.content
    assert "meta" in response.json()
    document = batch_of(response)
    ids = [result["transferId"] for result in document["results"]]
    assert len(set(ids)) == 3
    assert document == {
        "batchId": document["batchId"],
        "mode": "atomic",
        "total": 3,
        "posted": 3,
        "failed": 0,
        "results": [
            {"index": 0, "status": "posted", "transferId": ids[0], "reference": "pay-2026-11-0001"},
            {"index": 1, "status": "posted", "transferId": ids[1], "reference": "pay-2026-11-0002"},
            {"index": 2, "status": "posted", "transferId": ids[2], "reference": None},
        ],
        "createdAt": document["createdAt"],
    }
    assert balances(api_v2, a) == money(10_000 - 1_000 + 400)
    assert balances(api_v2, b) == money(2_000 + 1_000 - 2_500)
    assert balances(api_v2, c) == money(2_500 - 400)

    # Each item is an ordinary transfer that knows its batch and its reference.
    for transfer_id, body, description in zip(ids, items, ("Salary", "Rent", ""), strict=True):
        shown = resource(api_v2.get(f"/transfers/{transfer_id}"), "v2")
        assert shown == {
            "transferId": transfer_id,
            "source": {"accountId": body["source"]["accountId"], "cardId": None},
            "destination": {"accountId": body["destination"]["accountId"], "cardId": None},
            "amount": body["amount"],
            "currency": "EUR",
            "description": description,
            "status": "posted",
            "postedAmount": body["amount"],
            "hold": None,
            "reversedAmount": 0,
            "reference": body.get("reference"),
            "batchId": document["batchId"],
            "metadata": {},
            "createdAt": shown["createdAt"],
            "updatedAt": shown["createdAt"],
        }
        [event] = events(api_v2, "transfer.posted", transfer_id)
        assert event["data"] == {
            "amount": body["amount"],
            "currency": "EUR",
            "sourceAccountId": body["source"]["accountId"],
            "destinationAccountId": body["destination"]["accountId"],
        }
    assert len(events(api_v2, "transfer.posted")) == 3
    assert Transfer.objects.filter(batch_id=document["batchId"]).count() == 3

    # Statement lines, newest first: the items in request order reversed, then the loads.
    statements = {
        account_id: [line_summary(line) for line in statement(api_v2, account_id)]
        for account_id in (a, b, c)
    }
    expected = {
        a: [
            ("CashInc", "credit", 400, ids[2]),
            ("CashDec", "debit", 1_000, ids[0]),
            ("CashInc", "credit", 10_000, None),
        ],
        b: [
            ("CashDec", "debit", 2_500, ids[1]),
            ("CashInc", "credit", 1_000, ids[0]),
            ("CashInc", "credit", 2_000, None),
        ],
        c: [
            ("CashDec", "debit", 400, ids[2]),
            ("CashInc", "credit", 2_500, ids[1]),
        ],
    }
    salary = [line for line in statement(api_v2, a) if line["transferId"] == ids[0]]
    assert [line["description"] for line in salary] == ["Salary"]
    assert {k: sorted(v, key=str) for k, v in statements.items()} == {
        k: sorted(v, key=str) for k, v in expected.items()
    }
    assert statements == expected


def test_every_row_of_a_transfer_has_its_journals_instant(api_v2, trio):
    """A transfer's journal, ledger entries, transfer row, statement lines and event are one
    change: one instant (`transfer_new`'s), posted alone (`tx_post`) or in a batch
    (`tx_post_many`), where each item has its own."""
    from accounts.models import Entry

    def stamps(transfer_id: str) -> tuple:
        row = Transfer.objects.select_related("journal").get(pk=transfer_id)
        entries = Entry.objects.filter(journal=row.journal).values_list("created_at", flat=True)
        lines = StatementLine.objects.filter(transfer=row).values_list("created_at", flat=True)
        event = Event.objects.filter(object_id=transfer_id).values_list("created_at", flat=True)
        return (
            row.journal.created_at,
            {
                "transfer": {row.created_at, row.updated_at},
                "lines": set(lines),
                "event": set(event),
            },
            set(entries),
        )

    a, b, _ = trio
    single = created(transfer(api_v2, a, b, 100), "v2")["transferId"]
    instant, rows, entries = stamps(single)
    assert rows == dict.fromkeys(rows, {instant})
    assert entries == {instant}

    batch = batch_of(post_batch(api_v2, "atomic", [item(b, a, 50), item(a, b, 25)]))
    instants = set()
    for result in batch["results"]:
        instant, rows, entries = stamps(result["transferId"])
        assert rows == dict.fromkeys(rows, {instant})
        assert entries == {instant}
        instants.add(instant)
    assert len(instants) == 2  # each item its own, not the batch's posting call's


def test_get_batch_answers_the_created_document(api_v2, trio):
    a, b, _ = trio
    response = post_batch(
        api_v2, "independent", [item(a, b, 100, reference="g-1"), item(b, a, 99_999)]
    )
    document = batch_of(response)

    fetched = api_v2.get(f"/transfer-batches/{document['batchId']}")

    assert fetched.status_code == 200, fetched.content
    assert "meta" in fetched.json()
    assert resource(fetched, "v2") == document
    assert_error(api_v2.get(f"/transfer-batches/{unknown_id('trb')}"), "v2", 404, "not_found")


def test_another_institutions_batch_is_not_found(api_v2, trio, other_institution):
    a, b, _ = trio
    document = batch_of(post_batch(api_v2, "atomic", [item(a, b, 100)]))
    theirs = Api("v2", issue_key(other_institution)[1])

    assert_error(theirs.get(f"/transfer-batches/{document['batchId']}"), "v2", 404, "not_found")


def test_v1_has_no_transfer_batches(api_v1, api_v2, trio):
    a, b, _ = trio
    document = batch_of(post_batch(api_v2, "atomic", [item(a, b, 100, reference="v1-hidden")]))
    before = snapshot(api_v2, a, b)

    response = api_v1.post("/transfer-batches", {"mode": "atomic", "transfers": [item(a, b, 100)]})
    assert_error(response, "v1", 404, "not_found")
    assert_error(api_v1.get(f"/transfer-batches/{document['batchId']}"), "v1", 404, "not_found")
    assert snapshot(api_v2, a, b) == before

    # v1 shows a batch's transfer without the v2 fields.
    transfer_id = document["results"][0]["transferId"]
    shown = resource(api_v1.get(f"/transfers/{transfer_id}"), "v1")
    assert "reference" not in shown and "batchId" not in shown
    assert shown["amount"] == 100


# --- atomic batches that are refused
@pytest.mark.parametrize("position", [0, 1, 2], ids=["first", "middle", "last"])
@pytest.mark.parametrize("failure", ["insufficient_funds", "not_found"])
def test_atomic_batch_with_a_failing_item_changes_nothing(api_v2, trio, position, failure):
    a, b, c = trio
    poor = funded_account(api_v2, 100)["accountId"]
    good = [item(a, b, 1_000), item(b, c, 2_500), item(c, a, 400)]
    bad = (
        item(poor, a, 5_000, reference="refused-ref")
        if failure == "insufficient_funds"
        else item(unknown_id("acc"), a, 5_000, reference="refused-ref")
    )
    items = [*good]
    items.insert(position, bad)
    before = snapshot(api_v2, a, b, c, poor)
    # What the same transfer answers on its own (and it changes nothing).
    own = refusal(api_v2.post("/transfers", bad))
    assert own["code"] == failure
    assert snapshot(api_v2, a, b, c, poor) == before

    response = post_batch(api_v2, "atomic", items)

    assert_error(
        response,
        "v2",
        422,
        "batch_item_failed",
        {"index": position, **own},
    )
    if failure == "insufficient_funds":
        assert own["details"] == {"accountId": poor, "available": 100, "amount": 5_000}
    else:
        assert own == {"code": "not_found", "message": NO_ACCOUNT, "details": None}
    assert snapshot(api_v2, a, b, c, poor) == before
    # The refused batch's references are not taken.
    created(transfer(api_v2, a, b, 1, reference="refused-ref"), "v2")


def test_atomic_batch_reports_the_first_failing_item_in_request_order(api_v2, trio):
    a, b, _ = trio
    before = snapshot(api_v2, a, b)
    # Item 1 names no account (resolved before any item applies), item 0 fails first.
    items = [item(b, a, 50_000), item(unknown_id("acc"), a, 1), item(a, b, 1)]

    error = assert_error(post_batch(api_v2, "atomic", items), "v2", 422, "batch_item_failed", ANY)

    assert error["details"] == {
        "index": 0,
        "code": "insufficient_funds",
        "message": error["details"]["message"],
        "details": {"accountId": b, "available": 2_000, "amount": 50_000},
    }
    assert snapshot(api_v2, a, b) == before


def test_atomic_batch_failing_on_an_item_an_earlier_one_would_have_funded(api_v2, trio):
    a, b, c = trio
    before = snapshot(api_v2, a, b, c)
    # c is empty: item 1 needs what item 0 credited, plus one.
    items = [item(a, c, 700), item(c, b, 701)]

    assert_item_failed(
        post_batch(api_v2, "atomic", items),
        1,
        "insufficient_funds",
        {"accountId": c, "available": 700, "amount": 701},
    )
    assert snapshot(api_v2, a, b, c) == before


def test_large_atomic_batch_failing_late_leaves_nothing(api_v2):
    rich = funded_account(api_v2, 100_000)["accountId"]
    sink = open_account(api_v2)["accountId"]
    empty = open_account(api_v2)["accountId"]
    items = [item(rich, sink, 1 + index % 7) for index in range(600)]
    items[500] = item(empty, sink, 10)
    before = snapshot(api_v2, rich, sink, empty)

    response = post_batch(api_v2, "atomic", items)

    assert_item_failed(
        response, 500, "insufficient_funds", {"accountId": empty, "available": 0, "amount": 10}
    )
    assert snapshot(api_v2, rich, sink, empty) == before


def test_batch_of_the_most_items_posts(api_v2):
    rich = funded_account(api_v2, 10_000)["accountId"]
    sink = open_account(api_v2)["accountId"]
    items = [
        item(rich, sink, 1 + index % 3, description=f"Payout {index}", reference=f"po-{index:04d}")
        for index in range(1_000)
    ]

    document = batch_of(post_batch(api_v2, "independent", items))

    assert (document["total"], document["posted"], document["failed"]) == (1_000, 1_000, 0)
    total = sum(1 + index % 3 for index in range(1_000))
    assert balances(api_v2, rich) == money(10_000 - total)
    assert balances(api_v2, sink) == money(total)
    assert Transfer.objects.filter(batch_id=document["batchId"]).count() == 1_000
    # The statement lists the newest first: the last items, in request order reversed.
    ids = [result["transferId"] for result in document["results"]]
    newest = ids[:-101:-1]
    listed_transfers = [t["transferId"] for t in items_of(api_v2, "/transfers", limit=100)]
    listed_lines = [line["transferId"] for line in statement(api_v2, sink)]
    assert sorted(listed_lines) == sorted(newest)
    assert (listed_lines, listed_transfers) == (newest, newest)
    assert [line["description"] for line in statement(api_v2, rich)][:3] == [
        "Payout 999",
        "Payout 998",
        "Payout 997",
    ]


# --- independent batches
def test_independent_batch_with_mixed_outcomes(api_v2, trio):
    a, b, c = trio  # 10 000, 2 000, 0
    ghs = funded_account(api_v2, 1_000, code=GHS_PREPAID)["accountId"]
    created(transfer(api_v2, a, b, 10, reference="taken"), "v2")  # a 9 990, b 2 010
    items = [
        item(a, c, 400, reference="ok-0"),  # c 400
        item(c, b, 300, reference="ok-1"),  # spends what item 0 credited: c 100, b 2 310
        item(c, b, 200, reference="poor"),  # c has 100
        item(unknown_id("acc"), b, 100),  # no such account
        item(a, ghs, 100),  # EUR into a GHS account
        item(a, b, 50, reference="taken"),  # the single transfer above has it
        item(b, c, 2_310),  # b's whole balance: c 2 410, b 0
        item(b, a, 1),  # b is empty now
        item(c, a, 2_410, reference="ok-8"),  # c's whole balance
    ]

    document = batch_of(post_batch(api_v2, "independent", items))

    results = document["results"]
    ids = {r["index"]: r["transferId"] for r in results if r["status"] == "posted"}
    assert document["mode"] == "independent"
    assert (document["total"], document["posted"], document["failed"]) == (9, 4, 5)
    insufficient = results[2]["message"]
    assert results == [
        {"index": 0, "status": "posted", "transferId": ids[0], "reference": "ok-0"},
        {"index": 1, "status": "posted", "transferId": ids[1], "reference": "ok-1"},
        {
            "index": 2,
            "status": "failed",
            "code": "insufficient_funds",
            "message": insufficient,
            "reference": "poor",
        },
        {
            "index": 3,
            "status": "failed",
            "code": "not_found",
            "message": NO_ACCOUNT,
            "reference": None,
        },
        {
            "index": 4,
            "status": "failed",
            "code": "currency_mismatch",
            "message": "The account is in GHS, the request in EUR.",
            "reference": None,
        },
        {
            "index": 5,
            "status": "failed",
            "code": "duplicate_reference",
            "message": "A transfer with this reference exists already.",
            "reference": "taken",
        },
        {"index": 6, "status": "posted", "transferId": ids[6], "reference": None},
        {
            "index": 7,
            "status": "failed",
            "code": "insufficient_funds",
            "message": insufficient,
            "reference": None,
        },
        {"index": 8, "status": "posted", "transferId": ids[8], "reference": "ok-8"},
    ]
    # The same message as the same transfer refused on its own.
    assert refusal(transfer(api_v2, c, a, 1))["message"] == insufficient
    assert balances(api_v2, a) == money(9_990 - 400 + 2_410)
    assert balances(api_v2, b) == money(0)
    assert balances(api_v2, c) == money(0)
    assert balances(api_v2, ghs) == money(1_000)
    # The failed items left nothing: 4 transfers (plus the single one), their lines and events.
    in_batch = Transfer.objects.filter(batch_id=document["batchId"])
    assert sorted(in_batch.values_list("pk", flat=True)) == sorted(ids.values())
    assert StatementLine.objects.filter(transfer__batch_id=document["batchId"]).count() == 8
    assert len(events(api_v2, "transfer.posted")) == 5
    # A failed item's reference is not taken.
    created(transfer(api_v2, a, b, 1, reference="poor"), "v2")
    assert TransferBatch.objects.count() == 1
    # c's statement, newest first: the posted items in request order, reversed.
    lines = [line_summary(line) for line in statement(api_v2, c)]
    expected = [
        ("CashDec", "debit", 2_410, ids[8]),
        ("CashInc", "credit", 2_310, ids[6]),
        ("CashDec", "debit", 300, ids[1]),
        ("CashInc", "credit", 400, ids[0]),
    ]
    assert sorted(lines) == sorted(expected)
    assert lines == expected


def test_independent_batch_whose_items_all_fail_is_stored(api_v2, trio):
    a, b, _ = trio
    before = balances(api_v2, b)

    document = batch_of(post_batch(api_v2, "independent", [item(b, a, 99_999)]))

    assert (document["total"], document["posted"], document["failed"]) == (1, 0, 1)
    assert document["results"][0]["code"] == "insufficient_funds"
    assert balances(api_v2, b) == before
    assert resource(api_v2.get(f"/transfer-batches/{document['batchId']}"), "v2") == document


# --- card items and the order of the checks
def test_card_items_interleave_with_account_items(api_v2):
    ada = cards.customer(api_v2)
    ada_acc = cards.account(api_v2, ada)
    bob_acc = cards.account(api_v2, cards.customer(api_v2, "Bob"), load=5_000)
    carol_acc = cards.account(api_v2, cards.customer(api_v2, "Carol"))
    card = cards.issue(api_v2, ada_acc, ada, status="active")["cardId"]
    cards.set_limits(api_v2, card, perTransaction=1_000, daily=1_500, dailyCash=0)
    by_card = {"cardId": card}

    document = batch_of(
        post_batch(
            api_v2,
            "independent",
            [
                item(bob_acc, ada_acc, 2_000),
                # The card spends what item 0 credited its account.
                {**item(ada_acc, carol_acc, 800), "source": by_card},
                {**item(ada_acc, carol_acc, 900), "source": by_card},  # daily: 800 + 900
                {**item(ada_acc, carol_acc, 1_001), "source": by_card},  # per transaction
                item(carol_acc, bob_acc, 800),  # spends what item 1 credited
                {**item(ada_acc, carol_acc, 700, reference="card-7"), "source": by_card},
            ],
        )
    )

    assert outcomes(document) == [
        ("posted", None, None),
        ("posted", None, None),
        ("failed", "limit_exceeded", None),
        ("failed", "limit_exceeded", None),
        ("posted", None, None),
        ("posted", None, "card-7"),
    ]
    assert balances(api_v2, ada_acc) == money(2_000 - 800 - 700)
    assert balances(api_v2, bob_acc) == money(5_000 - 2_000 + 800)
    assert balances(api_v2, carol_acc) == money(800 - 800 + 700)
    assert cards.usage_of(api_v2, card)["daily"] == 1_500
    sent = resource(api_v2.get(f"/transfers/{document['results'][1]['transferId']}"), "v2")
    assert sent["source"] == {"accountId": ada_acc, "cardId": card}
    assert sent["batchId"] == document["batchId"]
    assert [line["cardId"] for line in statement(api_v2, ada_acc, type="CashDec")] == [card, card]

    # Atomic: the card's refusal names the item; the account item before it is undone.
    before = snapshot(api_v2, ada_acc, bob_acc, carol_acc)
    over = {**item(ada_acc, carol_acc, 1_001), "source": by_card}
    own = refusal(api_v2.post("/transfers", over))
    assert own["code"] == "limit_exceeded"
    assert_error(
        post_batch(api_v2, "atomic", [item(bob_acc, ada_acc, 100), over]),
        "v2",
        422,
        "batch_item_failed",
        {"index": 1, **own},
    )
    assert snapshot(api_v2, ada_acc, bob_acc, carol_acc) == before
    assert cards.usage_of(api_v2, card)["daily"] == 1_500


def test_an_item_is_checked_in_the_order_of_a_single_transfer(api_v2, trio):
    """An item breaking two rules fails with the one a single transfer names first: the
    currency and the sending card come before the reference, the reference before the
    funds."""
    a, b, c = trio
    ghs = funded_account(api_v2, 1_000, code=GHS_PREPAID)["accountId"]
    owner = cards.customer(api_v2)
    carded = cards.account(api_v2, owner, load=1_000)
    suspended = cards.card_in(api_v2, "suspended", carded, owner)["cardId"]
    created(transfer(api_v2, a, b, 1, reference="taken"), "v2")
    bodies = [
        item(a, ghs, 100, reference="taken"),  # currency_mismatch
        {**item(carded, c, 100, reference="taken"), "source": {"cardId": suspended}},
        item(c, a, 100, reference="taken"),  # duplicate_reference (c is empty)
        item(c, a, 100, reference="free"),  # insufficient_funds
    ]
    before = snapshot(api_v2, a, b, c, ghs, carded)
    singles = [refusal(api_v2.post("/transfers", body)) for body in bodies]
    assert [single["code"] for single in singles] == [
        "currency_mismatch",
        "card_not_active",
        "duplicate_reference",
        "insufficient_funds",
    ]
    assert snapshot(api_v2, a, b, c, ghs, carded) == before

    document = batch_of(post_batch(api_v2, "independent", bodies))

    assert [(r["status"], r["code"], r["message"]) for r in document["results"]] == [
        ("failed", single["code"], single["message"]) for single in singles
    ]
    for body, single in zip(bodies, singles, strict=True):
        assert_error(
            post_batch(api_v2, "atomic", [item(a, b, 1), body]),
            "v2",
            422,
            "batch_item_failed",
            {"index": 1, **single},
        )
    assert {k: v for k, v in snapshot(api_v2, a, b, c, ghs, carded).items() if k != "batches"} == {
        k: v for k, v in before.items() if k != "batches"
    }


# --- references
def test_a_transfer_answers_its_reference(api_v2, trio):
    a, b, _ = trio

    body = created(transfer(api_v2, a, b, 100, reference="inv-0001"), "v2")
    plain = created(transfer(api_v2, a, b, 100), "v2")

    assert (body["reference"], body["batchId"]) == ("inv-0001", None)
    assert (plain["reference"], plain["batchId"]) == (None, None)
    assert resource(api_v2.get(f"/transfers/{body['transferId']}"), "v2") == body


def test_a_reference_is_used_once(api_v2, trio):
    a, b, c = trio
    created(transfer(api_v2, a, b, 100, reference="inv-1"), "v2")
    before = snapshot(api_v2, a, b, c)

    # Again as a single transfer.
    assert_error(
        transfer(api_v2, a, c, 5, reference="inv-1"),
        "v2",
        422,
        "duplicate_reference",
        {"reference": "inv-1"},
    )
    assert snapshot(api_v2, a, b, c) == before
    # Again in an atomic batch.
    assert_error(
        post_batch(api_v2, "atomic", [item(a, c, 5), item(a, c, 5, reference="inv-1")]),
        "v2",
        422,
        "batch_item_failed",
        {
            "index": 1,
            "code": "duplicate_reference",
            "message": "A transfer with this reference exists already.",
            "details": {"reference": "inv-1"},
        },
    )
    assert snapshot(api_v2, a, b, c) == before
    # Again in an independent batch.
    document = batch_of(post_batch(api_v2, "independent", [item(a, c, 5, reference="inv-1")]))
    assert outcomes(document) == [("failed", "duplicate_reference", "inv-1")]
    assert balances(api_v2, c) == money(0)


def test_a_reference_twice_in_one_batch(api_v2, trio):
    a, b, c = trio
    items = [item(a, b, 100, reference="twice"), item(a, c, 100, reference="twice")]
    before = snapshot(api_v2, a, b, c)

    assert_error(
        post_batch(api_v2, "atomic", items),
        "v2",
        422,
        "batch_item_failed",
        {
            "index": 1,
            "code": "duplicate_reference",
            "message": "A transfer with this reference exists already.",
            "details": {"reference": "twice"},
        },
    )
    assert snapshot(api_v2, a, b, c) == before

    document = batch_of(post_batch(api_v2, "independent", items))
    assert outcomes(document) == [
        ("posted", None, "twice"),
        ("failed", "duplicate_reference", "twice"),
    ]
    assert balances(api_v2, b) == money(2_100)
    assert balances(api_v2, c) == money(0)


def test_a_reference_across_batches(api_v2, trio):
    a, b, c = trio
    first = batch_of(post_batch(api_v2, "atomic", [item(a, b, 100, reference="across")]))
    assert outcomes(first) == [("posted", None, "across")]

    second = batch_of(
        post_batch(api_v2, "independent", [item(a, c, 100, reference="across"), item(a, c, 1)])
    )

    assert outcomes(second) == [("failed", "duplicate_reference", "across"), ("posted", None, None)]
    assert_error(
        transfer(api_v2, a, c, 5, reference="across"),
        "v2",
        422,
        "duplicate_reference",
        {"reference": "across"},
    )
    assert balances(api_v2, c) == money(1)


def test_a_refused_transfers_reference_is_not_taken(api_v2, trio):
    a, b, c = trio
    before = snapshot(api_v2, a, b, c)

    assert_error(
        transfer(api_v2, c, a, 1, reference="retry-me"), "v2", 422, "insufficient_funds", ANY
    )
    assert snapshot(api_v2, a, b, c) == before

    body = created(transfer(api_v2, a, c, 1, reference="retry-me"), "v2")
    assert body["reference"] == "retry-me"
    # In an independent batch: a failed item's reference is free for a later item.
    document = batch_of(
        post_batch(
            api_v2,
            "independent",
            [item(b, a, 50_000, reference="later"), item(b, a, 50, reference="later")],
        )
    )
    assert outcomes(document) == [
        ("failed", "insufficient_funds", "later"),
        ("posted", None, "later"),
    ]


def test_a_reference_stays_taken_after_a_reversal(api_v2, trio):
    a, b, _ = trio
    body = created(transfer(api_v2, a, b, 100, reference="reversed-ref"), "v2")
    created(api_v2.post(f"/transfers/{body['transferId']}/reversals", {}), "v2")

    assert_error(
        transfer(api_v2, a, b, 100, reference="reversed-ref"),
        "v2",
        422,
        "duplicate_reference",
        {"reference": "reversed-ref"},
    )
    shown = resource(api_v2.get(f"/transfers/{body['transferId']}"), "v2")
    assert (shown["status"], shown["reference"]) == ("reversed", "reversed-ref")


def test_references_are_per_institution(api_v2, trio, other_institution):
    a, b, _ = trio
    created(transfer(api_v2, a, b, 100, reference="shared"), "v2")
    theirs = Api("v2", issue_key(other_institution)[1])
    source = funded_account(theirs, 500)["accountId"]
    destination = open_account(theirs)["accountId"]

    body = created(transfer(theirs, source, destination, 100, reference="shared"), "v2")

    assert body["reference"] == "shared"


def test_reference_validation(api_v2, trio):
    a, b, _ = trio
    before = snapshot(api_v2, a, b)
    for reference in ("", "x" * 101, "line\nbreak", "bell\x07", 5):
        assert_validation_error(
            transfer(api_v2, a, b, 100, reference=reference), "v2", {"reference": ANY_MESSAGE}
        )
        assert_validation_error(
            post_batch(api_v2, "atomic", [item(a, b, 1), item(a, b, 1, reference=reference)]),
            "v2",
            {"transfers.1.reference": ANY_MESSAGE},
        )
    assert snapshot(api_v2, a, b) == before

    longest = "R" * 100
    assert created(transfer(api_v2, a, b, 100, reference=longest), "v2")["reference"] == longest
    printable = "Pay #7 / batch-2026_11: ok!"
    assert created(transfer(api_v2, a, b, 1, reference=printable), "v2")["reference"] == printable


def test_v1_transfers_know_no_reference(api_v1, api_v2, trio):
    a, b, _ = trio
    before = snapshot(api_v2, a, b)

    assert_validation_error(
        transfer(api_v1, a, b, 100, reference="v1-ref"), "v1", {"reference": "Unknown field."}
    )
    assert snapshot(api_v2, a, b) == before

    body = created(transfer(api_v1, a, b, 100), "v1")
    assert "reference" not in body and "batchId" not in body
    # The reference a v1 request could not take is free.
    assert created(transfer(api_v2, a, b, 1, reference="v1-ref"), "v2")["reference"] == "v1-ref"
    # A v2 transfer with a reference shows in v1 without it.
    v2 = created(transfer(api_v2, a, b, 1, reference="seen-in-v1"), "v2")
    shown = resource(api_v1.get(f"/transfers/{v2['transferId']}"), "v1")
    assert "reference" not in shown and "batchId" not in shown


# --- idempotent replays
def test_replay_of_an_independent_batch(api_v2, trio):
    a, b, c = trio
    key = uuid.uuid4()
    items = [item(a, b, 100, reference="rp-1"), item(c, a, 1), item(a, c, 250)]

    first = post_batch(api_v2, "independent", items, idempotency_key=key)
    second = post_batch(api_v2, "independent", items, idempotency_key=key)

    document = batch_of(first)
    assert outcomes(document) == [
        ("posted", None, "rp-1"),
        ("failed", "insufficient_funds", None),
        ("posted", None, None),
    ]
    assert second.status_code == 201
    assert second.content == first.content
    assert second["Idempotent-Replayed"] == "true"
    assert not first.has_header("Idempotent-Replayed")
    assert TransferBatch.objects.count() == 1
    assert Transfer.objects.filter(batch__isnull=False).count() == 2
    assert balances(api_v2, a) == money(10_000 - 100 - 250)
    assert balances(api_v2, b) == money(2_100)
    assert balances(api_v2, c) == money(250)
    assert len(events(api_v2, "transfer.posted")) == 2

    other = post_batch(api_v2, "independent", items[:2], idempotency_key=key)
    assert_error(other, "v2", 422, "idempotency_key_reused")
    assert TransferBatch.objects.count() == 1


def test_replay_of_a_refused_atomic_batch(api_v2, trio):
    a, b, c = trio
    key = uuid.uuid4()
    items = [item(a, b, 100), item(c, a, 500)]
    before = snapshot(api_v2, a, b, c)

    first = post_batch(api_v2, "atomic", items, idempotency_key=key)
    assert_error(first, "v2", 422, "batch_item_failed", ANY)
    assert snapshot(api_v2, a, b, c) == before
    # Enough money now, but the key answers what it answered.
    created(adjust(api_v2, c, "credit", 1_000), "v2")
    after_credit = snapshot(api_v2, a, b, c)
    second = post_batch(api_v2, "atomic", items, idempotency_key=key)

    assert (second.status_code, second.content) == (422, first.content)
    assert second["Idempotent-Replayed"] == "true"
    assert snapshot(api_v2, a, b, c) == after_credit
    assert TransferBatch.objects.count() == 0
    # A new key runs it.
    document = batch_of(post_batch(api_v2, "atomic", items))
    assert document["posted"] == 2


def test_a_batch_needs_an_idempotency_key_and_money_write(api_v2, trio, institution):
    a, b, _ = trio
    before = snapshot(api_v2, a, b)

    assert_error(
        post_batch(api_v2, "atomic", [item(a, b, 1)], idempotency_key=None),
        "v2",
        400,
        "idempotency_key_missing",
    )
    reader = Api("v2", issue_key(institution, scopes=["read"])[1])
    assert_error(
        post_batch(reader, "atomic", [item(a, b, 1)]),
        "v2",
        403,
        "permission_denied",
        {"requiredScope": "money:write"},
    )
    # A PAN item needs cards:sensitive (the default test key lacks it): refused before any
    # lookup.
    pan_item = {**item(a, b, 1), "destination": {"pan": "4111111111111111"}}
    assert_error(
        post_batch(api_v2, "independent", [item(a, b, 1), pan_item]),
        "v2",
        403,
        "permission_denied",
        {"requiredScope": "cards:sensitive"},
    )
    assert snapshot(api_v2, a, b) == before


# --- validation
def test_invalid_batches_are_refused_whole(api_v2, trio):
    a, b, _ = trio
    valid = item(a, b, 100)
    before = snapshot(api_v2, a, b)
    cases = [
        ({"mode": "atomic", "transfers": []}, {"transfers"}),
        ({"mode": "atomic", "transfers": [valid] * 1_001}, {"transfers"}),
        ({"mode": "partial", "transfers": [valid]}, {"mode"}),
        ({"mode": "ATOMIC", "transfers": [valid]}, {"mode"}),
        ({"transfers": [valid]}, {"mode"}),
        ({"mode": "atomic"}, {"transfers"}),
        ({"mode": "atomic", "transfers": valid}, {"transfers"}),
        ({"mode": "atomic", "transfers": [valid], "extra": 1}, {"extra"}),
    ]
    for body, keys in cases:
        error = assert_error(
            api_v2.post("/transfer-batches", body), "v2", 400, "validation_error", ANY
        )
        assert set(error["details"]) == keys, (body if len(str(body)) < 500 else keys, error)
    assert snapshot(api_v2, a, b) == before


def test_an_invalid_item_refuses_the_batch_with_its_path(api_v2, trio):
    a, b, _ = trio
    valid = item(a, b, 100)
    before = snapshot(api_v2, a, b)
    exactly_one = "Give exactly one of accountId, accountNumber, cardId or pan."
    cases = [
        ([valid, valid, valid, {**valid, "amount": "100"}], {"transfers.3.amount": AMOUNT_MESSAGE}),
        ([valid, {**valid, "amount": 0}], {"transfers.1.amount": ANY_MESSAGE}),
        ([valid, {**valid, "iban": "DE89"}], {"transfers.1.iban": "Unknown field."}),
        ([{**valid, "source": {"iban": "DE89"}}], {"transfers.0.source.iban": "Unknown field."}),
        ([valid, {**valid, "destination": {}}], {"transfers.1.destination": exactly_one}),
        ([valid, "a->b"], {"transfers.1": ANY_MESSAGE}),
    ]
    for mode in ("atomic", "independent"):
        for items, details in cases:
            assert_validation_error(post_batch(api_v2, mode, items), "v2", details)
    assert snapshot(api_v2, a, b) == before


def test_an_item_from_and_to_one_account_posts_nothing(api_v2, trio):
    a, b, _ = trio
    account = funded_account(api_v2, 1_000)
    same = {
        **item(account["accountId"], b, 100),
        "destination": {"accountNumber": account["accountNumber"]},
    }
    message = "Must be another account than the source's."
    before = snapshot(api_v2, a, b, account["accountId"])

    # POST /transfers refuses it with 400 on `destination`; the contract does not say whether a
    # batch refuses it as a body (with the item's path) or as a failed item, but nothing may
    # post for it.
    atomic = post_batch(api_v2, "atomic", [item(a, b, 1), same])
    if atomic.status_code == 400:
        assert_validation_error(atomic, "v2", {"transfers.1.destination": message})
    else:
        assert_item_failed(atomic, 1, "validation_error", {"destination": message})
    assert snapshot(api_v2, a, b, account["accountId"]) == before

    independent = post_batch(api_v2, "independent", [item(a, b, 1), same])
    if independent.status_code == 201:
        assert outcomes(batch_of(independent)) == [
            ("posted", None, None),
            ("failed", "validation_error", None),
        ]
        assert balances(api_v2, b) == money(2_001)
    else:
        assert_validation_error(independent, "v2", {"transfers.1.destination": message})
        assert snapshot(api_v2, a, b, account["accountId"]) == before
    assert balances(api_v2, account["accountId"]) == money(1_000)


# --- the property: a batch is its transfers one by one
def institution_api() -> Api:
    """A client of a new institution (one per hypothesis example: references and accounts of
    one example never meet another's)."""
    return Api("v2", issue_key(InstitutionFactory())[1])


@st.composite
def scenarios(draw):
    count = draw(st.integers(min_value=3, max_value=4))
    funds = draw(st.lists(st.sampled_from([0, 300, 1_000, 2_500]), min_size=count, max_size=count))
    moves = draw(
        st.lists(
            st.tuples(
                st.integers(min_value=0, max_value=count - 1),
                st.integers(min_value=1, max_value=count - 1),
                st.integers(min_value=1, max_value=1_500),
                st.none() | st.sampled_from(["r-1", "r-2", "r-3"]),
            ),
            min_size=1,
            max_size=10,
        )
    )
    return funds, [(s, (s + step) % count, amount, ref) for s, step, amount, ref in moves]


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(scenario=scenarios())
def test_an_independent_batch_ends_as_its_transfers_one_by_one(db, scenario):
    funds, moves = scenario
    batch_api, single_api = institution_api(), institution_api()
    batched = [funded_account(batch_api, amount)["accountId"] for amount in funds]
    singles = [funded_account(single_api, amount)["accountId"] for amount in funds]

    def body(accounts, source, destination, amount, reference):
        fields = {} if reference is None else {"reference": reference}
        return item(accounts[source], accounts[destination], amount, **fields)

    document = batch_of(
        post_batch(batch_api, "independent", [body(batched, *move) for move in moves])
    )
    one_by_one = []
    for move in moves:
        response = single_api.post("/transfers", body(singles, *move))
        if response.status_code == 201:
            one_by_one.append(("posted", None, None, move[3]))
        else:
            error = refusal(response)
            one_by_one.append(("failed", error["code"], error["message"], move[3]))

    assert [
        (r["status"], r.get("code"), r.get("message"), r["reference"]) for r in document["results"]
    ] == one_by_one
    lines = []
    for mine, twin in zip(batched, singles, strict=True):
        assert balances(batch_api, mine) == balances(single_api, twin)
        lines.append(
            tuple(
                [(line["type"], line["amount"]) for line in statement(api, account)]
                for api, account in ((batch_api, mine), (single_api, twin))
            )
        )
    # The same lines; then the same lines in the same order (newest first).
    assert [sorted(batch) for batch, _ in lines] == [sorted(single) for _, single in lines]
    assert [batch for batch, _ in lines] == [single for _, single in lines]
