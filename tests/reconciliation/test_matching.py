"""Matching a statement against the ledger (docs/reconciliation.md, "Matching" and "Breaks"):
a day of orders through the simulated bank, its statement with an unknown credit and a bank
fee; a dry run writes nothing; the same statement twice changes nothing; two runs at once
match once; another institution's ids are not found."""

from datetime import date, timedelta

import pytest
from django.apps import apps
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from accounts.models import Account
from accounts.verification import ledger_breaches
from core.actors import SYSTEM
from core.timestamps import iso_millis
from events.models import Event
from institutions import scopes
from institutions.calendar import local_date
from payments.connector import deliver_pending
from payments.models import PaymentOrder
from payments.services.orders import payment_order_create
from payments.services.settlement import orders_settle
from reconciliation.models import (
    ExpectedPayment,
    MatchedLedgerLine,
    ReconciliationBreak,
    ReconciliationMatch,
    ReconciliationRun,
)
from reconciliation.services.matching import reconcile
from reconciliation.services.proof import day_start, statement_proof
from reconciliation.services.statements import bank_statement_receive
from sandbox.simulated_bank import simulated_bank_run
from tests.accounts.api.helpers import created, listed, resource
from tests.accounts.ledger.helpers import run_threads
from tests.conftest import Api
from tests.factories import InstitutionFactory, issue_key
from tests.payments.helpers import ach_bank, cutoff, local
from tests.payments.test_orders import business_day
from tests.reconciliation.test_statements import DAY

pytestmark = pytest.mark.django_db

CREDITS, COLLECTIONS, FEE, UNKNOWN = 16, 4, 25, 7_777
OPENING = 1_000_000  # the statements' opening balance (`mt940`)
# The headline's day (issue 51 item 7): 1,000 orders, 100 payouts and 900 collections, 3
# of them booked by the bank as one sum.
PAYOUTS, COLLECTED, BATCHED = 100, 897, 3


def mt940(
    day: date, lines: list[tuple[str, int, str]], opening: int = OPENING, number: int = 1
) -> bytes:
    """An MT940 statement of USD of `day`: lines (C or D, cents, :86: text)."""
    yymmdd, mmdd = day.strftime("%y%m%d"), day.strftime("%m%d")

    def money(cents: int) -> str:
        return f"{cents // 100},{cents % 100:02d}"

    closing = opening + sum(cents if mark == "C" else -cents for mark, cents, _ in lines)
    rows = [":20:STMT" + yymmdd, ":25:021000021/123453000", f":28C:{number:05d}/001"]
    rows.append(f":60F:C{yymmdd}USD{money(opening)}")
    for n, (mark, cents, text) in enumerate(lines, start=1):
        rows.append(f":61:{yymmdd}{mmdd}{mark}{money(cents)}NTRFNONREF//B{n:04d}")
        rows.append(f":86:{text}")
    rows.append(f":62F:C{yymmdd}USD{money(closing)}")
    return ("\r\n".join(rows) + "\r\n").encode()


def rows_of_reconciliation() -> dict[str, int]:
    models = apps.get_app_config("reconciliation").get_models()
    counts = {model.__name__: model.objects.count() for model in models}
    return {**counts, "Event": Event.objects.count()}


def a_day_of_orders(credits: int = CREDITS, collections: int = COLLECTIONS, **profile):
    """`credits` payouts and `collections` collections of one ACH file, read by the simulated
    bank (it returns none) and settled: as many ledger lines of the USD rail settlement
    account. Made by the services a request calls, without a request each (what the API adds
    is the API tests'). `profile`: the ACH profile's fields."""
    bank = ach_bank(load_amount=10_000_000, **profile)
    external = bank.external()["externalAccountId"]
    orders = [
        payment_order_create(
            institution=bank.institution,
            account_id=bank.account_id,
            external_account_id=external,
            direction="credit" if n < credits else "debit",
            amount=1_000 + 10 * n if n < credits else 500,
            currency="USD",
            rail="ach",
            sec_code="PPD",
            description="PAYROLL" if n < credits else "RENT",
            remittance_info=f"PAY {n}" if n < credits else "RENT NOV",
            actor=SYSTEM,
        )
        for n in range(credits + collections)
    ]
    day = business_day()
    cutoff(bank, day)
    deliver_pending()
    effective = PaymentOrder.objects.get(pk=orders[0].pk).effective_date
    assert simulated_bank_run(institution=bank.institution, today=effective) == []
    assert orders_settle(now=local(effective, 12)) == len(orders)
    # The day's rows are the test's own, uncommitted: autovacuum cannot count them, and a table
    # that an earlier test filled and rolled back may have been vacuumed to "no rows" on its
    # pages meanwhile, a density of 0 that the planner scales to any size. The matching's key
    # joins then ran as nested loops over every order (EXPLAIN ANALYZE of the ledger's lines:
    # 46-56 s instead of 9-12 ms; the test 100 s instead of 10). A bank's tables are analyzed as
    # its day's orders commit (docs/reconciliation.md, "Statistics"); the test's are here.
    with connection.cursor() as cursor:
        cursor.execute(
            "ANALYZE accounts_entry, accounts_journal, payments_paymentorder,"
            " payments_railjournal, payments_inboundentry"
        )
    return bank, list(PaymentOrder.objects.filter(pk__in=[o.pk for o in orders]).order_by("pk"))


def test_a_day_of_orders_reconciles_with_one_unknown_credit_and_one_bank_fee(settings, tmp_path):
    """Issue 51 item 7: a day of 1,000 orders from the simulated bank with one unknown credit
    and one bank fee gives 998 matches, one bank-only and one amount-mismatch break, and the
    proof holds.

    The arithmetic: 1,000 orders of one ACH file are 100 payouts and 900 collections. The
    bank's statement of the day has 999 lines: the 100 payouts debited and 897 collections
    credited, each by its trace number, the bank's fee of 25 taken with one payout; the other
    3 collections credited as one sum (a batch booking); and a credit no one announced. So 998
    lines match the 1,000 ledger lines, every ledger line once: 997 by their key, 1 to 3 by
    the batch rule. The payout with the fee matches and breaks `amount_mismatch` (-25: the
    bank took more); the unknown credit matches nothing and breaks `bank_only` (+7,777). The
    statement opens at what the ledger held then (0: the account's first statement, no money
    moved before the day), so no `missing_statement` break: those two are all.

    As cheap as it can be and still real: each order made by the service an API request
    calls (no request each), the cut-off writing the file, the simulated bank reading it, the
    settlement job settling them. Mostly collections, and no returns hold (the ACH profile's
    `debit_hold_days` 0): a payout's hold, placed and captured, and a collection's returns
    hold are the customer account's, which the statement does not see; a day of 997 payouts
    takes a quarter to a third longer."""
    settings.RAILS_DIR = str(tmp_path / "rails")  # the day's file kept out of .data
    bank, orders = a_day_of_orders(PAYOUTS, COLLECTED + BATCHED, debit_hold_days=0)
    assert len(orders) == 1_000
    payouts = [order for order in orders if order.direction == "credit"]
    collections = [order for order in orders if order.direction == "debit"]
    batched = collections[COLLECTED:]
    # The ledger's day (its postings are now): the bank books them the same day.
    today = local_date(bank.institution, timezone.now())
    # Each payout debited and each collection credited by its trace number, one payout with
    # the bank's fee taken with it; 3 collections credited as one sum (a batch booking); a
    # credit no one announced.
    lines = [
        ("D", order.amount + (FEE if n == 3 else 0), f"/TRCE/{order.trace_number}/REMI/PAYROLL")
        for n, order in enumerate(payouts)
    ]
    lines += [
        ("C", order.amount, f"/TRCE/{order.trace_number}/REMI/RENT NOV")
        for order in collections[:COLLECTED]
    ]
    lines.append(("C", 500 * BATCHED, f"/REMI/ACH BATCH RENT NOV/NBTX/{BATCHED}"))
    lines.append(("C", UNKNOWN, "/REMI/WIRE FROM SOMEONE"))
    statement, _ = bank_statement_receive(
        institution=bank.institution,
        fmt="mt940",
        name="day.mt940",
        content=mt940(today, lines, opening=0),
    )
    assert statement.lines.count() == 999
    api = Api("v2", issue_key(bank.institution, scopes=[scopes.READ, scopes.BANK])[1])
    batch = {"field": "remittance", "operator": "contains"}
    rule = created(
        api.post(
            "/reconciliation-rules",
            {
                "name": "ACH batches",
                "conditions": [batch, {"field": "amount", "operator": "equals"}],
                "cardinality": "one_to_many",
            },
        ),
        "v2",
    )
    assert rule["position"] == 1

    # A dry run answers and writes nothing.
    before = rows_of_reconciliation()
    body = {"statementId": statement.pk, "dryRun": True}
    dry = created(api.post("/reconciliations", body), "v2")
    assert rows_of_reconciliation() == before
    assert dry["reconciliationId"] is None and {b["breakId"] for b in dry["breaks"]} == {None}

    answer = created(api.post("/reconciliations", {"statementId": statement.pk}), "v2")
    assert answer["matches"] == dry["matches"]
    assert [(b["kind"], b["amount"]) for b in answer["breaks"]] == [
        (b["kind"], b["amount"]) for b in dry["breaks"]
    ]
    by_how = {}
    for match in answer["matches"]:
        by_how.setdefault((match["how"], match["key"] or match["ruleId"]), []).append(match)
    assert len(answer["matches"]) == 998
    assert {how: len(found) for how, found in by_how.items()} == {
        ("key", "trace_number"): PAYOUTS + COLLECTED,
        ("rule", rule["ruleId"]): 1,
    }
    mirrored = Account.objects.get(
        institution=bank.institution, internal_code="rail_settlement", currency="USD"
    )
    [batch_match] = by_how["rule", rule["ruleId"]]
    assert batch_match["difference"] == 0
    assert {line["entryId"] for line in batch_match["ledgerLines"]} == set(
        mirrored.entries.filter(journal__rail_journal__order__in=batched).values_list(
            "id", flat=True
        )
    )
    ledger_lines = {line["entryId"] for match in answer["matches"] for line in match["ledgerLines"]}
    entries = set(mirrored.entries.values_list("id", flat=True))
    assert ledger_lines == entries and len(entries) == 1_000  # every order, once
    # The breaks, signed as the statement: the fee took 25 more than the ledger paid out; the
    # unknown credit is money the ledger has not.
    breaks = sorted((b["kind"], b["amount"]) for b in answer["breaks"])
    assert breaks == [("amount_mismatch", -FEE), ("bank_only", UNKNOWN)]
    # The proof: the ledger, as the bank counts (money in positive: the mirrored account's
    # balance, sign turned), is the closing balance less the open breaks.
    closing_less_breaks = statement.closing_balance - sum(b["amount"] for b in answer["breaks"])
    assert closing_less_breaks == -mirrored.posted
    proof = resource(api.get(f"/bank-statements/{statement.pk}"), "v2")["proof"]
    closing_day = statement.period_end + timedelta(days=1)
    assert proof.pop("closingAt") == iso_millis(day_start(bank.institution, closing_day))
    assert proof == {
        "ledgerBalance": -mirrored.posted,
        "closingBalance": statement.closing_balance,
        "openBreaks": statement.closing_balance + mirrored.posted,
        "difference": 0,
        "holds": True,
    }
    assert ledger_breaches() == []
    # A break closed with nothing booked: the proof no longer holds, and verify_ledger says so.
    with transaction.atomic():
        ReconciliationBreak.objects.filter(kind="bank_only").update(state="resolved")
        assert statement_proof(statement).difference == -UNKNOWN
        [breach] = ledger_breaches()
        assert breach.check.startswith("reconciled statements whose proof does not hold")
        assert [row[0] for row in breach.rows] == [statement.pk]
        transaction.set_rollback(True)

    listed_breaks, _ = listed(api.get("/reconciliation-breaks", {"state": "open"}))
    assert sorted((b["kind"], b["amount"]) for b in listed_breaks) == breaks
    mismatch = next(b for b in listed_breaks if b["kind"] == "amount_mismatch")
    assert mismatch["statementLineId"] and len(mismatch["ledgerLines"]) == 1
    assert mismatch["ledgerLines"][0]["journalId"]
    shown = resource(api.get(f"/reconciliation-breaks/{mismatch['breakId']}"), "v2")
    assert shown == mismatch
    assert listed(api.get("/reconciliation-breaks", {"kind": "bank_only"}))[0][0]["amount"] == (
        UNKNOWN
    )
    assert listed(api.get("/reconciliation-breaks", {"statementId": "bst_other"}))[0] == []
    events = Event.objects.filter(
        type__in=["reconciliation.completed", "reconciliation_break.opened"]
    )
    assert sorted(e.type for e in events) == [
        "reconciliation.completed",
        *["reconciliation_break.opened"] * 2,
    ]
    assert {e.actor_type for e in events} == {"apiKey"}

    # The same statement again: nothing new, nothing written.
    before = rows_of_reconciliation()
    again = created(api.post("/reconciliations", {"statementId": statement.pk}), "v2")
    assert (again["reconciliationId"], again["matches"], again["breaks"]) == (None, [], [])
    assert rows_of_reconciliation() == before

    # Another institution's ids are not found.
    other = Api("v2", issue_key(InstitutionFactory(), scopes=[scopes.READ, scopes.BANK])[1])
    assert other.post("/reconciliations", {"statementId": statement.pk}).status_code == 404
    assert other.get(f"/reconciliation-breaks/{mismatch['breakId']}").status_code == 404
    assert listed(other.get("/reconciliation-breaks"))[0] == []
    assert rows_of_reconciliation() == before

    # The database's word: a ledger line in a second match, a second open break of a line.
    match = ReconciliationMatch.objects.first()
    entry_id = answer["matches"][0]["ledgerLines"][0]["entryId"]
    with pytest.raises(IntegrityError), transaction.atomic():
        MatchedLedgerLine.objects.create(entry_id=entry_id, match=match)
    bank_only = ReconciliationBreak.objects.get(kind="bank_only")
    with pytest.raises(IntegrityError), transaction.atomic():
        ReconciliationBreak.objects.create(
            **{
                f.attname: getattr(bank_only, f.attname)
                for f in bank_only._meta.concrete_fields
                if f.attname != "id"
            }
        )


def rule(api: Api, cardinality: str, tolerance: int = 0) -> dict:
    body = {
        "name": cardinality,
        "conditions": [
            {"field": "remittance", "operator": "equals"},
            {"field": "amount", "operator": "equals"},
        ],
        "cardinality": cardinality,
        "amountTolerance": tolerance,
        "dateWindowDays": 1,
    }
    return created(api.post("/reconciliation-rules", body), "v2")


def test_rules_in_order_duplicates_and_ledger_lines_alone():
    """Payout 0 booked twice, payout 1 in two halves (many to one), payout 2 three cents more
    with no trace (one to one within a tolerance of 5): a duplicate, two mismatches, the 17
    ledger lines the bank did not book alone. A next statement booking payout 3 resolves its
    break and opens none of the others again."""
    bank, orders = a_day_of_orders()
    payouts = [order for order in orders if order.direction == "credit"]
    today = local_date(bank.institution, timezone.now())
    api = Api("v2", issue_key(bank.institution, scopes=[scopes.READ, scopes.BANK])[1])
    assert [rule(api, c, 5)["position"] for c in ("one_to_one", "many_to_one")] == [1, 2]
    half = payouts[1].amount // 2
    lines = [
        ("D", payouts[0].amount, f"/TRCE/{payouts[0].trace_number}"),
        ("D", payouts[0].amount, f"/TRCE/{payouts[0].trace_number}"),
        ("D", half, "/REMI/PAY 1"),
        ("D", payouts[1].amount - half, "/REMI/PAY 1"),
        ("D", payouts[2].amount + 3, "/REMI/PAY 2"),
    ]
    statement, _ = bank_statement_receive(
        institution=bank.institution, fmt="mt940", name="a", content=mt940(today, lines)
    )
    answer = created(api.post("/reconciliations", {"statementId": statement.pk}), "v2")

    assert sorted((m["how"], len(m["statementLineIds"])) for m in answer["matches"]) == [
        ("key", 1),
        ("rule", 1),
        ("rule", 2),
    ]
    kinds = {}
    for found in answer["breaks"]:
        kinds.setdefault(found["kind"], []).append(found["amount"])
    assert {kind: len(amounts) for kind, amounts in kinds.items()} == {
        "duplicate": 1,
        "amount_mismatch": 1,
        "ledger_only": CREDITS - 3 + COLLECTIONS,
        "missing_statement": 1,
    }
    assert kinds["duplicate"] == [-payouts[0].amount] and kinds["amount_mismatch"] == [-3]
    # A payout alone in the ledger is money the bank still has (+), a collection money it has
    # not (-): the closing balance less the open breaks is the ledger's account of the day.
    assert sorted(set(kinds["ledger_only"]))[0] == -500
    mirrored = Account.objects.get(
        institution=bank.institution, internal_code="rail_settlement", currency="USD"
    )
    total = statement.closing_balance - sum(sum(amounts) for amounts in kinds.values())
    assert total == -mirrored.posted  # the proof (with the opening, a missing statement)
    assert statement_proof(statement).holds

    # The next day's statement (its opening the day's closing) books payout 3: its break is
    # resolved, no other opened again, and both proofs hold.
    booked = [("D", payouts[3].amount, f"/TRCE/{payouts[3].trace_number}")]
    tomorrow = today + timedelta(days=1)
    content = mt940(tomorrow, booked, opening=statement.closing_balance, number=2)
    later, _ = bank_statement_receive(
        institution=bank.institution, fmt="mt940", name="b", content=content
    )
    answer = created(api.post("/reconciliations", {"statementId": later.pk}), "v2")
    assert [m["key"] for m in answer["matches"]] == ["trace_number"] and answer["breaks"] == []
    [resolved] = answer["breaksResolved"]
    row = ReconciliationBreak.objects.get(pk=resolved)
    assert (row.kind, row.state, row.resolution) == ("ledger_only", "resolved", "matched")
    # From the day the bank booked it: a statement closing before still counts the break.
    assert row.resolved_on == tomorrow
    shown = resource(api.get(f"/reconciliation-breaks/{resolved}"), "v2")
    assert shown["resolvedOn"] == str(tomorrow)
    assert statement_proof(statement).holds and statement_proof(later).holds
    # The duplicate and the mismatch, the ledger lines alone but payout 3, the opening.
    assert ReconciliationBreak.objects.filter(state="open").count() == 2 + CREDITS - 4 + 4 + 1


def test_expected_payments_and_rules_over_the_api():
    """The day's MT940 (EUR, nothing in the ledger): its credit announced by an expected
    payment, its fee not. The expected line is matched and still broken `bank_only` (its money
    is not booked yet), with the expected payment named."""
    institution = InstitutionFactory()
    api = Api("v2", issue_key(institution, scopes=[scopes.READ, scopes.BANK])[1])
    statement, _ = bank_statement_receive(
        institution=institution, fmt="mt940", name="day", content=DAY["mt940"]
    )
    announced = {
        "currency": "EUR",
        "direction": "credit",
        "amountMin": 24_000,
        "amountMax": 26_000,
        "reference": "invoice 17",
        "dateFrom": "2026-11-26",
        "metadata": {"invoice": "17"},
    }
    expected = created(api.post("/expected-payments", announced), "v2")
    assert (expected["status"], expected["amountMin"], expected["metadata"]) == (
        "unmatched",
        24_000,
        {"invoice": "17"},
    )
    other = created(
        api.post("/expected-payments", {"currency": "EUR", "direction": "debit", "amount": 9}),
        "v2",
    )
    path = f"/expected-payments/{other['expectedPaymentId']}/cancellations"
    assert created(api.post(path, {}), "v2")["status"] == "cancelled"
    assert api.post(path, {}).status_code == 409
    refused = [
        ("/expected-payments", {**announced, "amount": 25_000}),
        ("/expected-payments", {**announced, "amountMax": 1}),
        ("/expected-payments", {**announced, "dateTo": "2026-11-01"}),
        (
            "/reconciliation-rules",
            {"name": "x", "cardinality": "one_to_one", "conditions": []},
        ),
        (
            "/reconciliation-rules",
            {
                "name": "x",
                "cardinality": "one_to_many",
                "conditions": [{"field": "amount", "operator": "equals"}],
            },
        ),
        (
            "/reconciliation-rules",
            {
                "name": "x",
                "cardinality": "one_to_one",
                "conditions": [{"field": "amount", "operator": "contains"}],
            },
        ),
    ]
    before = rows_of_reconciliation()
    for route, body in refused:
        assert api.post(route, body).status_code == 400, (route, body)
    assert rows_of_reconciliation() == before

    answer = created(api.post("/reconciliations", {"statementId": statement.pk}), "v2")
    [match] = answer["matches"]
    assert (match["how"], match["expectedPaymentId"]) == ("expected", expected["expectedPaymentId"])
    assert sorted((b["kind"], b["amount"], b["expectedPaymentId"]) for b in answer["breaks"]) == [
        ("bank_only", -1_250, None),
        ("bank_only", 25_000, expected["expectedPaymentId"]),
        ("missing_statement", statement.opening_balance, None),
    ]
    path = f"/expected-payments/{expected['expectedPaymentId']}"
    shown = resource(api.get(path), "v2")
    assert shown["status"] == "matched" and shown["matchedAt"]
    assert api.post(f"{path}/cancellations", {}).status_code == 409
    assert [
        e["status"] for e in listed(api.get("/expected-payments", {"status": "matched"}))[0]
    ] == ["matched"]
    assert Event.objects.filter(type="expected_payment.matched").get().actor_type == "apiKey"
    stranger = Api("v2", issue_key(InstitutionFactory(), scopes=[scopes.READ, scopes.BANK])[1])
    assert stranger.get(path).status_code == 404
    assert (
        stranger.post(
            f"/expected-payments/{other['expectedPaymentId']}/cancellations", {}
        ).status_code
        == 404
    )


@pytest.mark.django_db(transaction=True)
def test_two_runs_at_once_match_once():
    """Both plan the same two breaks; the lock makes the second plan after the first commits,
    and find nothing new (without it, the second's insert breaks the unique constraint)."""
    institution = InstitutionFactory()
    statement, _ = bank_statement_receive(
        institution=institution, fmt="mt940", name="day", content=DAY["mt940"]
    )
    statement = type(statement).objects.select_related("institution").get(pk=statement.pk)

    results = run_threads(2, lambda index: reconcile(statement=statement))

    assert sorted(result.run is not None for result in results) == [False, True]
    assert ReconciliationRun.objects.count() == 1
    assert ReconciliationBreak.objects.count() == 3  # the two lines, the opening
    assert not ExpectedPayment.objects.exists()
