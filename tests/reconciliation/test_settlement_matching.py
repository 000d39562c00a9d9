"""Matching a card network's settlement against TX's clearing, and the settlement's proof
(docs/reconciliation.md, "Matching a settlement", "The settlement's proof"): one world of a
day, a purchase and its refund settled, a late presentment, a presentment the network did not
settle (settled by a second network), a duplicate and an amount mismatch; a late presentment
force posted."""

import threading

import pytest
from django.urls import reverse as url_of
from django.utils import timezone

from accounts.verification import ledger_breaches
from authorizations.models import Authorization
from core import operations
from core.actors import SYSTEM
from core.exceptions import InvalidStateTransition
from events.models import Event
from institutions import scopes
from institutions.calendar import local_date
from reconciliation.models import NetworkSettlement, ReconciliationBreak, ReconciliationRun
from reconciliation.services import settlement_matching
from reconciliation.services.force_post import network_only_force_post
from reconciliation.services.settlement_matching import reconcile_settlement, settlement_proof
from tests.accounts.api.helpers import assert_error, created, listed, resource
from tests.accounts.ledger.helpers import run_threads
from tests.authorizations.helpers import approved, card_return, funded, presented, reverse
from tests.conftest import Api
from tests.factories import InstitutionFactory, issue_key
from tests.reconciliation.test_matching import rows_of_reconciliation
from tests.reconciliation.test_settlements import settlement_body, settlement_of

pytestmark = pytest.mark.django_db


def test_a_settlement_matched_broken_proved_and_run_again(institution, api_v2):
    card = funded(api_v2, load=20_000)
    paid = approved(api_v2, card.card_id, 4_000)["authorizationId"]
    presented(api_v2, paid)
    refund = created(card_return(api_v2, card.card_id, 500, authorization_id=paid), "v2")
    late = approved(api_v2, card.card_id, 1_500)["authorizationId"]
    unsettled = approved(api_v2, card.card_id, 800)["authorizationId"]
    presented(api_v2, unsettled)
    today = local_date(institution, timezone.now())
    network = Api("v2", issue_key(institution, scopes=scopes.ROLES["network"])[1])
    bank = Api("v2", issue_key(institution, scopes=scopes.ROLES["bank"])[1])
    visa = created(
        network.post(
            "/network-settlements",
            settlement_body(
                [
                    [paid, "purchase", -4_000, 60],
                    [refund["returnId"], "refund", 500, -7],
                    [late, "purchase", -1_500, 22],
                ],
                day=today,
            ),
        ),
        "v2",
    )
    visa_id = visa["settlementId"]
    rows = {
        row["networkTransactionId"]: row["rowId"]
        for row in listed(api_v2.get(f"/network-settlements/{visa_id}/rows"))[0]
    }

    # Before any run, the proof does not hold: card clearing moved by TX's three transactions
    # of the day (-4,000 + 500 - 800, as the settlement signs), the settlement's transactions
    # are -5,000, and no break explains the difference.
    proof = resource(api_v2.get(f"/network-settlements/{visa_id}/proof"), "v2")
    assert proof == {
        "settlementId": visa_id,
        "cardClearingMovement": -4_300,
        "net": -5_000 + 75 - 40,
        "interchange": 75,
        "schemeFees": -40,
        "transactions": -5_000,
        "openBreaks": 0,
        "difference": 700,
        "holds": False,
    }

    # A dry run answers and writes nothing.
    before = rows_of_reconciliation()
    dry = created(bank.post("/reconciliations", {"settlementId": visa_id, "dryRun": True}), "v2")
    assert rows_of_reconciliation() == before
    assert (dry["reconciliationId"], dry["statementId"], dry["settlementId"]) == (
        None,
        None,
        visa_id,
    )
    assert [(m["settlementRowIds"], m["key"], m["difference"]) for m in dry["matches"]] == [
        ([rows[paid]], "transaction_id", 0),
        ([rows[refund["returnId"]]], "transaction_id", 0),
    ]
    # The late presentment: settled, not cleared (what the network says, -1,500, less TX's, 0);
    # the presentment of 800 TX cleared and the network did not settle (0 less -800).
    assert sorted((b["kind"], b["amount"], b["settlementRowId"]) for b in dry["breaks"]) == [
        ("network_only", -1_500, rows[late]),
        ("tx_only", 800, None),
    ]
    assert all(b["breakId"] is None for b in dry["breaks"])

    run = created(bank.post("/reconciliations", {"settlementId": visa_id}), "v2")
    assert run["reconciliationId"] is not None
    assert [m["settlementRowIds"] for m in run["matches"]] == [
        m["settlementRowIds"] for m in dry["matches"]
    ]
    assert sorted((b["kind"], b["amount"]) for b in run["breaks"]) == [
        ("network_only", -1_500),
        ("tx_only", 800),
    ]
    late_break = next(b["breakId"] for b in run["breaks"] if b["kind"] == "network_only")
    assert Event.objects.filter(type="reconciliation.completed").get().actor_type == "apiKey"

    # The proof holds with the late presentment open: -4,300 = -5,000 - (-1,500 + 800).
    proof = resource(api_v2.get(f"/network-settlements/{visa_id}/proof"), "v2")
    assert (proof["openBreaks"], proof["difference"], proof["holds"]) == (-700, 0, True)
    listed_breaks = listed(api_v2.get(f"/reconciliation-breaks?settlementId={visa_id}"))[0]
    assert {b["breakId"] for b in listed_breaks} == {b["breakId"] for b in run["breaks"]}
    assert {b["settlementId"] for b in listed_breaks} == {visa_id}

    # A re-run finds nothing new and writes nothing.
    before = rows_of_reconciliation()
    again = created(bank.post("/reconciliations", {"settlementId": visa_id}), "v2")
    assert (again["reconciliationId"], again["matches"], again["breaks"]) == (None, [], [])
    assert rows_of_reconciliation() == before

    # TX clears the late presentment: the next run matches it and resolves its break, from the
    # clearing's day on; the proof still holds, the late entry now counted with the settlement.
    presented(api_v2, late)
    later = created(bank.post("/reconciliations", {"settlementId": visa_id}), "v2")
    assert [m["settlementRowIds"] for m in later["matches"]] == [[rows[late]]]
    assert (later["breaks"], later["breaksResolved"]) == ([], [late_break])
    resolved = resource(api_v2.get(f"/reconciliation-breaks/{late_break}"), "v2")
    assert (resolved["state"], resolved["resolution"], resolved["resolvedOn"]) == (
        "resolved",
        "matched",
        today.isoformat(),
    )
    proof = resource(api_v2.get(f"/network-settlements/{visa_id}/proof"), "v2")
    assert (proof["cardClearingMovement"], proof["openBreaks"], proof["holds"]) == (
        -5_800,
        800,
        True,
    )

    # A second network's day: the purchase settled again (a duplicate), a presentment of 300
    # settled as 350 (an amount mismatch of -50), and the presentment of 800 the first left
    # alone (TX does not know a card's network): its match resolves the first's tx_only break.
    tx_only = next(b["breakId"] for b in run["breaks"] if b["kind"] == "tx_only")
    tip = approved(api_v2, card.card_id, 300)["authorizationId"]
    presented(api_v2, tip)
    body = settlement_body(
        [
            [paid, "purchase", -4_000, 0],
            [tip, "purchase", -350, 0],
            [unsettled, "purchase", -800, 0],
        ],
        day=today,
    )
    body["network"] = "mastercard"
    mastercard = created(network.post("/network-settlements", body), "v2")["settlementId"]
    second = created(bank.post("/reconciliations", {"settlementId": mastercard}), "v2")
    assert [m["difference"] for m in second["matches"]] == [-50, 0]
    assert sorted((b["kind"], b["amount"]) for b in second["breaks"]) == [
        ("amount_mismatch", -50),
        ("duplicate", -4_000),
    ]
    assert second["breaksResolved"] == [tx_only]
    for settlement_id, open_breaks in ((visa_id, 0), (mastercard, -4_050)):
        proof = resource(api_v2.get(f"/network-settlements/{settlement_id}/proof"), "v2")
        assert (proof["openBreaks"], proof["difference"], proof["holds"]) == (
            open_breaks,
            0,
            True,
        ), proof

    # Exactly one of statementId and settlementId; another institution's settlement is not found.
    assert_error(
        bank.post("/reconciliations", {"statementId": "bst_x", "settlementId": visa_id}),
        "v2",
        400,
        "validation_error",
        details={"statementId": "Exactly one of statementId and settlementId."},
    )
    assert bank.post("/reconciliations", {"dryRun": True}).status_code == 400
    other = InstitutionFactory()
    stranger = Api("v2", issue_key(other, scopes=scopes.ROLES["bank"])[1])
    assert stranger.post("/reconciliations", {"settlementId": visa_id}).status_code == 404
    assert stranger.get(f"/network-settlements/{visa_id}/proof").status_code == 404
    assert stranger.get(f"/reconciliation-breaks/{late_break}").status_code == 404


def test_a_late_presentment_force_posted(institution, api_v2, admin_client):
    """Three rows the network settled and TX has not cleared: a pending authorization (presented
    for the settled amount), a reversed one (a force post of its card), a refund of an id TX
    does not know (nothing to clear: 409, nothing changes). The back office's break page shows
    the network's row."""
    card = funded(api_v2, load=1_000)
    pending = approved(api_v2, card.card_id, 600)["authorizationId"]
    gone = approved(api_v2, card.card_id, 300)["authorizationId"]
    created(reverse(api_v2, gone), "v2")
    today = local_date(institution, timezone.now())
    body = settlement_body(
        [[pending, "purchase", -650, 0], [gone, "purchase", -300, 0], ["NET-9", "refund", 90, 0]],
        day=today,
    )
    network = Api("v2", issue_key(institution, scopes=scopes.ROLES["network"])[1])
    settlement_id = created(network.post("/network-settlements", body), "v2")["settlementId"]
    settlement = NetworkSettlement.objects.get(pk=settlement_id)
    reconcile_settlement(settlement=settlement)
    breaks = {
        b.settlement_row.network_transaction_id: b
        for b in ReconciliationBreak.objects.select_related("settlement_row", "settlement")
    }
    assert {key: b.kind for key, b in breaks.items()} == dict.fromkeys(
        (pending, gone, "NET-9"), "network_only"
    )

    page = admin_client.get(
        url_of("admin:reconciliation_reconciliationbreak_change", args=[breaks["NET-9"].pk])
    )
    assert page.status_code == 200
    assert "refund 90 EUR NET-9" in page.content.decode()

    with operations.operation(SYSTEM):
        for key in (pending, gone):
            resolved = network_only_force_post(break_=breaks[key], actor=SYSTEM)
            assert (resolved.state, resolved.resolution) == ("resolved", "force_posted")
    with pytest.raises(InvalidStateTransition), operations.operation(SYSTEM):
        network_only_force_post(break_=breaks["NET-9"], actor=SYSTEM)
    with pytest.raises(InvalidStateTransition), operations.operation(SYSTEM):
        network_only_force_post(break_=breaks[pending], actor=SYSTEM)  # resolved already

    # Presented for what the network settled (above the authorized 600: within the 20%), and
    # the reversed one forced on the card; the proof holds with the unknown refund open alone.
    assert Authorization.objects.get(pk=pending).presented_amount == 650
    forced = Authorization.objects.get(kind="force_post")
    assert (forced.card_id, forced.presented_amount) == (card.card_id, 300)
    proof = settlement_proof(settlement)
    assert (proof["card_clearing_movement"], proof["open_breaks"], proof["holds"]) == (
        -950,
        90,
        True,
    )
    assert (
        created(
            Api("v2", issue_key(institution, scopes=scopes.ROLES["bank"])[1]).post(
                "/reconciliations", {"settlementId": settlement_id}
            ),
            "v2",
        )["reconciliationId"]
        is None
    )  # nothing new: the force posts are matched

    # verify_ledger proves the reconciled settlement, and its page shows the proof; a made-up
    # mismatch (the open break's amount changed) is named by both.
    page = url_of("admin:reconciliation_networksettlement_change", args=[settlement_id])
    assert "Holds: card clearing moved -9.50 EUR" in admin_client.get(page).content.decode()
    assert ledger_breaches() == []
    ReconciliationBreak.objects.filter(pk=breaks["NET-9"].pk).update(amount=80)
    [breach] = ledger_breaches()
    assert breach.check.startswith("reconciled network settlements whose proof does not hold")
    assert breach.rows == [(settlement_id, -950, -860, 80)]
    assert "Does not hold, by -0.10 EUR" in admin_client.get(page).content.decode()


@pytest.mark.django_db(transaction=True)
def test_two_runs_of_a_settlement_at_once_match_once(monkeypatch):
    """Both would plan the same five network_only breaks: each plan waits (half a second at
    most) for the other to plan too. Card clearing's reconciliation lock keeps the second from
    planning until the first commits, so the wait runs out and the second finds nothing new;
    without the lock both plan, and the second's insert breaks the unique constraint."""
    settlement = settlement_of(InstitutionFactory())
    settlement = NetworkSettlement.objects.select_related("institution").get(pk=settlement.pk)
    both = threading.Barrier(2, timeout=0.5)
    planned = settlement_matching.plan

    def plan_together(settlement):
        try:
            both.wait()
        except threading.BrokenBarrierError:
            pass
        return planned(settlement)

    monkeypatch.setattr(settlement_matching, "plan", plan_together)
    results = run_threads(2, lambda index: reconcile_settlement(settlement=settlement))

    assert sorted(result.run is not None for result in results) == [False, True]
    assert ReconciliationRun.objects.count() == 1
    assert ReconciliationBreak.objects.filter(kind="network_only").count() == 5
