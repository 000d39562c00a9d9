"""`core.rows.as_row` reads each model's columns from a plan made once per model: it gives what
the definition gives (every concrete column, through its field's `pre_save`, as JSON), for every
model of the project, a new instance and one with every value set. `core.rows.select` reads
what the ORM reads."""

import datetime
import uuid

import pytest
from django.apps import apps
from django.db import models
from django.test.utils import isolate_apps
from django.utils import timezone

from core import rows
from core.rows import as_row

NOW = datetime.datetime(2026, 5, 4, 3, 2, 1, 123456, tzinfo=datetime.UTC)


def defined(obj: models.Model) -> dict:
    """The definition: each concrete column, the value `save()` would write, as JSON."""
    return {
        field.column: rows._json_value(field.pre_save(obj, add=True))
        for field in obj._meta.concrete_fields
        if not field.generated
    }


def every_value(model: type[models.Model]) -> models.Model:
    """An instance with a value of its kind in every column."""
    obj = model()
    for field in model._meta.concrete_fields:
        if field.generated or field.primary_key:
            continue
        if isinstance(field, models.DateTimeField):
            value = NOW
        elif isinstance(field, models.DateField):
            value = NOW.date()
        elif isinstance(field, models.UUIDField):
            value = uuid.UUID(int=7)
        elif isinstance(field, models.BooleanField):
            value = True
        elif isinstance(field, models.IntegerField):
            value = 7
        elif isinstance(field, models.JSONField):
            value = {"a": [1, "b"]}
        else:
            continue
        setattr(obj, field.attname, value)
    return obj


@pytest.fixture(autouse=True)
def frozen_now(monkeypatch):
    """`auto_now` fields take this instant, in `as_row` and in the definition alike."""
    monkeypatch.setattr(timezone, "now", lambda: NOW)


@pytest.mark.parametrize("model", apps.get_models(), ids=lambda model: model._meta.label)
def test_as_row_is_the_definition_for_every_model(model):
    for obj in (model(), every_value(model)):
        assert as_row(obj) == defined(obj)


@isolate_apps("core")
def test_a_computed_field_is_computed_and_a_plain_one_read():
    class Stamped(models.Model):  # noqa: DJ008
        touched = models.DateTimeField(auto_now=True)
        made = models.DateTimeField(auto_now_add=True)
        due = models.DateTimeField(null=True)

        class Meta:
            app_label = "core"

    obj = Stamped(due=NOW.replace(year=2030))
    assert as_row(obj) == {
        "id": None,
        "touched": NOW.isoformat(),
        "made": NOW.isoformat(),
        "due": NOW.replace(year=2030).isoformat(),
    }
    assert obj.touched == NOW  # set on the instance, as save() would


def fields_of(obj: models.Model) -> dict:
    return {field.attname: getattr(obj, field.attname) for field in obj._meta.concrete_fields}


@pytest.mark.django_db
def test_select_reads_what_the_orm_reads():
    """Every column, a JSON field through its converter and the generated one included, as the
    ORM gives it; the instances are saved rows of the read database."""
    from accounts.models import Account
    from tests.accounts.ledger.helpers import institution, open_account

    fi = institution()
    first = open_account(fi, balance=500)
    second = open_account(fi)
    Account.objects.filter(pk=first.pk).update(metadata={"team": "payroll", "n": [1, 2]})

    found = rows.select(Account, "id = ANY(%s) ORDER BY id", [[first.pk, second.pk]])

    expected = sorted(Account.objects.filter(pk__in=[first.pk, second.pk]), key=lambda a: a.pk)
    assert [fields_of(account) for account in found] == [fields_of(a) for a in expected]
    by_id = {account.pk: account for account in found}
    assert by_id[first.pk].metadata == {"team": "payroll", "n": [1, 2]}
    assert by_id[first.pk].available == 500
    assert all(not a._state.adding and a._state.db == "default" for a in found)


@pytest.mark.django_db
def test_select_of_no_row_is_empty():
    from accounts.models import Account

    assert rows.select(Account, "id = %s", ["acct_none"]) == []
