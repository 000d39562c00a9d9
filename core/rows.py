"""A new model instance as the JSON object of its column values: how a row travels to a
PostgreSQL function in one parameter (`jsonb_populate_record`; accounts/sql/posting.sql).

Values are those `save()` would write: defaults already set on the instance, foreign keys as
their ids, timestamps at full precision in ISO 8601 (PostgreSQL reads them back exactly).
"""

import datetime
import uuid

from django.db import models


def as_row(obj: models.Model) -> dict:
    """`obj`'s columns and their values, for an INSERT of it."""
    return {
        field.column: _json_value(field.pre_save(obj, add=True))
        for field in obj._meta.concrete_fields
        if not field.generated
    }


def _json_value(value):
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    return value
