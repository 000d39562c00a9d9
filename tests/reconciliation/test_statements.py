"""The bank's statements in (docs/reconciliation.md, "Statements in"): camt.053, camt.052, BAI2
and MT940 read into the same lines; stored once by their bytes; refused whole, with nothing
kept, when they are not valid; another institution's statements are not found."""

import base64
from pathlib import Path

import pytest

from accounts.models import Account
from events.models import Event
from institutions import scopes
from reconciliation.formats import StatementRefused, read
from reconciliation.models import BankStatement, BankStatementLine
from tests.accounts.api.helpers import created, listed, resource
from tests.conftest import Api
from tests.factories import InstitutionFactory, issue_key
from tests.payments.test_iso20022_reader_safety import BILLION_LAUGHS, EXTERNAL_ENTITY

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).parent / "fixtures"
DAY = {
    "camt.053": (FIXTURES / "day.camt053.xml").read_bytes(),
    "bai2": (FIXTURES / "day.bai2").read_bytes(),
    "mt940": (FIXTURES / "day.mt940").read_bytes(),
}
# What each of the three formats says of a line (a counterparty's account is camt's only).
COMPARED = (
    "booking_date", "value_date", "amount", "direction", "currency", "bank_reference",
    "end_to_end_id", "remittance", "counterparty_name", "batch_count",
)  # fmt: skip


def camt052() -> bytes:
    return (
        DAY["camt.053"]
        .replace(b"camt.053.001.08", b"camt.052.001.08")
        .replace(b"BkToCstmrStmt>", b"BkToCstmrAcctRpt>")
        .replace(b"<Stmt>", b"<Rpt>")
        .replace(b"</Stmt>", b"</Rpt>")
        .replace(b"OPBD", b"ITBD", 1)
        .replace(b"CLBD", b"ITBD", 1)
    )


def body(content: bytes, fmt: str, name: str = "statement") -> dict:
    return {"format": fmt, "name": name, "contentBase64": base64.b64encode(content).decode()}


def statement_body(tail: bytes = b"") -> dict:
    """A valid MT940 statement's upload (`tail`: other bytes, another statement)."""
    return body(DAY["mt940"] + tail, "mt940")


def bank_api(extra=()):
    institution = InstitutionFactory()
    return institution, Api("v2", issue_key(institution, scopes=[scopes.READ, *extra])[1])


def test_the_same_day_in_camt053_bai2_and_mt940_gives_the_same_lines():
    read_back = {fmt: read(content, fmt) for fmt, content in DAY.items()}
    lines = {
        fmt: [{key: getattr(line, key) for key in COMPARED} for line in statement.lines]
        for fmt, statement in read_back.items()
    }
    assert lines["camt.053"] == lines["bai2"] == lines["mt940"]
    assert lines["camt.053"][0] == {
        "booking_date": lines["camt.053"][0]["booking_date"],
        "value_date": lines["camt.053"][0]["value_date"],
        "amount": 25_000,
        "direction": "credit",
        "currency": "EUR",
        "bank_reference": "BNKREF0001",
        "end_to_end_id": "E2E-0001",
        "remittance": "Invoice 17",
        "counterparty_name": "ACME GMBH",
        "batch_count": None,
    }
    for statement in read_back.values():
        assert (statement.opening_balance, statement.closing_balance) == (100_000, 123_750)
        assert statement.account_last4 == "3000"
        assert str(statement.period_start) == str(statement.period_end) == "2026-11-27"
    assert read_back["camt.053"].lines[0].counterparty_account_last4 == "4931"


def test_camt052_intraday_reads_as_the_same_lines():
    intraday = read(camt052(), "camt.052")
    assert [line.amount for line in intraday.lines] == [25_000, 1_250]
    assert intraday.opening_balance == 100_000


def test_upload_stores_the_header_and_lines_once_and_emits_an_event():
    institution, api = bank_api([scopes.BANK])
    first = created(api.post("/bank-statements", body(DAY["camt.053"], "camt.053")), "v2")
    again = created(api.post("/bank-statements", body(DAY["camt.053"], "camt.053")), "v2")
    assert again == first
    assert BankStatement.objects.filter(institution=institution).count() == 1
    assert first["accountLast4"] == "3000"
    assert (first["openingBalance"], first["closingBalance"], first["lineCount"]) == (
        100_000,
        123_750,
        2,
    )
    mirrored = Account.objects.get(pk=first["accountId"])
    assert mirrored.internal_code == Account.InternalCode.RAIL_SETTLEMENT
    assert mirrored.currency == "EUR"
    # The header, and its proof: none before the statement is reconciled.
    assert resource(api.get(f"/bank-statements/{first['statementId']}"), "v2") == {
        **first,
        "proof": None,
    }
    lines, _ = listed(api.get(f"/bank-statements/{first['statementId']}/lines"))
    assert sorted(line["amount"] for line in lines) == [1_250, 25_000]
    assert "DE89" not in str(lines) and "DE44" not in str(lines)
    [event] = Event.objects.filter(type="bank_statement.received")
    assert event.object_id == first["statementId"]
    assert event.actor_type == "apiKey" and event.actor_id


@pytest.mark.parametrize("fmt", ["bai2", "mt940"])
def test_flat_formats_upload(fmt):
    _, api = bank_api([scopes.BANK])
    made = created(api.post("/bank-statements", body(DAY[fmt], fmt)), "v2")
    assert made["format"] == fmt and made["lineCount"] == 2


PAIN, CAMT = b"pain.001.001.09", b"camt.053.001.08"
REFUSED = {
    "billion laughs": (BILLION_LAUGHS.replace(PAIN, CAMT), "camt.053"),
    "external entity": (EXTERNAL_ENTITY.replace(PAIN, CAMT), "camt.053"),
    "not xml": (b"hello", "camt.053"),
    "other message": (DAY["camt.053"], "camt.052"),
    "xsd": (DAY["camt.053"].replace(b"<CdtDbtInd>CRDT", b"<CdtDbtInd>CRED", 1), "camt.053"),
    "fraction": (DAY["camt.053"].replace(b"250.00<", b"250.001<"), "camt.053"),
    "bai2 totals": (DAY["bai2"].replace(b"49,250000", b"49,250001"), "bai2"),
    "bai2 garbage": (b"01,garbage", "bai2"),
    "mt940 garbage": (b"hello", "mt940"),
    "mt940 not ascii": ("\u00e9".encode(), "mt940"),
    "empty": (b"", "bai2"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_hostile_or_invalid_files_are_refused_whole_and_nothing_is_kept(case):
    content, fmt = REFUSED[case]
    _, api = bank_api([scopes.BANK])
    response = api.post("/bank-statements", body(content, fmt))
    assert response.status_code == 400, response.content
    assert "contentBase64" in str(response.json()), response.json()
    assert not BankStatement.objects.exists() and not BankStatementLine.objects.exists()
    assert not Event.objects.filter(type="bank_statement.received").exists()


def test_reader_refuses_with_a_reason():
    with pytest.raises(StatementRefused, match="camt.053.001.08"):
        read(REFUSED["billion laughs"][0], "camt.053")


def test_upload_needs_the_bank_scope_and_another_institutions_statement_is_not_found():
    _, reader = bank_api()
    assert reader.post("/bank-statements", body(DAY["mt940"], "mt940")).status_code == 403
    _, api = bank_api([scopes.BANK])
    made = created(api.post("/bank-statements", body(DAY["mt940"], "mt940")), "v2")
    _, other = bank_api([scopes.BANK])
    assert other.get(f"/bank-statements/{made['statementId']}").status_code == 404
    assert other.get(f"/bank-statements/{made['statementId']}/lines").status_code == 404
    assert listed(other.get("/bank-statements"))[0] == []
