"""`POST /products/accounts/{rid}/interest-previews` (docs/interest.md, "Previews"): a product's
accounts over a span under proposed terms beside the terms in effect, from history, per kind,
exact, paged by accounts, one balance query a batch, writing nothing. Figures by hand from the
accruing world (tests/interest/accruing.py)."""

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
            preview(api_v2, rid, balanceMethod="average_daily"),
            preview(api_v2, rid, after="' OR 1=1 --"),
        ]
        # Another institution's key sees no such product.
        other = Api("v2", issue_key(other_institution)[1])
        missing = preview(other, rid)

        interest_accrue()

    # Under the terms in effect (act/365F, 3.65 % and 7.3 %): deposits a 0.1 x 2 + b 1 x 5,
    # overdrafts a 0.4 x 3. Proposed (act/360, 7.3 % and 14.6 %): deposits 52,000 x 7.3 % / 360,
    # overdrafts 6,000 x 14.6 % / 360.
    deposit = figures(Fraction(52, 10), Fraction(52_000) * Fraction(73, 1000) / 360)
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
    assert deposit["proposed"] == "10.544444444444" and deposit["difference"] == "5.344444444444"
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
