"""A new row's `created_at` and `updated_at` are one instant (`core.models.Timestamped`), for
every model that has both defaulting to now; a row read back keeps what is stored."""

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from django.apps import apps
from django.utils import timezone

from core.models import Timestamped
from tests.factories import InstitutionFactory

TWO_FIELDS = [
    model
    for model in apps.get_models()
    if {"created_at", "updated_at"} <= {field.name for field in model._meta.fields}
    and model._meta.get_field("updated_at").default is timezone.now
]


def test_every_model_with_both_defaults_is_timestamped():
    assert TWO_FIELDS, "the models were found"
    assert [m for m in TWO_FIELDS if not issubclass(m, Timestamped)] == []


@pytest.mark.parametrize("model", TWO_FIELDS, ids=lambda model: model._meta.label)
def test_a_new_row_is_updated_when_it_is_created(model, monkeypatch):
    ticks = itertools.count()
    start = datetime(2026, 1, 1, tzinfo=UTC)
    # Every call of now() a millisecond later than the one before.
    monkeypatch.setattr(timezone, "now", lambda: start + timedelta(milliseconds=next(ticks)))
    row = model()
    assert row.updated_at == row.created_at


@pytest.mark.django_db
def test_a_row_read_back_keeps_its_stored_times():
    from customers.models import Customer
    from customers.services import customer_create

    customer = customer_create(
        institution=InstitutionFactory(), first_name="Ada", last_name="Lovelace", country_code="276"
    )
    later = customer.created_at + timedelta(seconds=5)
    Customer.objects.filter(pk=customer.pk).update(updated_at=later)
    stored = Customer.objects.get(pk=customer.pk)
    assert (stored.created_at, stored.updated_at) == (customer.created_at, later)
