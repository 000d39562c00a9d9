"""The admin shows each resource's client metadata read-only, as escaped pretty JSON
(`backoffice.kit.metadata_display`), and has no form field to change it."""

import pytest
from django.urls import reverse

from accounts.models import Account, Hold
from authorizations.models import Authorization
from cards.models import Card
from customers.models import Customer
from tests.accounts.api.helpers import created, funded_account
from tests.authorizations.helpers import MERCHANT, funded
from transfers.models import Transfer

METADATA = {"note": "<b>bold</b> & co", "ref": "R-1"}


def change_page(admin_client, obj, query=None):
    opts = obj._meta
    url = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])
    response = admin_client.get(url, query or {})
    assert response.status_code == 200
    return response


@pytest.fixture
def world(api_v2):
    f = funded(api_v2)
    source = funded_account(api_v2, 1_000)["accountId"]
    for path in (f"/customers/{f.customer_id}", f"/accounts/{f.account_id}", f"/cards/{f.card_id}"):
        response = api_v2.patch(path, {"metadata": METADATA})
        assert response.status_code == 200, response.content
    hold = created(
        api_v2.post(
            "/holds",
            {"accountId": source, "amount": 10, "currency": "EUR", "metadata": METADATA},
        ),
        "v2",
    )
    transfer = created(
        api_v2.post(
            "/transfers",
            {
                "source": {"accountId": source},
                "destination": {"accountId": f.account_id},
                "amount": 10,
                "currency": "EUR",
                "metadata": METADATA,
            },
        ),
        "v2",
    )
    authorization = created(
        api_v2.post(
            "/card-authorizations",
            {
                "cardId": f.card_id,
                "amount": 10,
                "currency": "EUR",
                "type": "Goods",
                "merchant": MERCHANT,
                "metadata": METADATA,
            },
        ),
        "v2",
    )
    return [
        Customer.objects.get(pk=f.customer_id),
        Account.objects.get(pk=f.account_id),
        Card.objects.get(pk=f.card_id),
        Hold.objects.get(pk=hold["holdId"]),
        Transfer.objects.get(pk=transfer["transferId"]),
        Authorization.objects.get(pk=authorization["authorizationId"]),
    ]


def test_every_resource_shows_its_metadata_escaped_and_read_only(admin_client, world):
    for obj in world:
        response = change_page(admin_client, obj)
        html = response.content.decode()
        assert "&lt;b&gt;bold&lt;/b&gt; &amp; co" in html, type(obj).__name__
        assert "<b>bold</b>" not in html
        assert '"ref": "R-1"' in html.replace("&quot;", '"')
        if isinstance(obj, Customer):  # the customer's page reads first; its form is a step
            response = change_page(admin_client, obj, {"edit": "1"})
            assert "&lt;b&gt;bold&lt;/b&gt; &amp; co" in response.content.decode()
        form = response.context["adminform"].form
        assert "metadata" not in form.fields, type(obj).__name__
