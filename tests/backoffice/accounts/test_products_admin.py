"""Staff add and change account products in the admin, through the same services as the API
(docs/products.md): the rules show on the form, the events name the staff user, the admin's
log says who and when; products are never deleted."""

import pytest
from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
from django.urls import reverse

from accounts.models import AccountProduct
from events.models import Event
from events.payloads import event_payload

pytestmark = pytest.mark.django_db


def url(view="changelist", *args):
    return reverse(f"admin:accounts_accountproduct_{view}", args=args)


def add_form(institution, **fields):
    return {
        "institution": institution.pk,
        "code": "CBSFinancialContractTypeAPI",
        "name": "Current account (JPY)",
        "currency": "JPY",
        "allows_overdraft": "on",
        "max_overdraft_limit": "100000",
        **fields,
    }


def test_staff_add_a_product_through_the_service(admin_client, admin_user, institution):
    response = admin_client.post(url("add"), add_form(institution))

    assert response.status_code == 302, response.context["adminform"].form.errors
    product = AccountProduct.objects.get(institution=institution, currency="JPY")
    assert (product.kind, product.allows_overdraft, product.max_overdraft_limit) == (
        "current",
        True,
        100_000,
    )
    event = Event.objects.get(object_id=product.pk)
    assert (event.type, event.actor_type, event.actor_id) == (
        "product.created",
        "staff",
        str(admin_user.pk),
    )
    entry = LogEntry.objects.get(object_id=product.pk)
    assert (entry.action_flag, entry.user) == (ADDITION, admin_user)


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"currency": "XYZ"}, "currency", "ISO 4217"),
        ({"allows_overdraft": ""}, "max_overdraft_limit", "Must be 0"),
        ({"max_overdraft_limit": "-5"}, "max_overdraft_limit", "from 0"),
    ],
)
def test_the_services_rules_show_on_the_add_form(admin_client, institution, fields, field, message):
    before = AccountProduct.objects.count()
    response = admin_client.post(url("add"), add_form(institution, **fields))
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert message in " ".join(errors[field]), errors
    assert AccountProduct.objects.count() == before
    assert not Event.objects.filter(type="product.created").exists()


def test_staff_change_and_retire_a_product(admin_client, admin_user, institution):
    product = AccountProduct.objects.get(institution=institution, code="AccountPrepaidAPI")
    page = admin_client.get(url("change", product.pk))
    assert page.status_code == 200
    form = page.context["adminform"].form
    assert set(form.fields) == {
        "name",
        "allows_overdraft",
        "max_overdraft_limit",
        "monthly_fee",
        "debit_hold_days",
        "status",
    }

    response = admin_client.post(
        url("change", product.pk),
        {"name": "Prepaid (old)", "max_overdraft_limit": "0", "status": "retired"},
    )

    assert response.status_code == 302
    product.refresh_from_db()
    assert (product.name, product.status, product.currency) == ("Prepaid (old)", "retired", "EUR")
    event = Event.objects.get(object_id=product.pk, type="product.updated")
    assert event_payload(event)["data"]["changedFields"] == ["name", "status"]
    assert (event.actor_type, event.actor_id) == ("staff", str(admin_user.pk))
    entry = LogEntry.objects.get(object_id=product.pk)
    assert (entry.action_flag, entry.user) == (CHANGE, admin_user)


def test_products_are_never_deleted(admin_client, institution):
    product = AccountProduct.objects.filter(institution=institution).first()
    assert admin_client.get(url("delete", product.pk)).status_code == 403
    assert admin_client.post(url("delete", product.pk), {"post": "yes"}).status_code == 403
    assert AccountProduct.objects.filter(pk=product.pk).exists()
