"""Account statements (docs/statements.md): JSON, CSV and PDF over HTTP, on months with postings
on their boundaries (midnight in Europe/Berlin, both sides), every kind of posting in between.

The clock is moved by hand (`Clock`): `timezone.now()`, the time in new ids (`core.ids`: a
line's position) and a line's `created_at` all read it, so a posting lands at 23:59:59.999 or
00:00:00.000 Berlin time exactly.
"""

import csv
import gc
import io
import tracemalloc
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from pypdf import PdfReader

from accounts.models import Account, StatementLine
from accounts.statement_lines import periods as statements_module
from api.pagination import encode_cursor
from core.ids import _base32
from core.money import money
from institutions import scopes
from institutions.services import institution_create
from tests.accounts.api.helpers import (
    assert_error,
    assert_validation_error,
    balances,
    created,
    funded_account,
    resource,
    transfer,
    unknown_id,
)
from tests.conftest import Api
from tests.factories import issue_key

pytestmark = pytest.mark.django_db

MERCHANT = {"name": "Corner Shop", "mcc": "5411", "countryCode": "276", "channel": "pos"}
# Midnight in Berlin (UTC+1 in winter) is 23:00 UTC the day before.
JAN_END = datetime(2026, 1, 31, 23, 0, tzinfo=UTC)  # 2026-02-01 00:00 Berlin
FEB_END = datetime(2026, 2, 28, 23, 0, tzinfo=UTC)  # 2026-03-01 00:00 Berlin
MS = timedelta(milliseconds=1)


class Clock:
    """The time everything that asks sees, moved forward only (ids must keep their order)."""

    def __init__(self, now: datetime):
        self.now = now

    def set(self, moment: datetime) -> None:
        assert moment >= self.now
        self.now = moment

    def __enter__(self):
        self.stack = ExitStack()
        fake_time = mock.Mock(time_ns=lambda: int(self.now.timestamp() * 1000) * 1_000_000)
        self.stack.enter_context(mock.patch("django.utils.timezone.now", lambda: self.now))
        self.stack.enter_context(mock.patch("core.ids.time", fake_time))
        self.stack.enter_context(mock.patch("core.ids._last", (0, 0)))
        created_at = StatementLine._meta.get_field("created_at")
        self.stack.enter_context(
            mock.patch.object(created_at, "_get_default", lambda: self.now, create=True)
        )
        return self

    def __exit__(self, *exc):
        self.stack.close()


@pytest.fixture
def berlin(db):
    institution, _ = institution_create(name="Berlin Bank", time_zone="Europe/Berlin")
    return institution


@pytest.fixture
def bank(version, berlin):
    return Api(version, issue_key(berlin, scopes=scopes.ALL)[1])


def ok(response, version):
    assert response.status_code in (200, 201), response.content
    return resource(response, version, response.status_code)


def new_card(api, account) -> str:
    from tests.cards.api.helpers import product_rid as card_product_rid

    body = {
        "accountId": account["accountId"],
        "customerId": account["customerId"],
        "cardProductRid": card_product_rid(api, "PREPAID_STANDARD"),
        "form": "virtual",
        "status": "active",
    }
    return created(api.post("/cards", body), api.version)["cardId"]


def authorize(api, card_id: str, amount: int, name: str) -> str:
    body = {
        "cardId": card_id,
        "amount": amount,
        "currency": "EUR",
        "type": "Goods",
        "merchant": {**MERCHANT, "name": name},
    }
    authorization = ok(api.post("/card-authorizations", body), api.version)
    assert authorization["approved"] is True, authorization
    return authorization["authorizationId"]


def adjust(api, account_id: str, direction: str, amount: int, description: str):
    body = {"direction": direction, "amount": amount, "currency": "EUR"}
    return ok(
        api.post(f"/accounts/{account_id}/adjustments", {**body, "description": description}),
        api.version,
    )


def statement(api, account_id: str, first: str, last: str, **params) -> dict:
    response = api.get(f"/accounts/{account_id}/statements", {"from": first, "to": last, **params})
    return resource(response, api.version)


def all_lines(api, path: str, params: dict) -> tuple[dict, list]:
    """The statement and every line, page after page (`limit` 2): the totals on every page."""
    first = resource(api.get(path, {**params, "limit": 2}), api.version)
    lines, page = list(first["lines"]), first
    while page["hasMore"]:
        page = resource(
            api.get(path, {**params, "limit": 2, "cursor": page["nextCursor"]}), api.version
        )
        assert {k: v for k, v in page.items() if k not in ("lines", "nextCursor", "hasMore")} == {
            k: v for k, v in first.items() if k not in ("lines", "nextCursor", "hasMore")
        }
        lines += page["lines"]
    assert len(lines) == first["lineCount"]
    return first, lines


def csv_of(api, account_id: str, first: str, last: str) -> list[dict]:
    response = api.get(
        f"/accounts/{account_id}/statements",
        {"from": first, "to": last},
        headers={"Accept": "text/csv"},
    )
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == (
        f'attachment; filename="statement-{account_id}-{first}-{last}.csv"'
    )
    text = b"".join(response.streaming_content).decode()
    assert text.endswith("\r\n") and "\n" not in text.replace("\r\n", "")
    return list(csv.DictReader(io.StringIO(text, newline="")))


def pdf_text(api, account_id: str, month: str) -> str:
    response = api.get(
        f"/accounts/{account_id}/statements/{month}", headers={"Accept": "application/pdf"}
    )
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/pdf"
    assert response.content.startswith(b"%PDF")
    reader = PdfReader(io.BytesIO(response.content))
    return "\n".join(page.extract_text() for page in reader.pages)


def test_statements_add_up_across_berlin_midnights_in_json_csv_and_pdf(bank, version, berlin):
    a_jan = b_jan = None
    with Clock(datetime(2026, 1, 10, 9, 0, tzinfo=UTC)) as clock:
        account = funded_account(bank, 100_000)
        other = funded_account(bank, 50_000)
        a, b = account["accountId"], other["accountId"]
        card = new_card(bank, account)

        clock.set(datetime(2026, 1, 20, 12, tzinfo=UTC))  # authorized, then reversed: no money
        reversed_auth = authorize(bank, card, 3_000, "Reversed Shop")
        clock.set(datetime(2026, 1, 21, 12, tzinfo=UTC))
        ok(bank.post(f"/card-authorizations/{reversed_auth}/reversals", {}), version)

        clock.set(datetime(2026, 1, 25, 12, tzinfo=UTC))  # two-phase: posted in February
        pending = ok(
            transfer(
                bank,
                a,
                b,
                4_000,
                description="Two phase",
                hold={"expiresAt": "2026-02-20T00:00:00Z"},
            ),
            version,
        )["transferId"]
        clock.set(datetime(2026, 1, 26, 12, tzinfo=UTC))  # in, reversed in February
        incoming = ok(transfer(bank, b, a, 2_500, description="From B"), version)["transferId"]

        clock.set(JAN_END - 2 * MS)  # 23:59:59.998 Berlin: January
        ok(transfer(bank, a, b, 1_000, description="Last of January"), version)
        clock.set(JAN_END - MS)  # 23:59:59.999: a January line, presented in February
        boundary_auth = authorize(bank, card, 2_000, "Midnight Bar")
        clock.set(JAN_END)  # 00:00:00.000 Berlin: February
        ok(bank.post(f"/card-authorizations/{boundary_auth}/presentments", {}), version)
        clock.set(JAN_END + MS)
        adjust(bank, a, "debit", 500, "First of February")
        a_jan = balances(bank, a)

        clock.set(datetime(2026, 2, 2, 12, tzinfo=UTC))
        ok(bank.patch(f"/transfers/{pending}", {"status": "posted", "amount": 3_500}), version)
        clock.set(datetime(2026, 2, 3, 12, tzinfo=UTC))
        ok(bank.post(f"/transfers/{incoming}/reversals", {}), version)
        clock.set(datetime(2026, 2, 5, 12, tzinfo=UTC))
        body = {"cardId": card, "amount": 700, "currency": "EUR", "merchant": MERCHANT}
        ok(bank.post("/card-returns", body), version)
        clock.set(datetime(2026, 2, 10, 12, tzinfo=UTC))
        february_auth = authorize(bank, card, 1_200, "February Shop")
        clock.set(datetime(2026, 2, 11, 12, tzinfo=UTC))
        ok(bank.post(f"/card-authorizations/{february_auth}/presentments", {}), version)
        clock.set(FEB_END - MS)  # 23:59:59.999 Berlin, 28 February
        adjust(bank, a, "credit", 300, "Last of February")
        clock.set(FEB_END)  # 00:00:00.000 Berlin, 1 March
        adjust(bank, a, "debit", 200, "First of March")
        clock.set(datetime(2026, 3, 5, 12, tzinfo=UTC))  # held, never posted
        ok(transfer(bank, a, b, 600, description="Still pending", hold={}), version)

        clock.set(datetime(2026, 4, 2, 8, tzinfo=UTC))
        b_jan = b
        path = f"/accounts/{a}/statements"
        january, january_lines = all_lines(bank, path, {"from": "2026-01-01", "to": "2026-01-31"})
        february, february_lines = all_lines(bank, path, {"from": "2026-02-01", "to": "2026-02-28"})
        march, march_lines = all_lines(bank, path, {"from": "2026-03-01", "to": "2026-03-31"})
        quarter, quarter_lines = all_lines(bank, path, {"from": "2026-01-01", "to": "2026-03-31"})
        final = balances(bank, a)
        csvs = {
            name: csv_of(bank, a, first, last)
            for name, first, last in [
                ("january", "2026-01-01", "2026-01-31"),
                ("february", "2026-02-01", "2026-02-28"),
                ("march", "2026-03-01", "2026-03-31"),
            ]
        }
        pdfs = {month: pdf_text(bank, a, month) for month in ("2026-01", "2026-02", "2026-03")}
        monthly_json = resource(bank.get(f"/accounts/{a}/statements/2026-02"), version)

    assert a_jan is not None and b_jan == b
    # January: the load, the transfer in, and the transfer at 23:59:59.998; the two
    # authorizations move nothing in January (one reversed, one presented at 00:00 February).
    assert january["accountId"] == a and january["currency"] == "EUR"
    assert (january["from"], january["to"], january["timeZone"]) == (
        "2026-01-01",
        "2026-01-31",
        "Europe/Berlin",
    )
    assert january["openingBalance"] == 0
    assert january["totals"]["credits"] == 102_500
    assert january["totals"]["debits"] == 1_000
    assert january["closingBalance"] == 101_500
    assert january["totals"]["byType"]["CashInc"] == {"credits": 102_500, "debits": 0, "count": 2}
    assert january["totals"]["byType"]["CashDec"] == {"credits": 0, "debits": 1_000, "count": 1}
    assert january["totals"]["byType"]["Goods"] == {"credits": 0, "debits": 0, "count": 0}
    assert [line["description"] for line in january_lines] == [
        "",  # the load
        "Reversed Shop",
        "Two phase",
        "From B",
        "Last of January",
        "Midnight Bar",
    ]
    assert [line["status"] for line in january_lines] == [
        "posted",
        "reversed",
        "posted",
        "posted",
        "posted",
        "posted",
    ]
    # February: opens where January closed; the presentment at 00:00:00.000 of a January line,
    # the two-phase transfer posted for 3,500, the reversal, the return, the adjustments.
    assert february["openingBalance"] == january["closingBalance"]
    assert february["totals"]["debits"] == 2_000 + 500 + 3_500 + 2_500 + 1_200
    assert february["totals"]["credits"] == 700 + 300
    assert february["closingBalance"] == 92_800
    assert february["totals"]["byType"]["Goods"] == {"credits": 0, "debits": 3_200, "count": 2}
    assert february["totals"]["byType"]["Return"] == {"credits": 700, "debits": 0, "count": 1}
    assert [line["description"] for line in february_lines][0] == "First of February"
    assert [line["description"] for line in february_lines][-1] == "Last of February"
    # March: the debit at 00:00:00.000 of 1 March; the pending transfer moves nothing.
    assert march["openingBalance"] == february["closingBalance"]
    assert march["totals"] == {
        "credits": 0,
        "debits": 200,
        "byType": {
            **march["totals"]["byType"],
            "CashDec": {"credits": 0, "debits": 200, "count": 1},
        },
    }
    assert march["closingBalance"] == 92_600 == final["posted"]
    assert [(line["description"], line["status"]) for line in march_lines] == [
        ("First of March", "posted"),
        ("Still pending", "pending"),
    ]
    # The quarter is the three months.
    assert quarter["openingBalance"] == 0 and quarter["closingBalance"] == 92_600
    assert quarter_lines == january_lines + february_lines + march_lines
    for document in (january, february, march, quarter):
        totals = document["totals"]
        assert (
            document["openingBalance"] + totals["credits"] - totals["debits"]
            == (document["closingBalance"])
        )
        assert totals["credits"] == sum(t["credits"] for t in totals["byType"].values())
        assert totals["debits"] == sum(t["debits"] for t in totals["byType"].values())
    # Lines in the shape of GET /accounts/{id}/transactions.
    listed = bank.get(f"/accounts/{a}/transactions", {"limit": 100}).json()["data"]
    by_id = {line["transactionId"]: line for line in listed}
    for line in quarter_lines:
        assert by_id[line["transactionId"]] == line
    assert len(quarter_lines) == len(listed)

    # CSV: every line of the month, the same lines, amounts with the currency's exponent.
    for rows, lines in (
        (csvs["january"], january_lines),
        (csvs["february"], february_lines),
        (csvs["march"], march_lines),
    ):
        assert [row["transactionId"] for row in rows] == [line["transactionId"] for line in lines]
        for row, line in zip(rows, lines, strict=True):
            assert row["amount"] == f"{line['amount'] // 100}.{line['amount'] % 100:02d}"
            assert (row["type"], row["status"], row["direction"]) == (
                line["type"],
                line["status"],
                line["direction"],
            )
    assert csvs["january"][-1]["date"] == "2026-01-31"  # 23:59:59.999 Berlin
    assert csvs["march"][0]["date"] == "2026-03-01"  # 00:00:00.000 Berlin (28 Feb in UTC)
    # The posted lines of the CSV add up to the month, but for lines that move money later.
    csv_posted = sum(
        (1 if row["direction"] == "credit" else -1) * int(row["amount"].replace(".", ""))
        for row in csvs["march"]
        if row["status"] == "posted"
    )
    assert march["openingBalance"] + csv_posted == march["closingBalance"]

    # PDF: the institution, the masked account, the balances, every line.
    for month, document, lines in (
        ("2026-01", january, january_lines),
        ("2026-02", february, february_lines),
        ("2026-03", march, march_lines),
    ):
        text = pdfs[month]
        assert berlin.name in text
        assert f"****{account['accountNumber'][-4:]}" in text
        assert account["accountNumber"] not in text
        assert f"Opening balance: {money(document['openingBalance'], 'EUR')}" in text
        assert f"Closing balance: {money(document['closingBalance'], 'EUR')}" in text
        assert f"Credits: {money(document['totals']['credits'], 'EUR')}" in text
        assert f"Debits: {money(document['totals']['debits'], 'EUR')}" in text
        for line in lines:
            sign = "" if line["direction"] == "credit" else "-"
            assert f"{sign}{money(line['amount'], 'EUR')}" in text
            assert line["description"] in text
        assert text.count(" EUR") >= len(lines) + 4
    # JSON for the month's path: the range's document for that month.
    first_page = resource(
        bank.get(f"/accounts/{a}/statements", {"from": "2026-02-01", "to": "2026-02-28"}),
        version,
    )
    assert monthly_json == first_page


def test_validation_errors_are_json_whatever_accept_asks(api, version):
    account = funded_account(api, 0)["accountId"]
    path = f"/accounts/{account}/statements"
    for accept in ("application/json", "text/csv"):
        headers = {"Accept": accept}
        assert_validation_error(
            api.get(path, {"to": "2026-01-31"}, headers=headers),
            version,
            {"from": "Required: a date, YYYY-MM-DD."},
        )
        assert_validation_error(
            api.get(path, {"from": "20260101", "to": "2026-01-31"}, headers=headers),
            version,
            {"from": "Must be a date, YYYY-MM-DD."},
        )
        assert_validation_error(
            api.get(path, {"from": "2026-02-30", "to": "2026-03-31"}, headers=headers),
            version,
            {"from": "Must be a date, YYYY-MM-DD."},
        )
        assert_validation_error(
            api.get(path, {"from": "2026-02-01", "to": "2026-01-31"}, headers=headers),
            version,
            {"to": "Must not be before from."},
        )
        assert_validation_error(
            api.get(path, {"from": "2024-01-01", "to": "2025-01-01"}, headers=headers),
            version,
            {"to": "A statement covers at most 366 days."},
        )
    assert api.get(path, {"from": "2024-01-01", "to": "2024-12-31"}).status_code == 200
    assert_validation_error(
        api.get(path, {"from": "2026-01-01", "to": "2026-01-31", "cursor": "AA"}),
        version,
        {"cursor": "Not a valid cursor."},
    )
    for month in ("2026-13", "2026-1", "26-01", "2026-01-01"):
        for accept in ("application/json", "application/pdf"):
            assert_validation_error(
                api.get(f"{path}/{month}", headers={"Accept": accept}),
                version,
                {"month": "Must be a month, YYYY-MM."},
            )


def test_another_institutions_account_is_not_found(api, other_api, version):
    account = funded_account(api, 100)["accountId"]
    params = {"from": "2026-01-01", "to": "2026-01-31"}
    for client, account_id in ((other_api, account), (api, unknown_id("acc"))):
        for accept in ("application/json", "text/csv"):
            assert_error(
                client.get(
                    f"/accounts/{account_id}/statements", params, headers={"Accept": accept}
                ),
                version,
                404,
                "not_found",
                message="No account with this id.",
            )
        assert_error(
            client.get(
                f"/accounts/{account_id}/statements/2026-01", headers={"Accept": "application/pdf"}
            ),
            version,
            404,
            "not_found",
            message="No account with this id.",
        )


def test_accept_picks_the_format(api, version):
    account = funded_account(api, 100)["accountId"]
    path = f"/accounts/{account}/statements"
    params = {"from": "2026-01-01", "to": "2026-12-31"}
    for accept, csv_expected in (
        ("text/csv", True),
        ("text/csv;q=0.5, application/json", False),
        ("application/json;q=0.1, text/csv", True),
        ("*/*", False),
        ("application/pdf", False),  # no PDF of a range: JSON
    ):
        response = api.get(path, params, headers={"Accept": accept})
        assert response.status_code == 200
        assert response.streaming is csv_expected, accept


def _bulk_lines(
    account: Account, count: int, start: datetime = datetime(2026, 5, 1, 8, tzinfo=UTC)
) -> None:
    """`count` lines one millisecond apart from `start` (default 2026-05-01 08:00 UTC), written
    directly."""
    StatementLine.objects.bulk_create(
        StatementLine(
            id=f"txn_{_base32(int((start + i * MS).timestamp() * 1000), 10)}{_base32(i, 16)}",
            institution_id=account.institution_id,
            account=account,
            type=StatementLine.Type.CASH_INC,
            settlement_status=StatementLine.SettlementStatus.PRESENTMENT,
            amount=100 + i,
            currency="EUR",
            description=f"Line {i}",
            created_at=start + i * MS,
        )
        for i in range(count)
    )


def test_csv_streams_in_chunks_within_fixed_memory(api, version, monkeypatch):
    account_id = funded_account(api, 0)["accountId"]
    account = Account.objects.get(pk=account_id)
    count = 4_000
    _bulk_lines(account, count)
    params = {"from": "2026-05-01", "to": "2026-05-01"}
    response = api.get(f"/accounts/{account_id}/statements", params, headers={"Accept": "text/csv"})
    assert response.streaming
    chunks = iter(response.streaming_content)
    header = next(chunks)
    assert header == (
        b"date,createdAt,transactionId,type,settlementStatus,status,direction,amount,currency,"
        b"description,merchantName,cardId,authorizationId,transferId\r\n"
    )
    first = next(chunks).decode()
    assert first.startswith("2026-05-01,2026-05-01T08:00:00.000Z,txn_")
    assert first.endswith(",CashInc,Presentment,posted,credit,1.00,EUR,Line 0,,,,\r\n")
    # Read the rest with a small memory bound and one query per CHUNK lines (keyset chunks).
    tracemalloc.start()
    with CaptureQueriesContext(connection) as queries:
        rows = 1 + sum(1 for _ in chunks)
        _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert rows == count
    # The first chunk was read for the first row; then one query per chunk, and the last
    # (a full chunk) asks once more to find nothing.
    assert len(queries) == count // statements_module.CHUNK
    assert peak < 3_000_000, peak


def test_csv_memory_does_not_grow_with_the_lines(api, version, monkeypatch):
    """A chunk of 50 lines: 2,000 lines peak no higher than 400 would (not a list of all).

    CPython keeps up to 2,000 freed tuples of each small size for reuse, and tracemalloc counts
    them: the first pass fills that free list with psycopg's row tuples (about 350 kB, which
    looked like growth), and a full collection empties it. So a first pass fills it, and the
    collector is off while measuring; with it off, garbage made per chunk would show as growth.
    """
    monkeypatch.setattr(statements_module, "CHUNK", 50)
    account_id = funded_account(api, 0)["accountId"]
    account = Account.objects.get(pk=account_id)
    _bulk_lines(account, 2_000)

    def peak_of(lines: int) -> int:
        from accounts.statement_lines.periods import Period, statement_lines_stream

        period = Period(
            first=datetime(2026, 5, 1).date(),  # noqa: DTZ001
            last=datetime(2026, 5, 1).date(),  # noqa: DTZ001
            time_zone="UTC",
        )
        stream = statement_lines_stream(account=account, period=period)
        tracemalloc.start()
        seen = 0
        for _ in stream:
            seen += 1
            if seen == lines:
                break
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return peak

    peak_of(2_000)
    gc.disable()
    try:
        small, large = peak_of(400), peak_of(2_000)
    finally:
        gc.enable()
    assert large < small * 1.5 + 50_000, (small, large)


def test_a_line_with_a_formula_description_is_quoted_in_csv(api, version):
    account = funded_account(api, 0)["accountId"]
    adjust(api, account, "credit", 100, "=HYPERLINK(1)")
    today = datetime.now(UTC).date()
    rows = csv_of(
        api,
        account,
        (today - timedelta(days=1)).isoformat(),
        (today + timedelta(days=1)).isoformat(),
    )
    assert [row["description"] for row in rows] == ["'=HYPERLINK(1)"]


def _figures(page: dict) -> dict:
    return {k: v for k, v in page.items() if k not in ("lines", "nextCursor", "hasMore")}


def test_pages_after_the_first_do_not_compute_the_totals_again(api, version):
    account_id = funded_account(api, 0)["accountId"]
    account = Account.objects.get(pk=account_id)
    _bulk_lines(account, 5)
    path = f"/accounts/{account_id}/statements"
    period = {"from": "2026-05-01", "to": "2026-05-31"}
    with CaptureQueriesContext(connection) as first_queries:
        first = resource(api.get(path, {**period, "limit": 2}), version)
    # The first page computes them: the balances (entries) and the line count.
    assert any("accounts_entry" in q["sql"] for q in first_queries.captured_queries)
    assert first["lineCount"] == 5 and first["totals"]["credits"] == 0
    pages, page = [first], first
    while page["hasMore"]:
        with CaptureQueriesContext(connection) as queries:
            response = api.get(path, {**period, "limit": 2, "cursor": page["nextCursor"]})
            page = resource(response, version)
        # The next pages read their lines and nothing else of the period: no balance, no totals
        # (they join the entries), no COUNT.
        sqls = [q["sql"] for q in queries.captured_queries]
        assert not [sql for sql in sqls if "accounts_entry" in sql or "COUNT(" in sql], sqls
        assert _figures(page) == _figures(first)
        pages.append(page)
    assert [len(p["lines"]) for p in pages] == [2, 2, 1]
    assert [line["description"] for p in pages for line in p["lines"]] == [
        f"Line {i}" for i in range(5)
    ]


def test_a_statement_cursor_is_signed_and_bound_to_its_statement(api, version):
    account_id = funded_account(api, 0)["accountId"]
    other_id = funded_account(api, 0)["accountId"]
    _bulk_lines(Account.objects.get(pk=account_id), 3)
    _bulk_lines(Account.objects.get(pk=other_id), 3, start=datetime(2026, 5, 2, 8, tzinfo=UTC))
    path = f"/accounts/{account_id}/statements"
    period = {"from": "2026-05-01", "to": "2026-05-31"}
    first = resource(api.get(path, {**period, "limit": 1}), version)
    cursor = first["nextCursor"]
    # Another figure in the cursor (its payload changed, its signature kept) is refused.
    payload, _, signature = cursor.rpartition(":")
    other_signature = signature[:-1] + ("B" if signature.endswith("A") else "A")
    for forged in (f"{payload}x:{signature}", f"{payload}:{other_signature}", "AA:BB"):
        assert_validation_error(
            api.get(path, {**period, "limit": 1, "cursor": forged}),
            version,
            {"cursor": "Not a valid cursor."},
        )
    # Another period's, another account's statement: refused, its figures would be wrong there.
    for other_path, other_period in (
        (path, {"from": "2026-05-01", "to": "2026-05-30"}),
        (f"/accounts/{other_id}/statements", period),
        (f"{path}/2026-05", {}),  # the month's document is the same statement: accepted below
    ):
        response = api.get(other_path, {**other_period, "limit": 1, "cursor": cursor})
        if other_period:
            assert_validation_error(
                response, version, {"cursor": "Not a cursor of this statement."}
            )
        else:
            assert resource(response, version)["lines"][0]["description"] == "Line 1"
    # A plain cursor (a line's position, as before the figures travelled) still pages.
    legacy = encode_cursor(first["lines"][0]["transactionId"])
    page = resource(api.get(path, {**period, "limit": 5, "cursor": legacy}), version)
    assert [line["description"] for line in page["lines"]] == ["Line 1", "Line 2"]
    assert _figures(page) == _figures(first)


def test_a_pdf_of_more_lines_than_the_bound_is_refused_and_points_to_the_csv(
    api, version, settings
):
    settings.STATEMENT_PDF_MAX_LINES = 3
    account_id = funded_account(api, 0)["accountId"]
    account = Account.objects.get(pk=account_id)
    _bulk_lines(account, 3)
    path = f"/accounts/{account_id}/statements/2026-05"
    pdf = {"Accept": "application/pdf"}
    response = api.get(path, headers=pdf)
    assert response.status_code == 200 and response.content.startswith(b"%PDF")

    _bulk_lines(account, 1, start=datetime(2026, 5, 31, 8, tzinfo=UTC))  # the 4th line
    with CaptureQueriesContext(connection) as queries:
        response = api.get(path, headers=pdf)
    error = assert_error(
        response,
        version,
        422,
        "statement_too_large",
        details={
            "maxLines": 3,
            "csvPath": f"/TX/{version}/accounts/{account_id}/statements"
            "?from=2026-05-01&to=2026-05-31",
            "accept": "text/csv",
        },
    )
    assert "CSV" in error["message"]
    # Refused after one bounded COUNT of the lines: no balance, no totals, nothing laid out.
    sqls = [q["sql"] for q in queries.captured_queries]
    counts = [sql for sql in sqls if "COUNT(" in sql]
    assert len(counts) == 1 and "LIMIT 4" in counts[0], sqls
    assert not [sql for sql in sqls if "accounts_entry" in sql], sqls
    # The CSV it points to has the month's four lines.
    csv_response = api.client.get(
        error["details"]["csvPath"], headers=api.headers({"Accept": "text/csv"})
    )
    assert csv_response.status_code == 200
    rows = list(csv.DictReader(io.StringIO(b"".join(csv_response.streaming_content).decode())))
    assert [row["description"] for row in rows] == ["Line 0", "Line 1", "Line 2", "Line 0"]
    # JSON of the same month is not bounded (it pages).
    assert resource(api.get(path), version)["lineCount"] == 4
