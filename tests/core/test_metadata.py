"""The metadata rule (`core.metadata`): limits at their edge and one past, the merge, and the
database's CHECK that the column holds an object."""

import pytest
from django.db import IntegrityError, connection, transaction

from core.exceptions import ValidationFailed
from core.metadata import metadata_check, metadata_errors, metadata_merge
from customers.models import Customer
from tests.factories import InstitutionFactory


def keys(n: int) -> dict:
    return {f"k{i}": "v" for i in range(n)}


@pytest.mark.parametrize(
    "value",
    [
        {},
        keys(50),
        {"k" * 40: "v"},
        {"k": "v" * 500},
        {"k": ""},
        {"émoji 🙂": "Zoë"},
    ],
    ids=["empty", "50 keys", "40-char key", "500-char value", "empty value", "unicode"],
)
def test_valid_metadata_at_the_edges(value):
    assert metadata_errors(value) == []
    assert metadata_check(value) is value


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (keys(51), "At most 50 keys (got 51)."),
        ({"k" * 41: "v"}, f'Key "{"k" * 41}" is longer than 40 characters.'),
        ({"k": "v" * 501}, 'The value of "k" is longer than 500 characters.'),
        ({"": "v"}, "Keys must be non-empty strings."),
        ({"count": 1}, 'The value of "count" must be a string.'),
        ({"vip": True}, 'The value of "vip" must be a string.'),
        ({"nested": {"a": "b"}}, 'The value of "nested" must be a string.'),
        ({"list": ["a"]}, 'The value of "list" must be a string.'),
        ({"gone": None}, 'The value of "gone" must be a string.'),
        ({"line": "a\nb"}, 'The value of "line" must not contain control characters.'),
        ({"a\u202eb": "v"}, 'Key "a\\u202eb" must not contain control characters.'),
        ([], "Must be a JSON object of string keys and string values."),
        ("a=b", "Must be a JSON object of string keys and string values."),
        (None, "Must be a JSON object of string keys and string values."),
    ],
    ids=[
        "51 keys",
        "41-char key",
        "501-char value",
        "empty key",
        "number",
        "boolean",
        "object",
        "list",
        "null on create",
        "line break",
        "bidi control in a key",
        "a list",
        "a string",
        "null",
    ],
)
def test_invalid_metadata_is_refused_naming_the_key(value, message):
    assert metadata_errors(value) == [message]
    with pytest.raises(ValidationFailed) as refused:
        metadata_check(value)
    assert refused.value.details == {"metadata": message}


def test_every_problem_is_named_in_one_message():
    assert metadata_errors({"a": 1, "b": "ok", "c": False}) == [
        'The value of "a" must be a string.',
        'The value of "c" must be a string.',
    ]


def test_a_very_long_key_is_cut_in_the_message():
    [message] = metadata_errors({"k" * 1000: "v"})
    assert message == f'Key "{"k" * 40}..." is longer than 40 characters.'


def test_merge_sets_replaces_keeps_and_removes():
    stored = {"keep": "1", "replace": "old", "drop": "x"}
    merged = metadata_merge(stored, {"replace": "new", "drop": None, "add": "2", "absent": None})
    assert merged == {"keep": "1", "replace": "new", "add": "2"}
    assert stored == {"keep": "1", "replace": "old", "drop": "x"}  # not changed in place


def test_merge_with_an_empty_patch_changes_nothing():
    assert metadata_merge({"a": "1"}, {}) == {"a": "1"}


def test_merge_result_may_hold_50_keys_not_51():
    assert len(metadata_merge(keys(49), {"new": "v"})) == 50
    with pytest.raises(ValidationFailed) as refused:
        metadata_merge(keys(50), {"new": "v"})
    assert refused.value.details == {
        "metadata": "At most 50 keys: this update would leave 51. Remove keys by setting them "
        "to null."
    }


def test_merge_may_remove_and_add_past_50_entries_when_the_result_fits():
    patch = {f"k{i}": None for i in range(10)} | {f"n{i}": "v" for i in range(10)}
    assert len(metadata_merge(keys(50), patch)) == 50


def test_merge_refuses_a_non_string_value_but_takes_null():
    with pytest.raises(ValidationFailed) as refused:
        metadata_merge({}, {"n": 5, "gone": None})
    assert refused.value.details == {
        "metadata": 'The value of "n" must be a string (or null to remove the key).'
    }


@pytest.mark.django_db
@pytest.mark.parametrize("value", ["[]", '"text"', "1", "null"])
def test_the_database_refuses_anything_but_an_object(value):
    customer = Customer.objects.create(
        institution=InstitutionFactory(), first_name="Ada", last_name="L", country_code="826"
    )
    assert Customer.objects.get(pk=customer.pk).metadata == {}
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE customers_customer SET metadata = %s::jsonb WHERE id = %s",  # noqa: S608
            [value, customer.pk],
        )
    assert Customer.objects.get(pk=customer.pk).metadata == {}
