"""A product's interest terms (docs/interest.md, "Terms"): effective-dated rows that never
change, rates as decimal strings, every rule a 400 that writes nothing, another institution's
product a 404, an event with its actor."""

from datetime import datetime

import pytest
from django.db import IntegrityError, transaction

from events.models import Event
from interest.models import InterestTerms
from tests.accounts.api.helpers import (
    ANY,
    TIMESTAMP,
    assert_error,
    assert_not_found,
    product_rid,
    resource,
    unknown_id,
)
from tests.accounts.api.test_statements import Clock
from tests.conftest import Api
from tests.factories import issue_key

from .helpers import TERMS, post_terms, terms_created

pytestmark = pytest.mark.django_db

# 2026-11-30T23:30Z is already 2026-12-01 in Berlin.
NOW = "2026-11-30T23:30:00+00:00"


@pytest.fixture
def clock(institution):
    institution.time_zone = "Europe/Berlin"
    institution.save(update_fields=["time_zone"])
    with Clock(datetime.fromisoformat(NOW)) as clock:
        yield clock


def written() -> tuple[int, int]:
    return InterestTerms.objects.count(), Event.objects.filter(type__startswith="interest").count()


def test_terms_are_added_listed_in_date_order_and_never_changed(api_v2, clock):
    rid = product_rid(api_v2)

    later = terms_created(api_v2, rid, effectiveDate="2027-01-15", dayCount="30_360")
    first = terms_created(api_v2, rid)  # today at the institution (Berlin), created second

    assert first == {
        "termsId": first["termsId"],
        "productRid": rid,
        **TERMS,
        "createdAt": first["createdAt"],
    }
    assert first["termsId"].startswith("iterm_") and TIMESTAMP.match(first["createdAt"])
    listed = resource(api_v2.get(f"/products/accounts/{rid}/interest-rates"), "v2")
    assert listed["productRid"] == rid
    assert [t["termsId"] for t in listed["terms"]] == [first["termsId"], later["termsId"]]
    # Another row on the same date: 409, the one there is named, nothing written.
    before = written()
    error = assert_error(
        post_terms(api_v2, rid, dayCount="act_360"), "v2", 409, "already_exists", ANY
    )
    assert error["details"] == {"termsId": first["termsId"]}
    assert written() == before
    # The database keeps every row as written.
    row = InterestTerms.objects.get(pk=first["termsId"])
    with pytest.raises(IntegrityError), transaction.atomic():
        InterestTerms.objects.filter(pk=row.pk).update(overdraft_rate=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        InterestTerms.objects.filter(pk=row.pk).delete()

    [event] = Event.objects.filter(type="interest_terms.created", object_id=first["termsId"])
    assert event.object_type == "interest_terms"
    assert event.actor_type == "apiKey" and event.actor_id
    assert event.data["terms"]["overdraft_rate"] == "9.9"
    body = resource(api_v2.get(f"/events/{event.pk}"), "v2")
    assert body["data"]["terms"]["productRid"] == rid
    assert body["data"]["terms"]["depositTiers"][1] == {"fromBalance": 500_000, "rate": "2.25"}


def test_defaults(api_v2, clock):
    rid = product_rid(api_v2)
    body = {
        "effectiveDate": "2026-12-01",
        "depositTiers": [{"fromBalance": 0, "rate": "0.5"}],
        "dayCount": "act_act_isda",
    }
    response = api_v2.post(f"/products/accounts/{rid}/interest-rates", body)
    made = resource(response, "v2", 201)
    assert {k: made[k] for k in made if k not in ("termsId", "createdAt")} == {
        "productRid": rid,
        **body,
        "tiering": "whole",
        "minimumBalance": 0,
        "overdraftRate": "0",
        "balanceMethod": "daily",
        "postingFrequency": "monthly",
        "rounding": "half_even",
        "negativeRatesAllowed": False,
        "withholdingTaxRate": "0",
    }


BAD = [
    # A change never rewrites the past: yesterday at the institution is refused.
    (
        {"effectiveDate": "2026-11-30"},
        {
            "effectiveDate": "Must be today (2026-12-01 at the institution) or later: terms "
            "never change the past."
        },
    ),
    # An average needs a posting period.
    ({"balanceMethod": "average_daily", "postingFrequency": "at_close"}, {"balanceMethod": ANY}),
    # A rate is a decimal string, never a JSON number.
    ({"overdraftRate": 9.9}, {"overdraftRate": ANY}),
    ({"overdraftRate": "1e1"}, {"overdraftRate": ANY}),
    ({"overdraftRate": "100.5"}, {"overdraftRate": ANY}),
    ({"overdraftRate": "1.1234567"}, {"overdraftRate": ANY}),
    ({"overdraftRate": "-1"}, {"overdraftRate": "Must not be negative."}),
    ({"withholdingTaxRate": "\u0661"}, {"withholdingTaxRate": ANY}),  # an Arabic-Indic 1
    (
        {"depositTiers": [{"fromBalance": 0, "rate": "1"}, {"fromBalance": 0, "rate": "2"}]},
        {"depositTiers.1.fromBalance": "Must be above the previous tier's."},
    ),
    (
        {"depositTiers": [{"fromBalance": 10, "rate": "1"}]},
        {"depositTiers.0.fromBalance": "The first tier starts at 0."},
    ),
    (
        {"depositTiers": [{"fromBalance": 0, "rate": "-0.5"}]},
        {"depositTiers.0.rate": "Must not be negative unless negativeRatesAllowed."},
    ),
    ({"depositTiers": []}, {"depositTiers": ANY}),
    ({"dayCount": "act_366"}, {"dayCount": ANY}),
    ({"tiering": "stepped"}, {"tiering": ANY}),
    ({"rounding": "ceiling"}, {"rounding": ANY}),
    ({"minimumBalance": -1}, {"minimumBalance": ANY}),
    ({"extra": 1}, {"extra": "Unknown field."}),
]


@pytest.mark.parametrize(("fields", "details"), BAD, ids=[str(b[0])[:40] for b in BAD])
def test_bad_terms_are_refused_and_nothing_is_written(api_v2, clock, fields, details):
    before = written()

    error = assert_error(
        post_terms(api_v2, product_rid(api_v2), **fields), "v2", 400, "validation_error", ANY
    )

    assert set(error["details"]) == set(details)
    for field, message in details.items():
        if message is not ANY:
            assert error["details"][field] == message
    assert written() == before


def test_negative_deposit_rates_when_allowed(api_v2, clock):
    tiers = [{"fromBalance": 0, "rate": "-0.5"}]
    made = terms_created(api_v2, product_rid(api_v2), depositTiers=tiers, negativeRatesAllowed=True)
    assert made["depositTiers"] == tiers


def test_another_institutions_product_is_not_found(api_v2, clock, other_institution):
    other = Api("v2", issue_key(other_institution)[1])
    rid = product_rid(other)
    before = written()
    for response in (
        post_terms(api_v2, rid),
        api_v2.get(f"/products/accounts/{rid}/interest-rates"),
        api_v2.get(f"/products/accounts/{unknown_id('aprd')}/interest-rates"),
    ):
        assert_not_found(response, "v2", "No account product with this rid.")
    assert written() == before


def test_v1_has_no_interest(api_v1, clock):
    assert api_v1.get(f"/products/accounts/{unknown_id('aprd')}/interest-rates").status_code == 404
