"""Staff add and change card products in the admin, through the same services as the API
(docs/products.md): the rules show on the form (a BIN taken), the events name the staff user,
the admin's log says who and when; products are never deleted."""

import pytest
from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
from django.urls import reverse

from cards.models import CardProduct
from events.models import Event
from events.payloads import event_payload

pytestmark = pytest.mark.django_db


def url(view="changelist", *args):
    return reverse(f"admin:cards_cardproduct_{view}", args=args)


def add_form(institution, **fields):
    return {
        "institution": institution.pk,
        "name": "Travel",
        "kind": "prepaid",
        "forms": ["virtual"],
        "bin": "45678901",
        "pan_length": "16",
        "validity_months": "18",
        "default_per_transaction": "1000",
        "default_daily": "2000",
        "default_monthly": "3000",
        "default_daily_cash": "0",
        "default_ecommerce": "on",
        "default_atm": "on",
        "default_blocked_mccs": "7995,6011",
        "default_blocked_countries": "",
        **fields,
    }


def test_staff_add_a_product_through_the_service(admin_client, admin_user, institution):
    response = admin_client.post(url("add"), add_form(institution))

    assert response.status_code == 302, response.context["adminform"].form.errors
    product = CardProduct.objects.get(institution=institution, bin="45678901")
    assert product.code == product.pk  # none given
    assert product.validity_months == 18
    assert (product.default_contactless, product.default_atm) == (False, True)
    assert product.default_blocked_mccs == ["6011", "7995"]
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
        ({"bin": "400001"}, "bin", "Another card product of the institution has this BIN."),
        ({"bin": "4000"}, "bin", "6 or 8 digits"),
        ({"default_daily": "-1"}, "default_daily", "from 0"),
        ({"validity_months": "0"}, "validity_months", ""),
    ],
)
def test_the_services_rules_show_on_the_add_form(admin_client, institution, fields, field, message):
    before = CardProduct.objects.count()
    response = admin_client.post(url("add"), add_form(institution, **fields))
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert field in errors and message in " ".join(errors[field]), errors
    assert CardProduct.objects.count() == before


def test_staff_change_and_retire_a_product(admin_client, admin_user, institution):
    product = CardProduct.objects.get(institution=institution, code="PREPAID_STANDARD")
    page = admin_client.get(url("change", product.pk))
    assert page.status_code == 200
    data = {
        name: value
        for name, value in page.context["adminform"].form.initial.items()
        if name in page.context["adminform"].form.fields
    }
    data = {
        **{k: v for k, v in data.items() if not isinstance(v, bool | list)},
        **{k: "on" for k, v in data.items() if v is True},
        "forms": product.forms,
        "default_blocked_mccs": "",
        "default_blocked_countries": "",
        "default_daily": "12345",
        "status": "retired",
    }

    response = admin_client.post(url("change", product.pk), data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    product.refresh_from_db()
    assert (product.default_daily, product.status, product.bin) == (12345, "retired", "400002")
    event = Event.objects.get(object_id=product.pk, type="product.updated")
    assert event_payload(event)["data"]["changedFields"] == ["defaultLimits.daily", "status"]
    assert (event.actor_type, event.actor_id) == ("staff", str(admin_user.pk))
    entry = LogEntry.objects.get(object_id=product.pk)
    assert (entry.action_flag, entry.user) == (CHANGE, admin_user)


def test_products_are_never_deleted(admin_client, institution):
    product = CardProduct.objects.filter(institution=institution).first()
    assert admin_client.get(url("delete", product.pk)).status_code == 403
    assert CardProduct.objects.filter(pk=product.pk).exists()
