"""Rows as services write them.

`as_row`: a new model instance as the JSON object of its column values: how a row travels to a
PostgreSQL function in one parameter (`jsonb_populate_record`; accounts/sql/posting.sql).
Values are those `save()` would write: defaults already set on the instance, foreign keys as
their ids, timestamps at full precision in ISO 8601 (PostgreSQL reads them back exactly).

`select`: instances of a model from one plain statement, for a hot path's read: the ORM would
compile its query again on every request, and a raw queryset works out its columns and
converters again on every call (accounts of a transfer: 300 -> 160 us; bench/README.md).

`new_row`: a new model instance as `model(**values)` builds it, at a third of the cost, for the
rows every posting builds (journal, statement lines, event, the operation's own): Django's
constructor sends its signals and sets each relation through its descriptor, most of what
building a batched transfer cost (bench/README.md).

`row_update`: the one way a service changes some fields of a row it holds locked.
"""

import datetime
import uuid

from django.db import connections, models, router
from django.db.models.base import ModelState
from django.db.models.signals import post_init, pre_init
from django.utils import timezone

from core.models import Timestamped


def as_row(obj: models.Model) -> dict:
    """`obj`'s columns and their values, for an INSERT of it."""
    columns = _columns.get(type(obj))
    if columns is None:
        columns = _columns[type(obj)] = _columns_of(type(obj))
    stored = obj.__dict__
    row = {}
    for column, attname, field in columns:
        if field is not None:
            value = field.pre_save(obj, add=True)
        else:
            value = stored.get(attname, _UNSET)
            if value is _UNSET:  # a deferred field of a row read from the database
                value = getattr(obj, attname)
        row[column] = value if type(value) in _AS_IS else _json_value(value)
    return row


# Per model: (column, attribute, the field when its `pre_save` computes the value, else None).
# Walking `_meta` and calling every field's `pre_save` was most of what `as_row` cost (five rows
# a transfer: 60 us of a batched transfer's 460 us of CPU; bench/README.md).
_columns: dict[type, list[tuple[str, str, models.Field | None]]] = {}
_UNSET = object()
_AS_IS = frozenset({str, int, bool, float, type(None), dict, list})


def _columns_of(model: type[models.Model]) -> list[tuple[str, str, models.Field | None]]:
    return [
        (field.column, field.attname, field if _computes_on_save(field) else None)
        for field in model._meta.concrete_fields
        if not field.generated
    ]


def _computes_on_save(field: models.Field) -> bool:
    """Whether `field.pre_save` is more than reading the attribute (`auto_now`, a file...)."""
    method = type(field).pre_save
    if method is models.Field.pre_save:
        return False
    if method in (models.DateField.pre_save, models.DateTimeField.pre_save):
        return field.auto_now or field.auto_now_add
    return True


def select(model: type[models.Model], where: str, params: list) -> list[models.Model]:
    """The rows of `model` that `where` (SQL, `%s` placeholders for `params`) picks, as saved
    instances read from the database the router names for reads of `model`."""
    alias = router.db_for_read(model)
    connection = connections[alias]
    plan = _reads.get(model)
    if plan is None:
        plan = _reads[model] = _read_plan(model, connection)
    statement, converters = plan
    with connection.cursor() as cursor:
        cursor.execute(statement + where, params)
        found = cursor.fetchall()
    instances = []
    for values in found:
        if converters:
            values = list(values)
            for index, expression, functions in converters:
                for convert in functions:
                    values[index] = convert(values[index], expression, connection)
        instances.append(model.from_db(alias, None, values))
    return instances


# Per model: the statement's head (every concrete column, in the order `from_db` takes them)
# and, for the columns whose values the database adapter does not give as Python wants them
# (a JSON field), their index, column expression and converters. Made with the first connection
# that reads the model: every database alias of the project is PostgreSQL.
_reads: dict[type, tuple[str, list]] = {}


def _read_plan(model: type[models.Model], connection) -> tuple[str, list]:
    table = model._meta.db_table
    fields = model._meta.concrete_fields
    columns = ", ".join(connection.ops.quote_name(field.column) for field in fields)
    converters = []
    for index, field in enumerate(fields):
        expression = field.get_col(table)
        functions = connection.ops.get_db_converters(expression) + field.get_db_converters(
            connection
        )
        if functions:
            converters.append((index, expression, functions))
    table = connection.ops.quote_name(table)
    statement = f"SELECT {columns} FROM {table} WHERE "  # noqa: S608 - names from the model
    return statement, converters


def new_row(model: type[models.Model], /, **values) -> models.Model:
    """`model(**values)`, built by a plan made once per model: each concrete field from
    `values` (by name, or by attname for a relation given by id) or from its default; a related
    instance checked, cached and routed as its descriptor does; `Timestamped`'s one instant.
    What the plan does not cover goes to the constructor itself: a model with its own
    `__init__`, a parent model, a receiver of `pre_init` or `post_init`, a key that is not one
    concrete field (a property, a field given twice)."""
    plan = _news.get(model)
    if plan is None:
        plan = _news[model] = _new_plan(model)
    if plan is _CONSTRUCTOR or pre_init.has_listeners(model) or post_init.has_listeners(model):
        return model(**values)
    fields, timestamped = plan
    obj = model.__new__(model)
    state = obj._state = ModelState()
    stored = obj.__dict__
    used = 0
    for name, attname, default, relation in fields:
        value = values.get(name, _UNSET)
        if value is not _UNSET:
            used += 1
            if relation is not None:
                value = _relate(obj, state, relation, value)
        elif relation is not None and (value := values.get(attname, _UNSET)) is not _UNSET:
            used += 1
        elif callable(default):
            value = default()
        else:
            value = default
        stored[attname] = value
    if used != len(values):
        return model(**values)
    if timestamped:
        obj.made_at_one_instant(values)
    return obj


# Per model: (name, attname, default: a callable or the value itself, the relation field or
# None) for each concrete column, and whether it is `Timestamped`; or `_CONSTRUCTOR`.
_news: dict[type, tuple[list, bool] | object] = {}
_CONSTRUCTOR = object()


def _new_plan(model: type[models.Model]):
    if model.__init__ not in (models.Model.__init__, Timestamped.__init__) or model._meta.parents:
        return _CONSTRUCTOR
    fields = []
    for field in model._meta.concrete_fields:
        if field.generated:
            continue
        relation = field if field.is_relation else None
        if field.has_default() and callable(field.default):
            default = field.get_default  # called for each instance, as the constructor does
        else:
            default = field.get_default()  # never callable: a callable default is called
        fields.append((field.name, field.attname, default, relation))
    return fields, issubclass(model, Timestamped)


def _relate(obj, state: ModelState, field, value):
    """What `ForwardManyToOneDescriptor.__set__` does for a new instance: the related
    instance's type checked, both instances routed, the relation allowed, the instance cached
    (both ways for a one-to-one). Returns the value of the column."""
    if value is None:
        field.set_cached_value(obj, None)
        return None
    if not isinstance(value, field.remote_field.model._meta.concrete_model):
        raise ValueError(
            f'Cannot assign "{value!r}": "{type(obj)._meta.object_name}.{field.name}" must be a '
            f'"{field.remote_field.model._meta.object_name}" instance.'
        )
    if state.db is None:
        state.db = router.db_for_write(type(obj), instance=value)
    if value._state.db is None:
        value._state.db = router.db_for_write(type(value), instance=obj)
    if not router.allow_relation(value, obj):
        raise ValueError(
            f'Cannot assign "{value!r}": the current database router prevents this relation.'
        )
    field.set_cached_value(obj, value)
    if not field.remote_field.multiple:
        field.remote_field.set_cached_value(value, obj)
    return getattr(value, field.target_field.attname)


def row_update(row: models.Model, values: dict) -> dict:
    """Set the `values` that differ from what `row` holds, with `updated_at` now, and save only
    those fields. Returns the previous value of each field that changed: `{}` when none did,
    and then nothing is written (the caller emits no event)."""
    previous = {
        field: getattr(row, field)
        for field, value in values.items()
        if getattr(row, field) != value
    }
    if previous:
        for field in previous:
            setattr(row, field, values[field])
        row.updated_at = timezone.now()
        row.save(update_fields=[*previous, "updated_at"])
    return previous


def _json_value(value):
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def constraint_of(error) -> str | None:
    """The name of the constraint an IntegrityError broke (None when PostgreSQL named none)."""
    return getattr(getattr(error.__cause__, "diag", None), "constraint_name", None)
