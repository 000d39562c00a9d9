"""Client metadata: the client's own key-value pairs on a resource, as Stripe and Lithic have
them (docs/metadata.md). Customers, accounts, holds, cards, transfers and card authorizations
carry it; TX stores and returns it and never reads it.

The one rule, for every caller (the API's serializer field `api.serializers.MetadataField`
applies it field by field; services apply it again, so the admin, commands and jobs cannot
store what the API would refuse):

- a JSON object of at most MAX_KEYS keys;
- keys: non-empty strings of at most MAX_KEY_LENGTH characters;
- values: strings of at most MAX_VALUE_LENGTH characters (numbers, booleans, objects and lists
  are refused, as Stripe does: the client stores what it reads back, never a converted value);
- keys and values are single-line text (no control characters: `core.text`).

Set whole on create; merged on update (`metadata_merge`): a key with a string sets it, a key
with null removes it, keys not named stay; the result holds the same limits. A refusal is 400
`validation_error` with `details.metadata` naming the keys at fault.

`MetadataField` is the column: JSON (PostgreSQL `jsonb`), `{}` by default, never null, and the
database refuses anything but an object (CHECK `jsonb_typeof(metadata) = 'object'`).
"""

import json

from django.db import models

from core.exceptions import ValidationFailed
from core.text import FORBIDDEN_CHARACTERS

MAX_KEYS = 50
MAX_KEY_LENGTH = 40
MAX_VALUE_LENGTH = 500

NOT_AN_OBJECT = "Must be a JSON object of string keys and string values."


class MetadataField(models.JSONField):
    """A resource's client metadata: a JSON object, `{}` by default, not null, read-only in
    forms (the admin shows it, only the services write it), CHECKed by the database to be an
    object."""

    def __init__(self, **kwargs):
        kwargs.setdefault("default", dict)
        kwargs.setdefault("blank", True)
        kwargs.setdefault("editable", False)
        super().__init__(**kwargs)

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        # What __init__ sets by itself is left out of migrations.
        if kwargs.get("default") is dict:
            del kwargs["default"]
        for key, value in (("blank", True), ("editable", False)):
            if kwargs.get(key) == value:
                del kwargs[key]
        return name, "core.metadata.MetadataField", args, kwargs

    def db_check(self, connection):
        return f"jsonb_typeof({connection.ops.quote_name(self.column)}) = 'object'"


def metadata_errors(value, *, patch: bool = False) -> list[str]:
    """What is wrong with `value` as metadata (an empty list when nothing is). `patch`: `value`
    is an update, where null removes a key (and the limit on keys applies to what is set)."""
    if not isinstance(value, dict):
        return [NOT_AN_OBJECT]
    errors = []
    for key, item in value.items():
        name = _quoted(key)
        if not isinstance(key, str) or not key:
            errors.append("Keys must be non-empty strings.")
        elif len(key) > MAX_KEY_LENGTH:
            errors.append(f"Key {name} is longer than {MAX_KEY_LENGTH} characters.")
        elif FORBIDDEN_CHARACTERS.search(key):
            errors.append(f"Key {name} must not contain control characters.")
        if item is None and patch:
            continue
        if not isinstance(item, str):
            removal = " (or null to remove the key)" if patch else ""
            errors.append(f"The value of {name} must be a string{removal}.")
        elif len(item) > MAX_VALUE_LENGTH:
            errors.append(f"The value of {name} is longer than {MAX_VALUE_LENGTH} characters.")
        elif FORBIDDEN_CHARACTERS.search(item):
            errors.append(f"The value of {name} must not contain control characters.")
    set_keys = sum(1 for item in value.values() if item is not None or not patch)
    if set_keys > MAX_KEYS:
        errors.append(f"At most {MAX_KEYS} keys (got {set_keys}).")
    return errors


def metadata_check(value) -> dict:
    """`value` if it is valid metadata to set whole (on create); 400 `validation_error`
    (`details.metadata`) otherwise."""
    _raise(metadata_errors(value))
    return value


def metadata_merge(stored: dict, patch: dict) -> dict:
    """The metadata `stored` becomes after the update `patch`: a key with a string sets it, a
    key with null removes it (removing a key that is not there changes nothing), keys not named
    stay. A new dict (`stored` is not changed). 400 `validation_error` (`details.metadata`)
    when `patch` is not valid, or when the result would hold more than MAX_KEYS keys."""
    _raise(metadata_errors(patch, patch=True))
    merged = dict(stored)
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    if len(merged) > MAX_KEYS:
        _raise(
            [
                f"At most {MAX_KEYS} keys: this update would leave {len(merged)}. Remove keys "
                "by setting them to null."
            ]
        )
    return merged


def _raise(errors: list[str]) -> None:
    if errors:
        raise ValidationFailed(details={"metadata": " ".join(errors)})


def _quoted(key) -> str:
    """A key as an error message names it: JSON-quoted, long ones cut."""
    text = key if isinstance(key, str) else str(key)
    if len(text) > MAX_KEY_LENGTH + 10:
        text = text[:MAX_KEY_LENGTH] + "..."
    # Escaped where it holds control characters, so an error message never carries them.
    return json.dumps(text, ensure_ascii=bool(FORBIDDEN_CHARACTERS.search(text)))
