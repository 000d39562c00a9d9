"""A card network's settlement in (docs/reconciliation.md, "Card settlement in"): stored with its
rows and posted as balanced journals on its date; the same content once; other content for the
same day refused; refused whole, with nothing kept, when it does not add up; another
institution's settlements are not found."""

import copy
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from accounts.models import Account, Entry, Journal
from accounts.verification import ledger_breaches
from authorizations.models import Authorization
from events.models import Event
from institutions import scopes
from institutions.calendar import local_date
from reconciliation.apis.settlements import NetworkSettlementIn
from reconciliation.models import NetworkSettlement, NetworkSettlementRow, ReconciliationBreak
from reconciliation.services.settlement_matching import reconcile_settlement
from reconciliation.services.settlements import network_settlement_receive
from tests.accounts.api.helpers import assert_error, created, listed, resource
from tests.authorizations.helpers import approved, card_return, funded, presented
from tests.conftest import Api, error_of
from tests.factories import InstitutionFactory, issue_key

pytestmark = pytest.mark.django_db


def settlement_body(rows: list[dict], *, scheme_fees: int = -40, day=None) -> dict:
    """A Visa settlement in EUR of `rows` ([id, kind, amount, interchange]), its totals summed
    from them; `day` by default yesterday (UTC's, never after any time zone's today)."""
    totals = dict.fromkeys(("purchases", "refunds", "cash", "chargebacks", "representments"), 0)
    plural = {"purchase": "purchases", "refund": "refunds", "cash": "cash"}
    plural |= {"chargeback": "chargebacks", "representment": "representments"}
    for _, kind, amount, _ in rows:
        totals[plural[kind]] += amount
    totals["interchange"] = sum(row[3] for row in rows)
    totals["schemeFees"] = scheme_fees
    totals["net"] = sum(totals.values())
    day = day or (timezone.now() - timedelta(days=1)).date()
    return {
        "network": "visa",
        "settlementDate": day.isoformat(),
        "currency": "EUR",
        "totals": totals,
        "rows": [
            {"networkTransactionId": i, "kind": kind, "amount": amount, "interchange": fee}
            for i, kind, amount, fee in rows
        ],
    }


def simple_body(*, prefix: str = "NET-", **kwargs) -> dict:
    """A settlement of one row of each kind, of transactions TX does not have (the guard
    tests'): no total is 0, so that each is wrong negated. `prefix`: of the rows' ids."""
    rows = [
        ["1", "purchase", -2_000, 30],
        ["2", "refund", 700, -10],
        ["3", "cash", -1_000, 15],
        ["4", "chargeback", 500, -8],
        ["5", "representment", -300, 5],
    ]
    return settlement_body([[f"{prefix}{i}", *rest] for i, *rest in rows], **kwargs)


def settlement_of(institution, **kwargs) -> NetworkSettlement:
    """`simple_body(**kwargs)` received through the service (no request: the worlds of the
    guard tests)."""
    read = NetworkSettlementIn(data=simple_body(**kwargs))
    read.is_valid(raise_exception=True)
    settlement, _ = network_settlement_receive(institution=institution, **read.validated_data)
    return settlement


def late_presentment(institution, authorization_id: str, amount: int) -> ReconciliationBreak:
    """Today's settlement of one purchase of `amount` TX holds and has not cleared, received
    and reconciled: its `network_only` break."""
    day = local_date(institution, timezone.now())
    read = NetworkSettlementIn(
        data=settlement_body([[authorization_id, "purchase", -amount, 0]], day=day)
    )
    read.is_valid(raise_exception=True)
    settlement, _ = network_settlement_receive(institution=institution, **read.validated_data)
    reconcile_settlement(settlement=settlement)
    return ReconciliationBreak.objects.get(settlement=settlement, kind="network_only")


def internal(institution, code: str) -> Account:
    return Account.objects.get(institution=institution, internal_code=code, currency="EUR")


def test_a_settlement_is_stored_posted_on_its_date_once_and_balanced(institution, api_v2):
    """Cleared in TX: a purchase of 4,000 and its refund of 500. Settled by the network: those,
    and a purchase of 1,500 TX holds but has not cleared yet (a late presentment)."""
    card = funded(api_v2, load=10_000)
    paid = approved(api_v2, card.card_id, 4_000)["authorizationId"]
    presented(api_v2, paid)
    refund = created(card_return(api_v2, card.card_id, 500, authorization_id=paid), "v2")
    late = approved(api_v2, card.card_id, 1_500)["authorizationId"]
    clearing = internal(institution, Account.InternalCode.CARD_CLEARING)
    assert clearing.posted == 4_000 - 500
    body = settlement_body(
        [
            [paid, "purchase", -4_000, 60],
            [refund["returnId"], "refund", 500, -7],
            [late, "purchase", -1_500, 22],
        ]
    )
    assert body["totals"]["net"] == -4_000 + 500 - 1_500 + 75 - 40
    network = Api("v2", issue_key(institution, scopes=scopes.ROLES["network"])[1])

    made = created(network.post("/network-settlements", body), "v2")
    assert (made["network"], made["currency"], made["rowCount"]) == ("visa", "EUR", 3)
    assert (made["purchases"], made["refunds"], made["interchange"], made["schemeFees"]) == (
        -5_500,
        500,
        75,
        -40,
    )
    assert made["net"] == -4_965
    assert resource(api_v2.get(f"/network-settlements/{made['settlementId']}"), "v2") == made
    assert listed(api_v2.get("/network-settlements"))[0] == [made]

    # The rows, paginated (newest first, as every list), each with its place in the settlement;
    # the late presentment's among them.
    first, cursor = listed(api_v2.get(f"/network-settlements/{made['settlementId']}/rows?limit=2"))
    rest, _ = listed(
        api_v2.get(f"/network-settlements/{made['settlementId']}/rows?limit=2&cursor={cursor}")
    )
    rows = first + rest
    assert [row["position"] for row in rows] == [3, 2, 1]
    rows.reverse()
    assert [(r["position"], r["networkTransactionId"], r["amount"]) for r in rows] == [
        (1, paid, -4_000),
        (2, refund["returnId"], 500),
        (3, late, -1_500),
    ]
    assert Authorization.objects.get(pk=late).status == Authorization.Status.PENDING

    # Three journals on the settlement date: the transactions against card clearing,
    # interchange and scheme fees against fees; all three against settlement.
    journals = Journal.objects.filter(kind=Journal.Kind.NETWORK_SETTLEMENT)
    assert {j.pk for j in journals} == {
        made["clearingJournalId"],
        made["interchangeJournalId"],
        made["schemeFeesJournalId"],
    }
    zone = ZoneInfo(institution.time_zone)
    day = datetime.fromisoformat(made["settlementDate"]).date()
    assert {j.value_at for j in journals} == {datetime.combine(day, time.min, zone)}
    assert local_date(institution, journals[0].value_at) == day
    settlement = internal(institution, Account.InternalCode.SETTLEMENT)
    fees = internal(institution, Account.InternalCode.FEES)
    clearing.refresh_from_db()
    # What card clearing keeps is the late presentment TX has not cleared: the matching's
    # `network_only` break until it is presented (docs/reconciliation.md).
    assert clearing.posted == 4_000 - 500 - 5_000 == -1_500
    assert settlement.posted == 5_000 - 75 + 40 == 4_965  # the net paid to the network
    assert fees.posted == 75 - 40
    moved = {
        (e.account_id, e.direction, e.amount)
        for e in Entry.objects.filter(journal__kind=Journal.Kind.NETWORK_SETTLEMENT)
    }
    assert moved == {
        (clearing.pk, "debit", 5_000),
        (settlement.pk, "credit", 5_000),
        (fees.pk, "credit", 75),
        (settlement.pk, "debit", 75),
        (fees.pk, "debit", 40),
        (settlement.pk, "credit", 40),
    }
    assert ledger_breaches() == []
    [event] = Event.objects.filter(type="network_settlement.received")
    assert event.object_id == made["settlementId"] and event.data["net"] == -4_965
    assert event.actor_type == "apiKey" and event.actor_id

    # The same content again (its rows in another order): the same settlement, nothing more.
    again = copy.deepcopy(body)
    again["rows"].reverse()
    assert created(network.post("/network-settlements", again), "v2") == made
    # Other content for the same network's day: 409, nothing changes.
    other = settlement_body([[paid, "purchase", -4_000, 60]])
    assert_error(
        network.post("/network-settlements", other),
        "v2",
        409,
        "already_exists",
        details={"settlementId": made["settlementId"]},
    )
    assert NetworkSettlement.objects.count() == 1 and NetworkSettlementRow.objects.count() == 3
    assert journals.count() == 3
    assert Event.objects.filter(type="network_settlement.received").count() == 1
    # The same day of another network is another settlement.
    other["network"] = "mastercard"
    assert created(network.post("/network-settlements", other), "v2")["rowCount"] == 1
    assert ledger_breaches() == []

    # Sent only with the `network` scope; another institution's settlement is not found.
    reader = Api("v2", issue_key(institution, scopes=[scopes.READ])[1])
    assert reader.post("/network-settlements", simple_body()).status_code == 403
    theirs = Api("v2", issue_key(InstitutionFactory())[1])
    assert theirs.get(f"/network-settlements/{made['settlementId']}").status_code == 404
    assert theirs.get(f"/network-settlements/{made['settlementId']}/rows").status_code == 404
    assert listed(theirs.get("/network-settlements"))[0] == []


def _refusals() -> dict:
    """case -> (the body broken, the field the 400 names)."""
    today = timezone.now().date()
    cases = {}

    def case(name, field, change):
        body = simple_body()
        change(body)
        cases[name] = (body, field)

    case(
        "a total not the rows' sum", "totals.purchases", lambda b: b["totals"].update(purchases=-1)
    )
    case(
        "interchange not the rows'",
        "totals.interchange",
        lambda b: b["totals"].update(interchange=0),
    )
    case(
        "net not the formula",
        "totals.net",
        lambda b: b["totals"].update(net=b["totals"]["net"] + 1),
    )
    case("a purchase above 0", "rows.0.amount", lambda b: b["rows"][0].update(amount=2_000))
    case("a refund below 0", "rows.1.amount", lambda b: b["rows"][1].update(amount=-700))
    case("an amount of 0", "rows.0.amount", lambda b: b["rows"][0].update(amount=0))
    case("a fraction", "rows.0.amount", lambda b: b["rows"][0].update(amount=-20.5))
    case("an amount as text", "rows.0.amount", lambda b: b["rows"][0].update(amount="-2000"))
    case("beyond 10^15", "totals.net", lambda b: b["totals"].update(net=-(10**16)))
    case(
        "the same transaction twice",
        "rows.1.networkTransactionId",
        lambda b: b["rows"][1].update(networkTransactionId="NET-1", kind="purchase", amount=-1),
    )
    case(
        "an id with a slash",
        "rows.0.networkTransactionId",
        lambda b: b["rows"][0].update(networkTransactionId="../x"),
    )
    case(
        "an id of 65",
        "rows.0.networkTransactionId",
        lambda b: b["rows"][0].update(networkTransactionId="N" * 65),
    )
    case("an unknown kind", "rows.0.kind", lambda b: b["rows"][0].update(kind="fee"))
    case("an unknown field", "rows.0.pan", lambda b: b["rows"][0].update(pan="4111111111111111"))
    case("a missing total", "totals.schemeFees", lambda b: b["totals"].pop("schemeFees"))
    case("an unknown network", "network", lambda b: b.update(network="amex"))
    case("a currency without decimals", "currency", lambda b: b.update(currency="XAU"))
    case("not a currency", "currency", lambda b: b.update(currency="EURO"))
    case(
        "after today",
        "settlementDate",
        lambda b: b.update(settlementDate=str(today + timedelta(days=2))),
    )
    case(
        "a year ago and more",
        "settlementDate",
        lambda b: b.update(settlementDate=str(today - timedelta(days=500))),
    )
    case("not a date", "settlementDate", lambda b: b.update(settlementDate="2026-02-30"))
    return cases  # fmt: skip


def test_a_settlement_that_does_not_add_up_is_refused_whole_naming_the_field(institution):
    network = Api("v2", issue_key(institution, scopes=scopes.ROLES["network"])[1])
    for name, (body, field) in _refusals().items():
        response = network.post("/network-settlements", body)
        assert response.status_code == 400, (name, response.content)
        error = error_of(response, "v2")
        assert error["code"] == "validation_error", name
        assert field in error["details"], (name, error)
    assert not NetworkSettlement.objects.exists() and not NetworkSettlementRow.objects.exists()
    assert not Journal.objects.filter(kind=Journal.Kind.NETWORK_SETTLEMENT).exists()
    assert not Event.objects.filter(type="network_settlement.received").exists()
    # ... and the body they were broken from is accepted.
    assert network.post("/network-settlements", simple_body()).status_code == 201
