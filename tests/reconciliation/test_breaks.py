"""The breaks' work (docs/reconciliation.md, "Breaks" and "Ageing"): a bank-only credit and a
bank fee booked through four eyes, once, value-dated to the statement line's date, the books
balanced and a later run seeing nothing alone; the breaks as cases (assigned, the "mine"
queue, another institution's staff seeing none); ageing raising one alert."""

from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.urls import reverse
from django.utils import timezone

from accounts.models import Account, Entry, Journal, StatementLine
from accounts.verification import ledger_breaches
from backoffice.models import ApprovalRequest
from backoffice.services.approvals import approval_approve
from backoffice.services.staff_changes import staff_book_break, staff_place_break
from core.actors import Actor
from core.exceptions import (
    AlreadyExists,
    BusinessRuleViolation,
    InvalidStateTransition,
    PermissionDenied,
    ValidationFailed,
)
from core.operations import run
from events.models import Event
from institutions.calendar import local_date
from jobs import tasks
from monitoring.models import MonitoringAlert
from reconciliation.models import MatchedLedgerLine, ReconciliationBreak, ReconciliationMatch
from reconciliation.services.ageing import breaks_watch_ageing
from reconciliation.services.breaks import break_resolve_without_money
from reconciliation.services.matching import reconcile
from reconciliation.services.statements import bank_statement_receive
from tests.accounts.ledger.helpers import GHS_PREPAID, open_account
from tests.backoffice.helpers import staff
from tests.backoffice.test_case_work import act, listed
from tests.factories import InstitutionFactory
from tests.reconciliation.test_matching import mt940
from tests.staff import sign_in

pytestmark = pytest.mark.django_db

Kind = ApprovalRequest.Kind
BREAKS = reverse("admin:reconciliation_reconciliationbreak_changelist")
UNKNOWN, FEE = 7_777, 25


def a_statement_with_two_breaks(institution):
    """Yesterday's statement: a credit no one announced and a fee the bank took, each a
    `bank_only` break (credit first)."""
    day = local_date(institution, timezone.now()) - timedelta(days=1)
    lines = [("C", UNKNOWN, "/REMI/WIRE FROM SOMEONE"), ("D", FEE, "/REMI/ACCOUNT FEE NOV")]
    statement, _ = bank_statement_receive(
        institution=institution, fmt="mt940", name="day.mt940", content=mt940(day, lines)
    )
    reconcile(statement=statement)
    credit = ReconciliationBreak.objects.get(amount=UNKNOWN)
    fee = ReconciliationBreak.objects.get(amount=-FEE)
    assert {credit.kind, fee.kind} == {"bank_only"}
    return statement, credit, fee, day


def booked() -> list[Journal]:
    return list(Journal.objects.filter(kind=Journal.Kind.RECONCILIATION).order_by("pk"))


def test_money_of_a_break_is_booked_through_four_eyes_once(client):
    bank = InstitutionFactory()
    statement, credit, fee, day = a_statement_with_two_breaks(bank)
    maker = staff("olga", roles=["operations"], institutions=[bank])
    checker = staff("carla", roles=["compliance"], institutions=[bank])

    def ask(brk, kind, user=maker):
        change = run(staff_book_break, actor=Actor(user=user), brk=brk, kind=kind, reason="Seen.")
        return change.value.approval

    # The wrong kind or sign is refused, nothing asked.
    with pytest.raises(BusinessRuleViolation, match="Only a bank-only or amount-mismatch"):
        ask(credit, Kind.BREAK_FEE)
    with pytest.raises(BusinessRuleViolation, match="Only a bank-only break of money in"):
        ask(fee, Kind.BREAK_CREDIT)
    # Without money only a break of amount 0 (the difference would stand unbooked).
    with pytest.raises(BusinessRuleViolation, match="amount 0"):
        run(break_resolve_without_money, actor=Actor(user=maker), brk=credit)

    # Asked: nothing moves until a second person approves; one request a break at a time.
    approval = ask(credit, Kind.BREAK_CREDIT)
    with pytest.raises(AlreadyExists):
        ask(credit, Kind.BREAK_CREDIT)
    assert booked() == [] and ReconciliationBreak.objects.get(pk=credit.pk).state == "open"
    with pytest.raises(PermissionDenied):  # the requester cannot approve their own
        run(approval_approve, actor=Actor(user=maker), approval=approval, reason="Mine.")
    assert booked() == []
    # The checker finds it under Approvals, said in words, linked to the break.
    sign_in(client, checker)
    page = client.get(reverse("admin:backoffice_approvalrequest_change", args=[approval.pk]))
    text = page.content.decode()
    assert "Book the bank-only credit of" in text and credit.pk in text

    run(approval_approve, actor=Actor(user=checker), approval=approval, reason="Checked.")
    # A stale or second approval posts nothing.
    with pytest.raises(InvalidStateTransition):
        run(approval_approve, actor=Actor(user=checker), approval=approval, reason="Again.")
    with pytest.raises(InvalidStateTransition):  # nor can it be asked again
        ask(credit, Kind.BREAK_CREDIT)
    approval_fee = ask(fee, Kind.BREAK_FEE)
    run(approval_approve, actor=Actor(user=checker), approval=approval_fee, reason="Fee.")

    [credit_journal, fee_journal] = booked()
    start = datetime.combine(day, time.min, ZoneInfo(bank.time_zone))
    assert credit_journal.value_at == start and fee_journal.value_at == start  # the line's date
    accounts = {a.internal_code: a.pk for a in Account.objects.filter(institution=bank)}
    moves = {
        (e.journal_id, e.account_id): e.signed_amount
        for e in Entry.objects.filter(journal__in=booked())
    }
    assert moves == {
        (credit_journal.pk, accounts["rail_settlement"]): -UNKNOWN,  # money in debits it
        (credit_journal.pk, accounts["rail_suspense"]): UNKNOWN,
        (fee_journal.pk, accounts["rail_settlement"]): FEE,
        (fee_journal.pk, accounts["fees"]): -FEE,
    }
    for brk, resolution, journal in (
        (credit, "booked_to_suspense", credit_journal),
        (fee, "booked_bank_fee", fee_journal),
    ):
        brk.refresh_from_db()
        assert (brk.state, brk.resolution, brk.resolved_on) == ("resolved", resolution, day)
        [event] = Event.objects.filter(object_id=brk.pk, type="reconciliation_break.resolved")
        assert (event.actor_type, event.actor_id) == ("staff", str(checker.pk))
        assert event.data["journal_id"] == journal.pk
        # The new ledger line is matched with the statement line.
        entry = Entry.objects.get(journal=journal, account_id=accounts["rail_settlement"])
        matched = MatchedLedgerLine.objects.get(entry=entry).match
        assert [m.statement_line_id for m in matched.statement_lines.all()] == [
            brk.statement_line_id
        ]
    assert ApprovalRequest.objects.get(pk=approval.pk).result_id == credit.pk
    assert ledger_breaches() == []  # the books, and the statement's proof (its opening open)

    # An amount mismatch the bank took 10 more on (as a key's match with a payout would
    # leave): booked as a fee, its ledger line joins the match, whose difference is 0 then.
    match = MatchedLedgerLine.objects.get(entry__journal=fee_journal).match
    ReconciliationMatch.objects.filter(pk=match.pk).update(difference=-10)
    mismatch = ReconciliationBreak.objects.create(
        institution=bank,
        kind="amount_mismatch",
        amount=-10,
        currency="USD",
        statement=statement,
        statement_line=fee.statement_line,
        match=match,
        run=fee.run,
    )
    with pytest.raises(BusinessRuleViolation):
        ask(mismatch, Kind.BREAK_CREDIT)
    approval_mismatch = ask(mismatch, Kind.BREAK_FEE)
    run(approval_approve, actor=Actor(user=checker), approval=approval_mismatch, reason="Fee.")
    mismatch_journal = booked()[-1]
    assert mismatch_journal.value_at == start
    match.refresh_from_db()
    assert match.difference == 0 and match.ledger_lines.count() == 2
    # The books balance; the statement (made up here: its line still says 25) no longer
    # proves, by the 10 booked that it does not carry, and verify_ledger says so.
    [breach] = ledger_breaches()
    assert breach.check.startswith("reconciled statements whose proof does not hold")
    [(statement_id, ledger, closing, standing)] = breach.rows
    assert (statement_id, ledger - (closing - standing)) == (statement.pk, -10)
    # The statement's page shows it too.
    page = client.get(reverse("admin:reconciliation_bankstatement_change", args=[statement.pk]))
    assert "Does not hold, by -0.10 USD" in page.content.decode()

    # A later run sees the booked lines matched: no ledger-only break, nothing written.
    breaks = ReconciliationBreak.objects.count()
    assert reconcile(statement=statement).run is None
    assert ReconciliationBreak.objects.count() == breaks
    assert not ReconciliationBreak.objects.filter(kind="ledger_only").exists()


def test_breaks_are_cases_and_age_into_one_alert(client):
    bank, other = InstitutionFactory(), InstitutionFactory()
    _, credit, fee, _ = a_statement_with_two_breaks(bank)
    ops = staff("olga", roles=["operations"], institutions=[bank])
    sign_in(client, ops)

    response = act(client, BREAKS, "assign_to_me", credit.pk)
    assert response.status_code == 302
    credit.refresh_from_db()
    assert credit.state == "assigned"
    [event] = Event.objects.filter(object_id=credit.pk, type="reconciliation_break.assigned")
    assert (event.actor_type, event.actor_id) == ("staff", str(ops.pk))
    assert event.data == {"assignee_id": str(ops.pk), "previous_assignee_id": None}
    assert listed(client, BREAKS, assigned="me") == [credit.pk]
    # The fee, and the statement's opening (the chain's first link: docs/reconciliation.md).
    opening = ReconciliationBreak.objects.get(kind="missing_statement")
    assert sorted(listed(client, BREAKS, assigned="nobody")) == sorted([fee.pk, opening.pk])
    act(client, BREAKS, "add_notes", credit.pk, note="Asked the bank for the wire's sender.")
    assert Event.objects.filter(object_id=credit.pk, type="reconciliation_break.note_added")
    assert "Asked the bank" in client.get(f"{BREAKS}{credit.pk}/change/").content.decode()

    # Another institution's staff sees none of them.
    client.logout()
    sign_in(client, staff("otto", roles=["operations"], institutions=[other]))
    assert listed(client, BREAKS) == []
    assert client.get(f"{BREAKS}{credit.pk}/change/").status_code in (302, 404)

    # Ageing: opened 10 days ago, past 3 business days: one alert a break, however many runs.
    assert breaks_watch_ageing() == {"raised": 0}
    ReconciliationBreak.objects.filter(pk=credit.pk).update(
        created_at=timezone.now() - timedelta(days=10)
    )
    assert tasks.watch_reconciliation_breaks(timestamp=0) == {"raised": 1}
    assert tasks.watch_reconciliation_breaks(timestamp=0) == {"raised": 0}
    [alert] = MonitoringAlert.objects.filter(subject_type="break_ageing")
    assert (alert.subject_id, alert.amount, alert.status) == (credit.pk, UNKNOWN, "open")
    assert alert.account_id == credit.statement.account_id


def test_a_credit_booked_to_suspense_is_placed_on_an_account_once(client):
    bank = InstitutionFactory(currency="USD")  # its prepaid accounts in the statement's USD
    _, credit, fee, _ = a_statement_with_two_breaks(bank)
    maker = staff("olga", roles=["operations"], institutions=[bank])
    checker = staff("carla", roles=["compliance"], institutions=[bank])
    customer = open_account(bank)
    assert customer.currency == credit.currency
    closed = open_account(bank)
    Account.objects.filter(pk=closed.pk).update(status="closed")
    closed.refresh_from_db()
    elsewhere = open_account(InstitutionFactory(currency="USD"))
    cannot_take = [open_account(bank, product=GHS_PREPAID), closed, elsewhere]

    def place(brk, account, user=maker):
        change = run(
            staff_place_break, actor=Actor(user=user), brk=brk, account=account, reason="Called."
        )
        return change.value.approval

    # Not booked to suspense yet: nothing to place, nothing asked.
    with pytest.raises(InvalidStateTransition, match="Only a bank-only credit booked to suspense"):
        place(credit, customer)
    booking = run(
        staff_book_break, actor=Actor(user=maker), brk=credit, kind=Kind.BREAK_CREDIT, reason="x"
    ).value.approval
    run(approval_approve, actor=Actor(user=checker), approval=booking, reason="Booked.")
    with pytest.raises(InvalidStateTransition):  # the fee's break: open, no credit in suspense
        place(fee, customer)
    # An account that cannot take it (another currency, closed, another institution's): 400.
    for account in cannot_take:
        with pytest.raises(ValidationFailed) as refused:
            place(credit, account)
        assert "account_id" in refused.value.details, account.pk
    assert not ApprovalRequest.objects.filter(kind=Kind.BREAK_PLACE).exists()

    # Asked on the queue with the account's id; the requester cannot approve it.
    sign_in(client, maker)
    act(client, BREAKS, "place_credit", credit.pk, account_id=customer.pk, reason="Called.")
    [approval] = ApprovalRequest.objects.filter(kind=Kind.BREAK_PLACE)
    assert (approval.parameters, approval.amount) == ({"account_id": customer.pk}, UNKNOWN)
    with pytest.raises(PermissionDenied):
        run(approval_approve, actor=Actor(user=maker), approval=approval, reason="Mine.")
    suspense = Account.objects.get(
        institution=bank, internal_code="rail_suspense", currency=credit.currency
    )
    assert suspense.posted == UNKNOWN  # still waiting

    # Approved: suspense -> the customer, with a line on their statement, once.
    run(approval_approve, actor=Actor(user=checker), approval=approval, reason="Checked.")
    with pytest.raises(InvalidStateTransition):
        run(approval_approve, actor=Actor(user=checker), approval=approval, reason="Again.")
    with pytest.raises(InvalidStateTransition, match="placed on an account already"):
        place(credit, customer)
    suspense.refresh_from_db()
    assert (suspense.posted, Account.objects.get(pk=customer.pk).posted) == (0, UNKNOWN)
    [line] = StatementLine.objects.filter(account=customer)
    assert line.amount == UNKNOWN and "WIRE FROM SOMEONE" in line.description
    credit.refresh_from_db()
    assert (credit.state, credit.resolution) == ("resolved", "placed_on_account")
    [placed] = Event.objects.filter(object_id=credit.pk, type="reconciliation_break.placed")
    assert (placed.actor_type, placed.actor_id) == ("staff", str(checker.pk))
    assert placed.data["account_id"] == customer.pk
    assert ledger_breaches() == []  # suspense is what waits there: nothing now
