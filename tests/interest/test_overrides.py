"""An account's override of its product's interest terms (docs/interest.md, "Overrides"): from
its effective date to its end date it replaces the product's terms, for the days' calculation
and the accrual job alike; then the product's apply again. The same rules as a product's terms,
kept by the same database rule; another institution's account is not found; an event with its
actor. Figures by hand (tests/interest/accruing.py): `b` holds 10,000, 1 a day at 3.65 %."""

from datetime import date
from types import SimpleNamespace

import pytest
from django.db import IntegrityError, transaction

from events.models import Event
from interest.accrual import interest_accrue
from interest.models import InterestAccrual, InterestTerms
from interest.terms import terms_in_effect
from tests.accounts.api.helpers import ANY, assert_error, assert_not_found, created, resource
from tests.accounts.api.test_statements import Clock
from tests.conftest import Api
from tests.factories import issue_key

from .accruing import accruing_world, utc
from .helpers import TERMS, days_of

pytestmark = pytest.mark.django_db


def test_an_override_replaces_the_products_terms_until_its_end(
    api_v2, institution, other_institution
):
    with Clock(utc("2027-03-01T09:00:00")) as clock:
        world = accruing_world(api_v2)
        path = f"/accounts/{world['b']}/interest-rates"
        # b at 7.3 % on the 2nd and 3rd: 2 a day; the product's 3.65 % again from the 4th.
        body = {
            **TERMS,
            "effectiveDate": "2027-03-02",
            "endDate": "2027-03-03",
            "depositTiers": [{"fromBalance": 0, "rate": "7.3"}],
            "tiering": "whole",
            "minimumBalance": 0,
        }
        override = created(api_v2.post(path, body), "v2")
        # The same rules as a product's terms, and the end after the start: 400, nothing written.
        before = InterestTerms.objects.count()
        for fields, field in (
            ({"endDate": "2027-03-02"}, "endDate"),
            ({"effectiveDate": "2027-02-28"}, "effectiveDate"),
            ({"balanceMethod": "weekly"}, "balanceMethod"),
            ({"overdraftRate": 9.9}, "overdraftRate"),
        ):
            error = assert_error(
                api_v2.post(path, {**body, **fields}), "v2", 400, "validation_error", ANY
            )
            assert set(error["details"]) == {field}
        error = assert_error(api_v2.post(path, body), "v2", 409, "already_exists", ANY)
        assert error["details"] == {"termsId": override["termsId"]}
        assert InterestTerms.objects.count() == before
        listed = resource(api_v2.get(path), "v2")

        # Another institution's key: its account is not found, nothing written.
        other = Api("v2", issue_key(other_institution)[1])
        later = {**body, "effectiveDate": "2027-03-05"}
        for response in (other.post(path, later), other.get(path)):
            assert_not_found(response, "v2", "No account with this id.")
        assert InterestTerms.objects.count() == before

        clock.set(utc("2027-03-05T01:00:00"))  # the 1st to the 4th have ended
        interest_accrue()
        shown = days_of(api_v2, world["b"], "2027-03-01", "2027-03-04")

    assert override == {
        "termsId": override["termsId"],
        "accountId": world["b"],
        **body,
        "createdAt": override["createdAt"],
    }
    assert listed == {"accountId": world["b"], "terms": [override]}
    rows = InterestAccrual.objects.filter(account_id=world["b"]).order_by("day")
    terms = [world["terms"], override["termsId"], override["termsId"], world["terms"]]
    assert [(r.accrual, r.terms_id) for r in rows] == list(zip([1, 2, 2, 1], terms, strict=True))
    assert [(d["accrual"], d["termsId"]) for d in shown["days"]] == [
        (f"{n}.000000000000", t) for n, t in zip([1, 2, 2, 1], terms, strict=True)
    ]
    # a has no override: its product's terms every day.
    assert set(
        InterestAccrual.objects.filter(account_id=world["a"]).values_list("terms_id", flat=True)
    ) == {world["terms"]}

    row = InterestTerms.objects.get(pk=override["termsId"])
    assert (row.product_id, row.account_id, row.end_date) == (None, world["b"], date(2027, 3, 3))
    with pytest.raises(IntegrityError), transaction.atomic():  # never changed
        InterestTerms.objects.filter(pk=row.pk).update(end_date=date(2027, 3, 10))
    [event] = Event.objects.filter(type="interest_terms.created", object_id=row.pk)
    assert event.actor_type == "apiKey" and event.actor_id
    assert event.data["terms"]["account_id"] == world["b"]
    assert event.data["terms"]["end_date"] == "2027-03-03"


def test_which_terms_apply_on_a_day():
    def row(name, start, end=None):
        return SimpleNamespace(name=name, effective_date=date(2027, 1, start), end_date=end)

    product = [row("p1", 1), row("p2", 20)]
    # o1 from the 5th to the 10th; o2 from the 8th, open; o3 from the 15th to the 16th.
    overrides = [row("o1", 5, date(2027, 1, 10)), row("o2", 8), row("o3", 15, date(2027, 1, 16))]

    def on(day):
        terms = terms_in_effect(product, overrides, date(2027, 1, day))
        return terms and terms.name

    assert [on(d) for d in (1, 4, 5, 7, 8, 11, 14, 15, 16, 17, 20)] == [
        "p1",
        "p1",
        "o1",
        "o1",
        "o2",
        "o2",
        "o2",
        "o3",
        "o3",
        "p1",
        "p2",
    ]
    assert terms_in_effect([], [], date(2027, 1, 1)) is None
