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
import inspect
import uuid

from django.db import connections, models, router
from django.db.models.base import ModelState
from django.db.models.fields.related_descriptors import ForeignKeyDeferredAttribute
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


def select(
    model: type[models.Model], where: str, params: list, related: tuple[str, ...] = ()
) -> list[models.Model]:
    """The rows of `model` that `where` (SQL on the model's own columns, `%s` placeholders for
    `params`) picks, as saved instances read from the database the router names for reads of
    `model`. `related`: relation paths joined in the same statement and cached on the
    instances, as `select_related` does (`"product"`, `"institution__sepa_profile"`: forward
    foreign keys and one-to-ones, and reverse one-to-ones; None where the row has none). With
    `related`, `where` filters the model's rows in a subquery: an ORDER BY in it is not kept."""
    alias = router.db_for_read(model)
    connection = connections[alias]
    plan = _reads.get((model, related))
    if plan is None:
        plan = _reads[(model, related)] = _read_plan(model, related, connection)
    head, tail, parts = plan
    with connection.cursor() as cursor:
        cursor.execute(head + where + tail, params)
        found = cursor.fetchall()
    instances = []
    for values in found:
        objects = []
        for part in parts:
            row = values[part.start : part.stop]
            if part.parent is not None and row[part.pk_index] is None:
                objects.append(None)  # the outer join found none
            else:
                objects.append(_loaded(part.model, alias, _converted(row, part, connection)))
        for part, obj in zip(parts[1:], objects[1:], strict=True):
            parent = objects[part.parent]
            if parent is not None:
                part.local_setter(parent, obj)
                if obj is not None:
                    part.remote_setter(obj, parent)
        instances.append(objects[0])
    return instances


def _converted(row: tuple, part: "_Part", connection) -> tuple | list:
    if not part.converters:
        return row
    row = list(row)
    for index, expression, functions in part.converters:
        for convert in functions:
            row[index] = convert(row[index], expression, connection)
    return row


def _loaded(model: type[models.Model], alias: str, values) -> models.Model:
    """`model.from_db(alias, None, values)` for a whole row, at a third of the cost where
    nothing can tell the difference: Django's constructor sends `pre_init` and `post_init`
    (checked here: no receiver) and sets each column through `setattr`, whose only descriptor
    with a `__set__` among the columns it allows (a foreign key's id) drops a cached related
    instance a new instance cannot have (a read of the account and its product: 4 instances)."""
    attnames = _loads.get(model)
    if attnames is None:
        attnames = _loads[model] = _load_plan(model)
    if attnames is _CONSTRUCTOR or pre_init.has_listeners(model) or post_init.has_listeners(model):
        return model.from_db(alias, None, values)
    obj = model.__new__(model)
    state = obj._state = ModelState()
    state.adding = False
    state.db = alias
    obj.__dict__.update(zip(attnames, values, strict=True))
    return obj


# Per model: the attribute of each concrete column, in `from_db`'s order; or `_CONSTRUCTOR`.
_loads: dict[type, tuple[str, ...] | object] = {}


def _load_plan(model: type[models.Model]):
    if (
        model.__init__ not in (models.Model.__init__, Timestamped.__init__)  # rows: no keywords
        or model.from_db.__func__ is not models.Model.from_db.__func__
    ):
        return _CONSTRUCTOR
    attnames = []
    for field in model._meta.concrete_fields:
        descriptor = inspect.getattr_static(model, field.attname, None)
        if hasattr(type(descriptor), "__set__") and not isinstance(
            descriptor, ForeignKeyDeferredAttribute
        ):
            return _CONSTRUCTOR  # a column whose setting does more than store it
        attnames.append(field.attname)
    return tuple(attnames)


# Per model and relation paths: the statement's head and tail (every concrete column of each
# model, in the order `from_db` takes them) and each model's part of a row. Made with the first
# connection that reads them: every database alias of the project is PostgreSQL.
_reads: dict[tuple, tuple[str, str, list]] = {}


class _Part:
    """One model's columns in a row: where they are, their converters (the columns whose values
    the database adapter does not give as Python wants them: a JSON field), the part it hangs
    from and how the two are cached on each other."""

    def __init__(self, model, start: int, stop: int, converters: list, parent=None, link=None):
        self.model, self.start, self.stop, self.converters = model, start, stop, converters
        self.parent = parent
        self.pk_index = [f.attname for f in model._meta.concrete_fields].index(
            model._meta.pk.attname
        )
        if link is not None:  # as Django's RelatedPopulator sets them
            field = link if link.concrete else link.field
            if link.concrete:
                self.local_setter = field.set_cached_value
                self.remote_setter = (
                    field.remote_field.set_cached_value if field.unique else _nothing
                )
            else:
                self.local_setter = field.remote_field.set_cached_value
                self.remote_setter = field.set_cached_value


def _nothing(*_):
    return None


def _read_plan(model: type[models.Model], related: tuple[str, ...], connection):
    quote = connection.ops.quote_name
    columns, parts, aliases = [], [], {(): ("m", 0)}

    def add(part_model, table_alias, parent=None, link=None):
        converters = []
        fields = part_model._meta.concrete_fields
        for index, field in enumerate(fields):
            expression = field.get_col(part_model._meta.db_table)
            functions = connection.ops.get_db_converters(expression) + field.get_db_converters(
                connection
            )
            if functions:
                converters.append((index, expression, functions))
        start = len(columns)
        columns.extend(f"{table_alias}.{quote(field.column)}" for field in fields)
        parts.append(_Part(part_model, start, len(columns), converters, parent, link))

    add(model, "m")
    joins = []
    for path in related:
        steps = tuple(path.split("__"))
        for depth in range(1, len(steps) + 1):
            key = steps[:depth]
            if key in aliases:
                continue
            parent_alias, parent_index = aliases[key[:-1]]
            parent_model = parts[parent_index].model
            link = parent_model._meta.get_field(key[-1])
            target = link.related_model
            table_alias = f"r{len(aliases)}"
            if link.concrete:  # a foreign key or one-to-one of the parent's
                on = (
                    f"{table_alias}.{quote(link.target_field.column)} = "
                    f"{parent_alias}.{quote(link.column)}"
                )
            else:  # a reverse one-to-one: the target's own field points at the parent
                on = (
                    f"{table_alias}.{quote(link.field.column)} = "
                    f"{parent_alias}.{quote(link.field.target_field.column)}"
                )
            joins.append(f" LEFT JOIN {quote(target._meta.db_table)} AS {table_alias} ON {on}")
            aliases[key] = (table_alias, len(parts))
            add(target, table_alias, parent_index, link)
    table = quote(model._meta.db_table)
    select = f"SELECT {', '.join(columns)} FROM "  # noqa: S608 - names from the models
    if not joins:
        return f"{select}{table} AS m WHERE ", "", parts
    subquery = f"{select}(SELECT * FROM {table} WHERE "  # noqa: S608 - names from the models
    return subquery, ") AS m" + "".join(joins), parts


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
