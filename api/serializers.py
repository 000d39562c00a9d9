"""Serializer building blocks shared by every app's API: strict input, ISO codes, timestamps."""

import copy
import re
from datetime import date

import pycountry
from django.utils.functional import cached_property
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.utils.serializer_helpers import BindingDict
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from api.names import api_data
from core import metadata
from core.exceptions import ValidationFailed
from core.money import MAX_AMOUNT
from core.text import CONTROL_CHARACTER_MESSAGE, FORBIDDEN_CHARACTERS
from core.timestamps import iso_millis

# Fields bound to a child field of theirs when they are made (a list or dict of fields, a
# serializer with many=True): copied whole, so each copy has a child of its own. A nested
# serializer is not one of them: it builds its fields for each instance, from its class.
_COMPOSITE_FIELDS = (serializers.ListSerializer, serializers.ListField, serializers.DictField)


# The base of every serializer of the API (tests/api/test_serializers.py holds to it). No
# docstring: drf-spectacular would show it as the description of every schema without one.
#
# DRF deep-copies a serializer's declared fields for each instance, so that an instance may change
# its own fields; no serializer of ours does, and the deep copy (each field built again from its
# arguments) was the largest cost of parsing a transfer (bench/README.md). A field is copied one
# level deep instead: `bind()` then sets its name, parent and source on the copy, and the declared
# field, shared by every request, is never changed. A field that holds a child field (a list or
# dict of fields, a serializer with many=True) is still deep-copied, and so is a nested
# serializer whose fields were built already (they would be shared).
#
# And bound once: `fields` copies, per class, fields bound already (their name, label, source and
# source path set by `bind()` once, with no parent) and only sets each copy's parent, the one
# thing of a binding that is the instance's (six serializers a transfer: bench/README.md).
class Serializer(serializers.Serializer):
    def get_fields(self):
        return {
            name: (
                copy.deepcopy(field)
                if isinstance(field, _COMPOSITE_FIELDS) or "fields" in field.__dict__
                else _copy(field)
            )
            for name, field in self._declared_fields.items()
        }

    @cached_property
    def fields(self):
        cls = type(self)
        if cls.get_fields is not Serializer.get_fields:
            return super().fields  # fields of its own making: DRF's binding
        plan = _bound.get(cls)
        if plan is None:
            plan = _bound[cls] = _bound_plan(cls._declared_fields)
        fields = _Fields(self)
        bound = fields.fields
        for name, field, template in plan:
            if template is None:
                fields[name] = copy.deepcopy(field)  # bound by the dict, as DRF does
            else:
                new = bound[name] = object.__new__(type(template))
                new.__dict__.update(template.__dict__)
                new.parent = self
        return fields


class _Fields(BindingDict):
    """DRF's `BindingDict` whose views are its dict's: the generic `Mapping.values()` looks
    every field up again by its name, and a serializer walks its fields' values for each
    instance it reads or writes (a tenth of parsing and rendering a transfer)."""

    def values(self):
        return self.fields.values()

    def items(self):
        return self.fields.items()

    def keys(self):
        return self.fields.keys()

    def __contains__(self, key):
        return key in self.fields


# Per serializer class, made at its first instance (a class's declared fields are set when its
# module is imported): (name, declared field, its bound copy, or None when it is deep-copied per
# instance: a composite field or a nested serializer whose own fields were built already).
_bound: dict[type, list[tuple[str, serializers.Field, serializers.Field | None]]] = {}


def _bound_plan(declared: dict) -> list[tuple[str, serializers.Field, serializers.Field | None]]:
    plan = []
    for name, field in declared.items():
        template = None
        if not (isinstance(field, _COMPOSITE_FIELDS) or "fields" in field.__dict__):
            template = _copy(field)
            template.bind(field_name=name, parent=None)
        plan.append((name, field, template))
    return plan


def _copy(field: serializers.Field) -> serializers.Field:
    """`copy.copy(field)`, four times faster: a DRF field has no `__copy__` and no slots, so
    its state is its `__dict__`, which the generic protocol copies through `__reduce_ex__`
    (tests/api/test_serializers.py holds every field of the project to that)."""
    new = object.__new__(type(field))
    new.__dict__.update(field.__dict__)
    return new


class StrictSerializer(Serializer):
    """Rejects fields it does not know (a misspelt field is an error, not silently ignored)."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: "Unknown field." for name in unknown})
        return super().to_internal_value(data)


# What no text field of the API may hold: every one is single-line (`core.text`).


def check_text(field: serializers.Field, data) -> str:
    """`data` if it is a string without forbidden characters; the field's error otherwise."""
    if not isinstance(data, str):
        field.fail("invalid")
    if FORBIDDEN_CHARACTERS.search(data):
        field.fail("control_character")
    return data


class _SingleLineText:
    """The rule of every text field of the API: a string, and only a string (DRF's CharField
    would accept 276 or true and stringify them), without FORBIDDEN_CHARACTERS, checked before
    trimming ("840\n" is an error, not "840"). DRF's own check for lone surrogates is dropped:
    it walked the string again in Python (a tenth of validating a transfer-batch item), after
    this rule, and the JSON parser before it, had refused them (tests/api/test_hostile_input.py).
    """

    default_error_messages = {"control_character": CONTROL_CHARACTER_MESSAGE}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.validators = [
            v for v in self.validators if not isinstance(v, ProhibitSurrogateCharactersValidator)
        ]

    def to_internal_value(self, data):
        return super().to_internal_value(check_text(self, data))


class StrictCharField(_SingleLineText, serializers.CharField):
    """A single-line string (`_SingleLineText`)."""


class StrictEmailField(_SingleLineText, serializers.EmailField):
    """An e-mail address under the rules of every text field (`_SingleLineText`)."""


class StrictDateField(serializers.DateField):
    """A date as an ISO 8601 string only ("1990-05-17"), the whole string: Django's parser would
    also take a trailing newline."""

    def to_internal_value(self, data):
        if not isinstance(data, str) or FORBIDDEN_CHARACTERS.search(data):
            self.fail("invalid", format="YYYY-MM-DD")
        return super().to_internal_value(data)


DAY = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)


def query_date(request, name: str) -> date:
    """The required date of the query parameter `name` (YYYY-MM-DD, the whole string): 400
    `validation_error` when it is missing or anything else."""
    value = request.query_params.get(name)
    if value is None:
        raise ValidationFailed(details={name: "Required: a date, YYYY-MM-DD."})
    try:
        if not DAY.fullmatch(value):
            raise ValueError
        return date.fromisoformat(value)
    except ValueError:
        raise ValidationFailed(details={name: "Must be a date, YYYY-MM-DD."}) from None


class StrictDateTimeField(serializers.DateTimeField):
    """An ISO 8601 date-time string only, the whole string (see StrictDateField)."""

    def to_internal_value(self, data):
        if not isinstance(data, str) or FORBIDDEN_CHARACTERS.search(data):
            self.fail("invalid", format="YYYY-MM-DDThh:mm:ss[.uuu]Z")
        return super().to_internal_value(data)


COUNTRY_NUMERIC_CODES = sorted(country.numeric for country in pycountry.countries)


@extend_schema_field(
    {
        "type": "string",
        "enum": COUNTRY_NUMERIC_CODES,
        "description": 'ISO 3166-1 numeric country code, three digits, e.g. "276".',
    }
)
class CountryNumericField(StrictCharField):
    """An ISO 3166-1 numeric code given as a string of three digits, e.g. "276" (Germany)."""

    default_error_messages = {
        "invalid": (
            'Must be an ISO 3166-1 numeric country code as a string of three digits, e.g. "276".'
        ),
        "unknown": "{value} is not an ISO 3166-1 numeric country code.",
    }

    def __init__(self, **kwargs):
        kwargs.setdefault("min_length", 3)
        kwargs.setdefault("max_length", 3)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if len(value) != 3 or not value.isdigit():
            self.fail("invalid")
        if pycountry.countries.get(numeric=value) is None:
            self.fail("unknown", value=value)
        return value


CURRENCY_CODES = sorted(currency.alpha_3 for currency in pycountry.currencies)


@extend_schema_field(
    {"type": "string", "enum": CURRENCY_CODES, "description": "ISO 4217 alpha-3, e.g. EUR."}
)
class CurrencyField(StrictCharField):
    default_error_messages = {
        "invalid": 'Must be an ISO 4217 alpha-3 currency code as a string, e.g. "EUR".',
        "unknown": "{value} is not an ISO 4217 currency code.",
    }

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if len(value) != 3 or not value.isascii() or not value.isupper():
            self.fail("invalid")
        if pycountry.currencies.get(alpha_3=value) is None:
            self.fail("unknown", value=value)
        return value


class WholeNumberField(serializers.IntegerField):
    """A JSON integer only: never a string, a float or a boolean (DRF's IntegerField would take
    "12", 12.0 and true)."""

    default_error_messages = {"invalid": "Must be an integer."}

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class AmountField(WholeNumberField):
    """A positive integer of minor units (1050 EUR cents = 10.50 EUR)."""

    default_error_messages = {"invalid": "Must be an integer number of minor units, e.g. 1050."}

    def __init__(self, **kwargs):
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", MAX_AMOUNT)
        super().__init__(**kwargs)


class StrictBooleanField(serializers.BooleanField):
    """A JSON `true` or `false` only: DRF would also take "yes", "on", 1 and "0"."""

    default_error_messages = {"invalid": "Must be true or false."}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class TimestampField(serializers.DateTimeField):
    """ISO 8601 UTC with milliseconds and `Z`, the one time format of the API."""

    def to_representation(self, value):
        return iso_millis(value) if value is not None else None


class StoredDataField(serializers.JSONField):
    """JSON the domain stores in its names (a decline's details, an alert's evidence), shown
    in the API's (`api.names.api_data`; `stored`: as read back from the database)."""

    def __init__(self, *, stored: bool = True, **kwargs):
        self.stored = stored
        super().__init__(**kwargs)

    def to_representation(self, value):
        return api_data(value, stored=self.stored)


# The fields of a dict the domain stores in its names (a merchant snapshot, a batch's result),
# read by their API names (`api.names.api_data`): a dict stored before the domain spoke its own
# names, already in the API's, reads the same. (A comment, not a docstring: the schema would
# take a docstring as the description of every serializer made from this one.)
class StoredDataSerializer(Serializer):
    def to_representation(self, instance):
        return super().to_representation(api_data(instance, stored=False))


class MetaSerializer(Serializer):
    tranId = serializers.CharField(
        help_text="Unique id of this request; also the X-Request-Id header."
    )  # noqa: N815
    timestamp = serializers.CharField(help_text="ISO 8601 UTC time of the request, milliseconds.")


_METADATA_SCHEMA = {
    "type": "object",
    "maxProperties": metadata.MAX_KEYS,
    "description": (
        f"Your own key-value pairs (docs/metadata.md): at most {metadata.MAX_KEYS} keys of 1 to "
        f"{metadata.MAX_KEY_LENGTH} characters, string values of at most "
        f"{metadata.MAX_VALUE_LENGTH} characters. Stored and returned as sent, never read by TX."
    ),
}


@extend_schema_field(
    {
        **_METADATA_SCHEMA,
        "additionalProperties": {"type": "string", "maxLength": metadata.MAX_VALUE_LENGTH},
    }
)
class MetadataField(serializers.Field):
    """A resource's client metadata, in and out (the rule is `core.metadata`'s). As input:
    `patch=False` (create) the whole object to store; `patch=True` (PATCH) the changes to merge
    into the stored object, a key set to null removing it (see MetadataPatchField)."""

    patch = False

    def to_internal_value(self, data):
        errors = metadata.metadata_errors(data, patch=self.patch)
        if errors:
            raise serializers.ValidationError(errors)
        return dict(data)

    def to_representation(self, value):
        return value


@extend_schema_field(
    {
        **_METADATA_SCHEMA,
        "additionalProperties": {
            "type": "string",
            "maxLength": metadata.MAX_VALUE_LENGTH,
            "nullable": True,
        },
        "description": "Merged into the stored metadata: a key with a string sets it, a key "
        "with null removes it, keys not named stay. At most "
        f"{metadata.MAX_KEYS} keys after the merge (docs/metadata.md).",
    }
)
class MetadataPatchField(MetadataField):
    patch = True
