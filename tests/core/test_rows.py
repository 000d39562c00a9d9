"""`core.rows.as_row` reads each model's columns from a plan made once per model: it gives what
the definition gives (every concrete column, through its field's `pre_save`, as JSON), for every
model of the project, a new instance and one with every value set. `core.rows.select` reads
what the ORM reads."""

import datetime
import uuid
from functools import partial

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
    # Built without the constructor (`rows._loaded`): nothing else on the instances either.
    assert [_attributes(a) for a in found] == [_attributes(a) for a in expected]


def _attributes(obj: models.Model) -> dict:
    return {name: value for name, value in vars(obj).items() if name != "_state"}


@pytest.mark.django_db
def test_select_of_no_row_is_empty():
    from accounts.models import Account

    assert rows.select(Account, "id = %s", ["acct_none"]) == []


@pytest.mark.django_db
def test_select_with_related_reads_and_caches_what_select_related_does(django_assert_num_queries):
    """Forward foreign keys, a path through one (the institution, then its reverse one-to-one
    SEPA profile) and a reverse one-to-one that has no row (cached as None): one statement,
    the same instances as the ORM's `select_related`, nothing asked again."""
    from accounts.models import Account
    from institutions.models import Institution
    from tests.accounts.ledger.helpers import institution, open_account
    from tests.payments.helpers import sepa_profile

    with_profile, without = institution(), institution()
    sepa_profile(with_profile)
    first, second = open_account(with_profile), open_account(without)
    related = ("product", "institution__sepa_profile")

    with django_assert_num_queries(1):
        found = rows.select(Account, "id = ANY(%s) ORDER BY id", [[first.pk, second.pk]], related)
        by_id = {account.pk: account for account in found}
        joined = [(fields_of(a), fields_of(a.product), fields_of(a.institution)) for a in found]
        profile = by_id[first.pk].institution.sepa_profile
        assert profile.institution is by_id[first.pk].institution  # cached both ways
        with pytest.raises(Institution.sepa_profile.RelatedObjectDoesNotExist):
            by_id[second.pk].institution.sepa_profile  # noqa: B018 - cached as none

    orm = Account.objects.select_related(*related).filter(pk__in=[first.pk, second.pk])
    expected = {a.pk: a for a in orm}
    assert sorted(joined, key=lambda j: j[0]["id"]) == sorted(
        ((fields_of(a), fields_of(a.product), fields_of(a.institution)) for a in expected.values()),
        key=lambda j: j[0]["id"],
    )
    assert fields_of(profile) == fields_of(expected[first.pk].institution.sepa_profile)
    assert rows.select(Account, "id = %s", ["acct_none"], related) == []


# `new_row` builds what the constructor builds.

MISSING = object()


def built(obj: models.Model) -> tuple:
    """All a new instance holds: each column's value, the related instances cached (by
    identity), whether it is new and its database."""
    return (
        {field.attname: obj.__dict__.get(field.attname, MISSING) for field in obj._meta.fields},
        sorted(obj.__dict__),
        {name: id(value) for name, value in obj._state.fields_cache.items()},
        obj._state.adding,
        obj._state.db,
    )


@pytest.fixture
def fixed_defaults(monkeypatch):
    """Every callable default of `model` gives one value, drawn once (ids and instants would
    differ between two builds); `new_row`'s plans made again."""
    monkeypatch.setattr(rows, "_news", {})

    def fix(model):
        for field in model._meta.concrete_fields:
            if field.has_default() and callable(field.default):
                # What the field's `get_default` calls (a property cached on first use).
                monkeypatch.setitem(field.__dict__, "_get_default", partial(_same, field.default()))

    return fix


def _same(value):
    return value


@pytest.mark.parametrize("model", apps.get_models(), ids=lambda model: model._meta.label)
def test_new_row_of_no_values_is_the_constructors(model, fixed_defaults):
    fixed_defaults(model)
    assert built(rows.new_row(model)) == built(model())


def transfer_values(**more) -> dict:
    """A transfer as `transfer_new` gives it: related instances, one of them not yet saved."""
    from accounts.models import Account, Journal
    from institutions.models import Institution

    fi = Institution.from_db("default", None, [None] * len(Institution._meta.concrete_fields))
    fi.pk = "fi_1"
    ends = [Account(pk=f"acct_{n}", institution_id="fi_1", currency="EUR") for n in (1, 2)]
    journal = Journal(pk="jrnl_1", institution_id="fi_1", kind="transfer")
    return {
        "institution": fi,
        "source_account": ends[0],
        "destination_account": ends[1],
        "source_card": None,
        "journal": journal,
        "amount": 5,
        "posted_amount": 5,
        "currency": "EUR",
        "metadata": {"a": 1},
        **more,
    }


def test_new_row_relates_as_the_descriptors_do(fixed_defaults):
    """Keys from the related instances, each cached, the instances routed to the default
    database, a one-to-one cached both ways; `None` cached as `None`."""
    from transfers.models import Transfer

    fixed_defaults(Transfer)
    values, expected_values = transfer_values(), transfer_values()
    new, expected = rows.new_row(Transfer, **values), Transfer(**expected_values)
    described = built(new)
    assert described[0] == built(expected)[0]
    assert described[1:] == (
        built(expected)[1],
        {name: id(values[name]) for name in expected._state.fields_cache},
        True,
        "default",
    )
    assert set(new._state.fields_cache) == {
        "institution",
        "source_account",
        "destination_account",
        "source_card",
        "journal",
    }
    assert new.source_account_id == "acct_1" and new.journal_id == "jrnl_1"
    assert new.source_card is None
    assert values["journal"]._state.db == expected_values["journal"]._state.db == "default"
    assert values["journal"]._state.fields_cache == {"transfer": new}
    assert expected_values["journal"]._state.fields_cache == {"transfer": expected}


def test_new_row_takes_a_relation_by_its_key(fixed_defaults):
    from transfers.models import Transfer

    fixed_defaults(Transfer)
    values = {"institution_id": "fi_1", "source_account_id": "acct_1", "amount": 5}
    assert built(rows.new_row(Transfer, **values)) == built(Transfer(**values))


def test_new_row_refuses_what_the_constructor_refuses():
    from accounts.models import Journal
    from transfers.models import Transfer

    wrong = {"institution": Journal(pk="jrnl_1")}
    for build in (Transfer, partial(rows.new_row, Transfer)):
        with pytest.raises(ValueError, match='"Transfer.institution" must be a "Institution"'):
            build(**wrong)
        with pytest.raises(TypeError, match="unexpected keyword arguments: 'colour'"):
            build(amount=5, colour="blue")


def test_new_row_of_a_relation_given_twice_is_the_constructors(fixed_defaults):
    """By instance and by key: what the constructor makes of it (the key wins)."""
    from transfers.models import Transfer

    fixed_defaults(Transfer)
    values = transfer_values(source_account_id="acct_9")
    expected = Transfer(**transfer_values(source_account_id="acct_9"))
    new = rows.new_row(Transfer, **values)
    assert new.source_account_id == expected.source_account_id == "acct_9"
    assert built(new)[0] == built(expected)[0]


def test_new_row_of_a_timestamped_model_is_made_at_one_instant(monkeypatch):
    """Neither time given: both the same instant, though each default is called apart; one
    given: the other from its default."""
    from customers.models import Customer

    monkeypatch.setattr(rows, "_news", {})
    ticks = iter(range(1000))
    for name in ("created_at", "updated_at"):
        field = Customer._meta.get_field(name)
        tick = lambda: NOW + datetime.timedelta(seconds=next(ticks))  # noqa: E731
        monkeypatch.setitem(field.__dict__, "_get_default", tick)
    new = rows.new_row(Customer, first_name="Ada")
    assert new.created_at == new.updated_at
    given = rows.new_row(Customer, created_at=NOW.replace(year=2020))
    assert given.created_at == NOW.replace(year=2020) != given.updated_at


def test_new_row_sends_the_signals_when_a_receiver_listens(fixed_defaults):
    from django.db.models.signals import post_init

    from transfers.models import Transfer

    fixed_defaults(Transfer)
    seen = []

    def receiver(sender, instance, **kwargs):
        seen.append(instance)

    post_init.connect(receiver, sender=Transfer)
    try:
        new = rows.new_row(Transfer, amount=5)
    finally:
        post_init.disconnect(receiver, sender=Transfer)
    assert seen == [new]


@isolate_apps("core")
def test_new_row_of_a_model_with_its_own_constructor_calls_it():
    class Named(models.Model):  # noqa: DJ008
        name = models.CharField(max_length=10)

        class Meta:
            app_label = "core"

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.name = self.name.upper()

    assert rows.new_row(Named, name="ada").name == "ADA"
