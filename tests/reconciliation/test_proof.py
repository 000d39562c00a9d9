"""The proof of a statement and the statements' chain (docs/reconciliation.md, "The proof"):
a statement's first opening is a missing statement (what the account held before), a day
missing between two statements is a gap, and the missing day's statement, reconciled later,
closes it; after every run each statement's proof holds, as `verify_ledger` checks."""

from datetime import date

import pytest

from accounts.verification import ledger_breaches
from reconciliation.models import ReconciliationBreak
from reconciliation.services.matching import reconcile
from reconciliation.services.proof import statement_proof
from reconciliation.services.statements import bank_statement_receive
from tests.factories import InstitutionFactory
from tests.reconciliation.test_matching import mt940

pytestmark = pytest.mark.django_db

DAY_1, DAY_2, DAY_3 = date(2026, 11, 2), date(2026, 11, 3), date(2026, 11, 4)


def statement_of(institution, day: date, opening: int, credit: int, number: int):
    lines = [("C", credit, "/REMI/WIRE")] if credit else []
    content = mt940(day, lines, opening=opening, number=number)
    statement, _ = bank_statement_receive(
        institution=institution, fmt="mt940", name=f"{day}.mt940", content=content
    )
    return statement


def open_breaks() -> list[tuple[str, int, date]]:
    return sorted(
        (b.kind, b.amount, b.statement.period_end)
        for b in ReconciliationBreak.objects.filter(state="open").select_related("statement")
    )


def test_a_missing_days_statement_is_a_gap_until_it_comes_and_every_proof_holds():
    institution = InstitutionFactory(time_zone="America/New_York")
    first = statement_of(institution, DAY_1, opening=1_000, credit=100, number=1)
    assert statement_proof(first) is None  # not reconciled yet
    reconcile(statement=first)
    # Its opening: what the account held before TX saw its statements.
    assert open_breaks() == [("bank_only", 100, DAY_1), ("missing_statement", 1_000, DAY_1)]

    # Day 3 comes before day 2: the 50 day 2 brought is a gap.
    third = statement_of(institution, DAY_3, opening=1_150, credit=0, number=3)
    reconcile(statement=third)
    assert ("missing_statement", 50, DAY_3) in open_breaks()
    for statement in (first, third):
        proof = statement_proof(statement)
        assert (proof.ledger_balance, proof.difference) == (0, 0), statement
    assert ledger_breaches() == []

    # Day 2 comes: its credit is its own break, and it closes day 3's gap from day 2 on.
    second = statement_of(institution, DAY_2, opening=1_100, credit=50, number=2)
    planned = reconcile(statement=second, dry_run=True).plan
    assert [row.statement_id for row in planned.resolved] == [third.pk]
    reconcile(statement=second)
    gap = ReconciliationBreak.objects.get(statement=third)
    assert (gap.state, gap.resolution, gap.resolved_on) == (
        "resolved",
        "statement_received",
        DAY_2,
    )
    assert open_breaks() == [
        ("bank_only", 50, DAY_2),
        ("bank_only", 100, DAY_1),
        ("missing_statement", 1_000, DAY_1),
    ]
    assert [statement_proof(s).holds for s in (first, second, third)] == [True] * 3
    assert ledger_breaches() == []
    # Run again, each: nothing new.
    assert all(reconcile(statement=s).run is None for s in (first, second, third))
