"""Rows as services write them.

`as_row`: a new model instance as the JSON object of its column values: how a row travels to a
PostgreSQL function in one parameter (`jsonb_populate_record`; accounts/sql/posting.sql).
Values are those `save()` would write: defaults already set on the instance, foreign keys as
their ids, timestamps at full precision in ISO 8601 (PostgreSQL reads them back exactly).

`row_update`: the one way a service changes some fields of a row it holds locked.
"""

import datetime
import uuid

from django.db import models
from django.utils import timezone


def as_row(obj: models.Model) -> dict:
    """`obj`'s columns and their values, for an INSERT of it."""
    return {
        field.column: _json_value(field.pre_save(obj, add=True))
        for field in obj._meta.concrete_fields
        if not field.generated
    }


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
