"""The back office's interest pages (docs/interest.md, "The back office"): a support clerk
limited to their institution reads a product's terms and an account's override of them, the
accounts' accruals, the adjustments of back-valued money and the postings, searches them by id
and account id and filters them by kind and day; nothing can be added or changed, and no page
shows an account number."""

import re

import pytest
from django.urls import reverse

from accounts.models import Account, Journal
from accounts.posting import Move, credit, journal_new, post
from accounts.services import internal_account
from accounts.verification import ledger_breaches
from interest.accrual import interest_accrue
from interest.models import InterestAccrual, InterestAdjustment, InterestPosting, InterestTerms
from interest.posting import interest_post
from tests.accounts.api.helpers import created
from tests.accounts.api.test_statements import Clock
from tests.backoffice.helpers import staff
from tests.interest.accruing import accruing_world, utc
from tests.interest.helpers import TERMS as ALL_TERMS
from tests.staff import sign_in

pytestmark = pytest.mark.django_db

ACCRUALS = reverse("admin:interest_interestaccrual_changelist")
TERMS = reverse("admin:interest_interestterms_changelist")
ADJUSTMENTS = reverse("admin:interest_interestadjustment_changelist")
POSTINGS = reverse("admin:interest_interestposting_changelist")


def text(response) -> str:
    """A page's words, without its tags."""
    assert response.status_code == 200
    return " ".join(re.sub(r"<[^>]+>", " ", response.content.decode()).split())


def listed(client, url, **query) -> list:
    response = client.get(url, query)
    assert response.status_code == 200, url
    return list(response.context["cl"].result_list)


def test_support_reads_terms_and_accruals_of_their_institution(client, api_v2, institution):
    with Clock(utc("2027-03-01T09:00:00")) as clock:
        world = accruing_world(api_v2)
        clock.set(utc("2027-03-03T12:00:00"))
        interest_accrue()  # the 1st and 2nd: a and b, deposit days
    a, b = (Account.objects.get(pk=world[name]) for name in "ab")
    Account.objects.filter(pk=a.pk).update(account_number="12345678901")
    sign_in(client, staff("clerk", roles=["support"], institutions=[institution]))

    terms = listed(client, TERMS, q=a.product_id)
    assert [row.pk for row in terms] == [world["terms"]]
    page = client.get(reverse("admin:interest_interestterms_change", args=[world["terms"]]))
    assert "0 at 3.65 %" in page.content.decode()

    assert {(r.account_id, r.day.day) for r in listed(client, ACCRUALS)} == {
        (account, day) for account in (a.pk, b.pk) for day in (1, 2)
    }
    assert {r.day.day for r in listed(client, ACCRUALS, q=a.pk)} == {1, 2}
    assert {r.account_id for r in listed(client, ACCRUALS, q=a.pk)} == {a.pk}
    assert listed(client, ACCRUALS, kind="overdraft") == []
    on_the_2nd = listed(client, ACCRUALS, day__gte="2027-03-02", day__lt="2027-03-03")
    assert {(r.account_id, r.day.day) for r in on_the_2nd} == {(a.pk, 2), (b.pk, 2)}

    row = InterestAccrual.objects.get(account=a, day="2027-03-01")
    page = client.get(reverse("admin:interest_interestaccrual_change", args=[row.pk]))
    shown = page.content.decode()
    assert "1,000 at 3.65 %" in shown and "0.100000000000" in shown and "1/365" in shown
    # The account by its id, never its number.
    assert a.pk in shown and "12345678901" not in shown

    # Read-only, for staff and superusers alike.
    for model in (InterestTerms, InterestAccrual, InterestAdjustment, InterestPosting):
        opts = model._meta
        assert (
            client.get(reverse(f"admin:{opts.app_label}_{opts.model_name}_add")).status_code == 403
        )
    assert client.post(page.wsgi_request.path, {"day": "2027-03-05"}).status_code == 403
    assert InterestAccrual.objects.get(pk=row.pk).day.day == 1


def test_support_reads_postings_adjustments_and_overrides(client, api_v2, institution):
    """March's last two days: a (1,000) earns 0.1 a day, b (10,000) 1. The 30th accrued, then
    10,000 more to a valued on the 30th. On 1 April the 31st accrued, a's 30th adjusted by 1
    (found on the 1st, April's to post) and March posted: a 0.1 + 1.1 = 1.2 (1 posted), b 2.
    b's override is May's."""
    monthly = {"postingFrequency": "monthly", "rounding": "half_up", "withholdingTaxRate": "0"}
    with Clock(utc("2027-03-30T09:00:00")) as clock:
        world = accruing_world(api_v2, effectiveDate="2027-03-30", **monthly)
        a, b = world["a"], world["b"]
        body = {**ALL_TERMS, **monthly, "effectiveDate": "2027-05-01", "endDate": "2027-05-31"}
        override = created(api_v2.post(f"/accounts/{b}/interest-rates", body), "v2")["termsId"]
        clock.set(utc("2027-03-31T01:00:00"))
        interest_accrue()  # the 30th
        clock.set(utc("2027-03-31T12:00:00"))
        journal = journal_new(institution_id=institution.pk, kind=Journal.Kind.ADJUSTMENT)
        journal.value_at = utc("2027-03-30T10:00:00")
        funding = internal_account(institution=institution, code="funding", currency="EUR")
        moves = [credit(a, 10_000), Move(funding.pk, "", -10_000)]
        post(institution_id=institution.pk, currency="EUR", moves=moves, journal=journal)
        clock.set(utc("2027-04-01T01:00:00"))
        interest_accrue()  # the 31st, and a's 30th adjusted
        interest_post()  # March
    assert ledger_breaches() == []
    Account.objects.filter(pk=a).update(account_number="12345678901")
    sign_in(client, staff("clerk", roles=["support"], institutions=[institution]))

    # The terms: the product's and b's override told apart, by a column and a filter.
    product_terms = world["terms"]
    assert [row.pk for row in listed(client, TERMS, applies_to="override")] == [override]
    assert [row.pk for row in listed(client, TERMS, applies_to="product")] == [product_terms]
    assert [row.pk for row in listed(client, TERMS, q=b)] == [override]
    shown = client.get(TERMS).content.decode()
    shown = text(client.get(TERMS))
    assert f"override of account {b} (EUR) 1 May 2027 31 May 2027" in shown
    assert "product Current account with interest" in shown
    page = text(client.get(reverse("admin:interest_interestterms_change", args=[override])))
    assert f"override of account {b}" in page and "31 May 2027" in page

    (adjustment,) = listed(client, ADJUSTMENTS)
    assert (adjustment.account_id, adjustment.day.day, adjustment.found_on.day) == (a, 30, 1)
    assert [r.pk for r in listed(client, ADJUSTMENTS, q=a)] == [adjustment.pk]
    assert [r.pk for r in listed(client, ADJUSTMENTS, q=str(adjustment.pk))] == [adjustment.pk]
    assert listed(client, ADJUSTMENTS, q=b) == [] == listed(client, ADJUSTMENTS, kind="overdraft")
    assert listed(client, ADJUSTMENTS, day__gte="2027-03-31", day__lt="2027-04-01") == []
    assert len(listed(client, ADJUSTMENTS, day__gte="2027-03-30", day__lt="2027-03-31")) == 1
    page = client.get(reverse("admin:interest_interestadjustment_change", args=[adjustment.pk]))
    shown = page.content.decode()
    assert "1.000000000000" in shown and "110.00 EUR" in shown
    assert a in shown and "12345678901" not in shown

    postings = {r.account_id: r for r in listed(client, POSTINGS)}
    assert {k: (p.amount, str(p.carried_out)) for k, p in postings.items()} == {
        a: (1, "0.200000000000"),
        b: (2, "0E-12"),
    }
    assert [r.account_id for r in listed(client, POSTINGS, q=a)] == [a]
    assert [r.pk for r in listed(client, POSTINGS, q=postings[b].pk)] == [postings[b].pk]
    assert listed(client, POSTINGS, kind="overdraft") == []
    march = listed(client, POSTINGS, kind="deposit", last_day__gte="2027-03-31")
    assert {r.account_id for r in march} == {a, b}
    page = client.get(reverse("admin:interest_interestposting_change", args=[postings[a].pk]))
    shown = page.content.decode()
    assert "1.200000000000" in shown and "0.01 EUR" in shown and "0.00 EUR" in shown
    assert postings[a].journal_id in shown and a in shown and "12345678901" not in shown
