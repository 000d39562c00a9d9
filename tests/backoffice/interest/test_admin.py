"""The back office's interest pages (docs/interest.md, "The back office"): a support clerk
limited to their institution reads a product's terms and the accounts' accruals, searches the
accruals by account id and filters them by kind and day; nothing can be added or changed, and
no page shows an account number."""

import pytest
from django.urls import reverse

from accounts.models import Account
from interest.accrual import interest_accrue
from interest.models import InterestAccrual, InterestTerms
from tests.accounts.api.test_statements import Clock
from tests.backoffice.helpers import staff
from tests.interest.accruing import accruing_world, utc
from tests.staff import sign_in

pytestmark = pytest.mark.django_db

ACCRUALS = reverse("admin:interest_interestaccrual_changelist")
TERMS = reverse("admin:interest_interestterms_changelist")


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
    for model in (InterestTerms, InterestAccrual):
        opts = model._meta
        assert (
            client.get(reverse(f"admin:{opts.app_label}_{opts.model_name}_add")).status_code == 403
        )
    assert client.post(page.wsgi_request.path, {"day": "2027-03-05"}).status_code == 403
    assert InterestAccrual.objects.get(pk=row.pk).day.day == 1
