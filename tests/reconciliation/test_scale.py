"""A run's answer is bounded (docs/reconciliation.md, "Scale"): it lists the first `LISTED` of
its matches and breaks, counts them all, and the rest are read by paging the run's matches and
its breaks. Three credits announced by three expected payments: three matches and three
`bank_only` breaks naming them, and the opening's break; listed two at a time."""

from datetime import date

import pytest

from events.models import Event
from institutions import scopes
from reconciliation.services import matching
from reconciliation.services.expected_payments import expected_payment_create
from reconciliation.services.statements import bank_statement_receive
from tests.accounts.api.helpers import created, listed
from tests.conftest import Api
from tests.factories import InstitutionFactory, issue_key
from tests.reconciliation.test_matching import mt940

pytestmark = pytest.mark.django_db


def test_the_answer_lists_the_first_and_counts_all_and_the_rest_pages(monkeypatch):
    institution = InstitutionFactory(currency="USD")
    api = Api("v2", issue_key(institution, scopes=[scopes.READ, scopes.BANK])[1])
    amounts = (100, 200, 300)
    content = mt940(date(2026, 11, 2), [("C", cents, "/REMI/INVOICE") for cents in amounts])
    statement, _ = bank_statement_receive(
        institution=institution, fmt="mt940", name="day.mt940", content=content
    )
    for cents in amounts:
        expected_payment_create(
            institution=institution,
            currency="USD",
            direction="credit",
            amount=cents,
            metadata={"invoice": str(cents)},
        )
    monkeypatch.setattr(matching, "LISTED", 2)

    answer = created(api.post("/reconciliations", {"statementId": statement.pk}), "v2")

    assert answer["counts"] == {"matches": 3, "breaks": 4, "breaksResolved": 0}
    assert [len(answer["matches"]), len(answer["breaks"])] == [2, 2]
    run = answer["reconciliationId"]
    path = f"/reconciliations/{run}/matches"
    first, cursor = listed(api.get(path, {"limit": 2}))
    rest, end = listed(api.get(path, {"limit": 2, "cursor": cursor}))
    assert end is None
    # Newest first: the run's last match first; each as the answer shows it.
    assert [m["statementLineIds"] for m in first + rest][::-1][:2] == [
        m["statementLineIds"] for m in answer["matches"]
    ]
    assert sorted(m["expectedPaymentId"] is not None for m in first + rest) == [True] * 3
    breaks, _ = listed(api.get("/reconciliation-breaks", {"reconciliationId": run}))
    assert sorted(b["kind"] for b in breaks) == ["bank_only"] * 3 + ["missing_statement"]
    assert listed(api.get("/reconciliation-breaks", {"reconciliationId": "rcn_other"}))[0] == []
    # Written in SQL, each matched expected payment's event still carries its metadata.
    matched = Event.objects.filter(type="expected_payment.matched")
    assert sorted(e.data["metadata"]["invoice"] for e in matched) == ["100", "200", "300"]
    stranger = Api("v2", issue_key(InstitutionFactory(), scopes=[scopes.READ])[1])
    assert stranger.get(path).status_code == 404
