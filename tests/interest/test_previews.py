"""`POST /products/accounts/{rid}/interest-previews` (docs/interest.md, "Previews"): a product's
accounts over a span under proposed terms beside the terms in effect, from history, per kind,
exact, as the accrual job computes a day (an account's override, average daily balances from
their period's first day), paged by accounts, one balance query a batch, writing nothing.
Figures by hand from the accruing world (tests/interest/accruing.py)."""

from decimal import Decimal
from fractions import Fraction

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import Account, Entry, Journal
from events.models import Event
from interest import previews
from interest.accrual import interest_accrue
from interest.models import InterestAccrual, InterestBooking, InterestTerms
from tests.accounts.api.helpers import adjust, assert_error, assert_not_found, error_of, resource
from tests.accounts.api.test_statements import Clock
from tests.conftest import Api
from tests.factories import issue_key

from .accruing import accruing_world, utc
from .helpers import TERMS, days_of

pytestmark = pytest.mark.django_db

PROPOSED = {
    **{field: value for field, value in TERMS.items() if field != "effectiveDate"},
    "depositTiers": [{"fromBalance": 0, "rate": "7.3"}],
    "tiering": "whole",
    "minimumBalance": 0,
    "overdraftRate": "14.6",
    "dayCount": "act_360",
}


def preview(api, rid, **fields):
    body = {**PROPOSED, "from": "2027-03-01", "to": "2027-03-05", **fields}
    return api.post(f"/products/accounts/{rid}/interest-previews", body)


def decimal(value: Fraction) -> str:
    return f"{Decimal(round(value * 10**12)).scaleb(-12):f}"


def figures(current: Fraction, proposed: Fraction) -> dict:
    difference = proposed - current
    return {
        "current": decimal(current),
        "currentExact": f"{current.numerator}/{current.denominator}",
        "proposed": decimal(proposed),
        "proposedExact": f"{proposed.numerator}/{proposed.denominator}",
        "difference": decimal(difference),
        "differenceExact": f"{difference.numerator}/{difference.denominator}",
    }


def counts() -> list[int]:
    return [
        model.objects.count()
        for model in (InterestAccrual, InterestBooking, InterestTerms, Journal, Entry, Event)
    ]


def test_a_rate_change_previewed_over_the_book(api_v2, institution, other_institution, monkeypatch):
    with Clock(utc("2027-03-01T09:00:00")) as clock:
        world = accruing_world(api_v2)
        rid = Account.objects.get(pk=world["a"]).product_id
        # b at 7.3 % on the 3rd and 4th, its own terms on both sides: 2 a day.
        override = {
            **TERMS,
            "effectiveDate": "2027-03-03",
            "endDate": "2027-03-04",
            "depositTiers": [{"fromBalance": 0, "rate": "7.3"}],
            "tiering": "whole",
            "minimumBalance": 0,
        }
        assert api_v2.post(f"/accounts/{world['b']}/interest-rates", override).status_code == 201
        # a takes 3,000 out on the 3rd: -2,000 from then.
        clock.set(utc("2027-03-03T12:00:00"))
        assert adjust(api_v2, world["a"], "debit", 3_000).status_code == 201
        clock.set(utc("2027-03-06T00:30:00"))
        before = counts()
        with CaptureQueriesContext(connection) as queries:
            whole = resource(preview(api_v2, rid), "v2")
        reads = [q for q in queries.captured_queries if "accounts_entry" in q["sql"]]
        written = counts()
        # A page of one account (5 days of 5 account-days), then the next from it.
        monkeypatch.setattr(previews, "MAX_ACCOUNT_DAYS", 5)
        first = resource(preview(api_v2, rid), "v2")
        second = resource(preview(api_v2, rid, after=first["nextAfter"]), "v2")
        monkeypatch.undo()
        shown = [days_of(api_v2, world[name], "2027-03-01", "2027-03-05") for name in "ab"]

        # Refused: the date is no part of a preview, a day not ended, the terms' own rules.
        assert_error(
            preview(api_v2, rid, effectiveDate="2027-03-06"),
            "v2",
            400,
            "validation_error",
            {"effectiveDate": "Unknown field."},
        )
        refused = [
            preview(api_v2, rid, to="2027-03-06"),
            preview(api_v2, rid, **{"from": "2026-01-01", "to": "2027-01-02"}),
            preview(api_v2, rid, overdraftRate=14.6),
            preview(api_v2, rid, depositTiers=[{"fromBalance": 5, "rate": "1"}]),
            preview(api_v2, rid, balanceMethod="average_daily", postingFrequency="at_close"),
            preview(api_v2, rid, after="' OR 1=1 --"),
        ]
        # Another institution's key sees no such product.
        other = Api("v2", issue_key(other_institution)[1])
        missing = preview(other, rid)

        interest_accrue()

    # Under the terms in effect (act/365F, 3.65 % and 7.3 %): deposits a 0.1 x 2 + b 1 x 3 and
    # 2 x 2 under its override, overdrafts a 0.4 x 3. Proposed (act/360, 7.3 % and 14.6 %):
    # deposits 32,000 x 7.3 % / 360 and b's override's 4, overdrafts 6,000 x 14.6 % / 360.
    deposit = figures(Fraction(72, 10), Fraction(32_000) * Fraction(73, 1000) / 360 + 4)
    overdraft = figures(Fraction(12, 10), Fraction(6_000) * Fraction(146, 1000) / 360)
    assert whole == {
        "productRid": rid,
        "currency": "EUR",
        "days": 5,
        "accounts": 2,
        "deposit": deposit,
        "overdraft": overdraft,
        "nextAfter": None,
    }
    assert deposit["proposed"] == "10.488888888889" and deposit["difference"] == "3.288888888889"
    # The current figures are the days' as GET .../interest/days shows them.
    assert Fraction(whole["deposit"]["currentExact"]) == sum(
        Fraction(days["depositTotal"]) for days in shown
    )
    assert Fraction(whole["overdraft"]["currentExact"]) == sum(
        Fraction(days["overdraftTotal"]) for days in shown
    )
    # The balances of the two accounts' five days: one query.
    assert len(reads) == 1
    # Nothing written by the previews (the idempotency records are the API's).
    assert written == before
    # The pages: one account each, adding up to the whole exactly.
    assert (first["accounts"], second["accounts"]) == (1, 1)
    assert first["nextAfter"] == min(world["a"], world["b"]) and second["nextAfter"] is None
    for kind in ("deposit", "overdraft"):
        for name in ("currentExact", "proposedExact"):
            assert Fraction(first[kind][name]) + Fraction(second[kind][name]) == Fraction(
                whole[kind][name]
            )
    for response, field in zip(
        refused,
        ("to", "to", "overdraftRate", "depositTiers.0.fromBalance", "balanceMethod", "after"),
        strict=True,
    ):
        assert response.status_code == 400, response.content
        assert field in error_of(response, "v2")["details"], response.content
    assert_not_found(missing, "v2", "No account product with this rid.")
    # What the job then stored for those days is the current figures.
    stored = {
        kind: sum(
            (Fraction(row.accrual) for row in InterestAccrual.objects.filter(kind=kind)),
            Fraction(0),
        )
        for kind in ("deposit", "overdraft")
    }
    assert stored == {
        "deposit": Fraction(whole["deposit"]["currentExact"]),
        "overdraft": Fraction(whole["overdraft"]["currentExact"]),
    }


def test_average_daily_balances_read_from_the_periods_first_day(api_v2, institution, monkeypatch):
    with Clock(utc("2027-03-01T09:00:00")) as clock:
        # The product's terms average monthly: nothing below an average of 5,000.
        world = accruing_world(
            api_v2, balanceMethod="average_daily", postingFrequency="monthly", minimumBalance=5_000
        )
        rid = Account.objects.get(pk=world["a"]).product_id
        # b takes 9,000 out on the 3rd: 10,000, 10,000, then 1,000.
        clock.set(utc("2027-03-03T12:00:00"))
        assert adjust(api_v2, world["b"], "debit", 9_000).status_code == 201
        clock.set(utc("2027-03-06T00:30:00"))
        span = {"from": "2027-03-03", "to": "2027-03-05"}
        with CaptureQueriesContext(connection) as queries:
            # The same terms but a minimum of 2,000, from the 3rd.
            body = {**PROPOSED, "balanceMethod": "average_daily", "postingFrequency": "monthly"}
            body.update(dayCount="act_365f", depositTiers=[{"fromBalance": 0, "rate": "3.65"}])
            body.update(minimumBalance=2_000, **span)
            answer = resource(preview(api_v2, rid, **body), "v2")
        reads = [q for q in queries.captured_queries if "accounts_entry" in q["sql"]]
        # Pages bounded by the days read, the 1st to the 5th: 9 account-days hold one account
        # (two of the span's 3 days).
        monkeypatch.setattr(previews, "MAX_AVERAGE_ACCOUNT_DAYS", 9)
        first = resource(preview(api_v2, rid, **body), "v2")
        monkeypatch.undo()
        shown = [days_of(api_v2, world[name], span["from"], span["to"]) for name in "ab"]
        interest_accrue()

    # a's average, 1,000, earns nothing under either. b's averages to the 3rd, 4th and 5th:
    # 7,000, 5,500, 4,600: 0.7, 0.55, 0.46 a day under both; the period's interest to date,
    # 2.1, 2.2 and 0 (below 5,000) under the terms in effect, so the span's accruals are 0.1,
    # 0.1 and -2.2. Proposed, the 1st and 2nd keep the terms in effect (0 at 4,600) and the 3rd
    # to 5th earn at 2,000: to date 2.1, 2.2 and 3 x 0.46, accruals 0.1, 0.1 and -0.82.
    assert answer["days"] == 3 and answer["accounts"] == 2
    assert answer["deposit"] == figures(Fraction(-2), Fraction(-62, 100))
    assert answer["overdraft"] == figures(Fraction(0), Fraction(0))
    assert first["accounts"] == 1 and first["nextAfter"] == min(world["a"], world["b"])
    # The period's days before the span read in the same one query.
    assert len(reads) == 1
    # As the days API and the job compute them.
    assert Fraction(answer["deposit"]["currentExact"]) == sum(
        Fraction(days["depositTotal"]) for days in shown
    )
    stored = InterestAccrual.objects.filter(day__gte="2027-03-03", kind="deposit")
    assert sum((Fraction(row.accrual) for row in stored), Fraction(0)) == Fraction(-2)
