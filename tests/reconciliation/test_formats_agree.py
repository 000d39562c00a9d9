"""The same day in camt.053, BAI2 and MT940 reconciles alike (issue 51 item 7): the three
formats agree in what a run finds and in the proof, not only in their lines
(test_statements.py compares those); and what another institution has (its rules, its
expected payments, its statements and settlements) is neither listed nor used."""

import pytest

from institutions import scopes
from tests.accounts.api.helpers import created, listed, resource
from tests.conftest import Api
from tests.factories import InstitutionFactory, issue_key
from tests.reconciliation.test_settlements import settlement_of
from tests.reconciliation.test_statements import DAY, body

pytestmark = pytest.mark.django_db

OPENING, CREDIT, FEE = 100_000, 25_000, 1_250  # the day's (tests/reconciliation/fixtures)


def bank_api(institution) -> Api:
    return Api("v2", issue_key(institution, scopes=[scopes.READ, scopes.BANK])[1])


def test_the_same_day_in_three_formats_reconciles_alike_and_no_other_institutions_ids():
    # Another institution has announced the day's credit and has a rule: were they seen by
    # the others' runs, the credit would be matched as expected.
    other = InstitutionFactory()
    theirs = bank_api(other)
    announced = {
        "currency": "EUR",
        "direction": "credit",
        "amount": CREDIT,
        "reference": "invoice 17",
        "dateFrom": "2026-11-26",
    }
    expected = created(theirs.post("/expected-payments", announced), "v2")["expectedPaymentId"]
    remittance = {"field": "remittance", "operator": "equals"}
    rule = {"name": "fees", "cardinality": "one_to_one", "conditions": [remittance]}
    assert created(theirs.post("/reconciliation-rules", rule), "v2")["position"] == 1
    their_statement = created(theirs.post("/bank-statements", body(DAY["mt940"], "mt940")), "v2")
    settlement_of(other)

    found = {}
    for fmt, content in DAY.items():
        api = bank_api(InstitutionFactory())
        statement = created(api.post("/bank-statements", body(content, fmt)), "v2")
        statement_id = statement["statementId"]
        assert statement_id != their_statement["statementId"]  # the same bytes, its own
        answer = created(api.post("/reconciliations", {"statementId": statement_id}), "v2")
        proof = resource(api.get(f"/bank-statements/{statement_id}"), "v2")["proof"]
        breaks = sorted((b["kind"], b["amount"], b["expectedPaymentId"]) for b in answer["breaks"])
        found[fmt] = (answer["matches"], breaks, proof)

        # Nothing of the other institution's is listed, nor found by its id.
        for path in ("/reconciliation-rules", "/expected-payments", "/network-settlements"):
            assert listed(api.get(path))[0] == [], path
        assert [s["statementId"] for s in listed(api.get("/bank-statements"))[0]] == [statement_id]
        assert api.get(f"/expected-payments/{expected}").status_code == 404
        theirs_id = their_statement["statementId"]
        assert api.get(f"/bank-statements/{theirs_id}").status_code == 404
        assert api.post("/reconciliations", {"statementId": theirs_id}).status_code == 404
        # Its rules are not counted in this one's order either.
        assert created(api.post("/reconciliation-rules", rule), "v2")["position"] == 1

    assert found["camt.053"] == found["bai2"] == found["mt940"]
    matches, breaks, proof = found["mt940"]
    assert matches == []
    assert breaks == [
        ("bank_only", -FEE, None),
        ("bank_only", CREDIT, None),
        ("missing_statement", OPENING, None),
    ]
    assert (proof["ledgerBalance"], proof["difference"], proof["holds"]) == (0, 0, True)
    assert resource(theirs.get(f"/expected-payments/{expected}"), "v2")["status"] == "unmatched"
