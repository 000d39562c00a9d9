"""Rows as services write them.

`as_row`: a new model instance as the JSON object of its column values: how a row travels to a
PostgreSQL function in one parameter (`jsonb_populate_record`; accounts/sql/posting.sql).
Values are those `save()` would write: defaults already set on the instance, foreign keys as
their ids, timestamps at full precision in ISO 8601 (PostgreSQL reads them back exactly).

`select`: instances of a model from one plain statement, for a hot path's read: the ORM would
compile its query again on every request, and a raw queryset works out its columns and
converters again on every call (accounts of a transfer: 300 -> 160 us; bench/README.md).

`row_update`: the one way a service changes some fields of a row it holds locked.
"""

import datetime
import uuid

from django.db import connections, models, router
from django.utils import timezone


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
