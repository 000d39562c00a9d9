"""The decisioning back office: endpoints listed and shown read-only to staff, who changed
them, and the signing secrets (current and previous) never shown nor even read."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from cards.models import CardProduct
from core.actors import Actor, acting_as
from decisioning.models import DecisioningEndpoint
from decisioning.services import decisioning_endpoint_create, decisioning_endpoint_rotate_secret
from tests.factories import InstitutionFactory, issue_key

pytestmark = pytest.mark.django_db


def url(view="changelist", *args):
    return reverse(f"admin:decisioning_decisioningendpoint_{view}", args=args)


@pytest.fixture
def world():
    fi = InstitutionFactory()
    api_key = issue_key(fi)[0]
    with acting_as(Actor(api_key=api_key)):
        default = decisioning_endpoint_create(
            institution=fi,
            url="https://decide.example.com/tx",
            timeout_ms=800,
            on_failure="standin",
            mode="live",
        )
        product = CardProduct.objects.filter(institution=fi).first()
        shadow = decisioning_endpoint_create(
            institution=fi,
            url="https://shadow.example.com/tx",
            timeout_ms=300,
            on_failure="decline",
            mode="shadow",
            card_product_id=product.pk,
        )
    rotated = decisioning_endpoint_rotate_secret(endpoint=default.endpoint)
    return {
        "api_key": api_key,
        "endpoints": [default.endpoint, shadow.endpoint],
        "secrets": [default.secret, rotated.secret, shadow.secret],
    }


def test_pages_render_and_are_view_only(admin_client, world):
    changelist = admin_client.get(url())
    assert changelist.status_code == 200
    assert changelist.context["cl"].result_count == 2
    html = changelist.content.decode()
    assert "https://decide.example.com/tx" in html and "shadow" in html
    # Whether an endpoint takes unsigned answers: a column and a filter of the list.
    assert "column-accept_unsigned_answers" in html
    assert "accept_unsigned_answers__exact=1" in html
    for endpoint in world["endpoints"]:
        response = admin_client.get(url("change", endpoint.pk))
        assert response.status_code == 200
        assert list(response.context["adminform"].form.fields) == []
        page = response.content.decode()
        assert 'name="_save"' not in page
        assert f"API key {world['api_key'].prefix}" in page  # created and updated by
        assert "Accept unsigned answers" in page
    assert admin_client.get(url("add")).status_code == 403
    assert admin_client.get(url("delete", world["endpoints"][0].pk)).status_code == 403
    assert admin_client.get(url(), {"q": world["endpoints"][1].pk}).context["cl"].result_count == 1
    for spec in changelist.context["cl"].filter_specs:
        for choice in spec.choices(changelist.context["cl"]):
            assert admin_client.get(url() + choice["query_string"]).status_code == 200


def test_the_secrets_are_never_shown_nor_read(admin_client, world):
    stored = list(DecisioningEndpoint.objects.all())
    assert any(endpoint.previous_secret_encrypted for endpoint in stored)
    pages = [url()] + [url(view, e.pk) for e in stored for view in ("change", "history")]
    with CaptureQueriesContext(connection) as queries:
        for page in pages:
            response = admin_client.get(page)
            assert response.status_code == 200
            html = response.content.decode()
            for secret in world["secrets"]:
                assert secret[6:] not in html
            for endpoint in stored:
                assert endpoint.secret_encrypted not in html
                if endpoint.previous_secret_encrypted:
                    assert endpoint.previous_secret_encrypted not in html
    sql = "\n".join(query["sql"] for query in queries.captured_queries)
    assert '"decisioning_decisioningendpoint"."url"' in sql
    assert "secret_encrypted" not in sql
