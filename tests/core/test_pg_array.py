"""`core.pg_array.literal`: PostgreSQL reads back exactly the list it was given, whatever text
its strings hold, through the casts the statements use."""

import enum

import pytest
from django.db import connection

from core.pg_array import literal

HOSTILE = [
    "",
    " ",
    " padded ",
    "NULL",
    "null",
    'a"b',
    "a\\b",
    "\\",
    '\\"',
    '"',
    "{",
    "}",
    "{a,b}",
    "a,b",
    "'",
    "'; DROP TABLE accounts_account; --",
    "tab\tnew\nline",
    "é ü 🐝 漢字",
    "acc_01ABCDEFGHJKMNPQRSTVWXYZ01",
]


def read_back(value: str, cast: str) -> list:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT %s::{cast}", [value])
        (found,) = cursor.fetchone()
    return found


@pytest.mark.django_db
@pytest.mark.parametrize("cast", ["text[]", "varchar[]"])
def test_any_text_comes_back_as_it_was(cast):
    assert read_back(literal(HOSTILE), cast) == HOSTILE
    for value in HOSTILE:
        assert read_back(literal([value]), cast) == [value]


@pytest.mark.django_db
def test_integers_come_back_as_they_were():
    values = [0, 1, -1, 10**12, -(10**12), 2**63 - 1, -(2**63)]
    assert read_back(literal(values), "bigint[]") == values


@pytest.mark.django_db
def test_an_empty_list_is_an_empty_array():
    assert literal([]) == "{}"
    assert read_back(literal([]), "text[]") == []
    assert read_back(literal([]), "bigint[]") == []


@pytest.mark.django_db
def test_as_a_bound_parameter_of_any_and_unnest():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT array_agg(v ORDER BY o) FROM unnest(%s::text[]) WITH ORDINALITY AS u(v, o) "
            "WHERE v = ANY(%s::text[])",
            [literal(HOSTILE), literal(['a"b', "{a,b}", "absent"])],
        )
        assert cursor.fetchone() == (['a"b', "{a,b}"],)


def test_enums_give_their_values():
    class Kind(enum.StrEnum):
        CUSTOMER = "customer"

    class Level(enum.IntEnum):
        HIGH = 3

    assert literal([Kind.CUSTOMER, Level.HIGH]) == '{"customer",3}'


@pytest.mark.parametrize("value", [None, True, 1.5, b"bytes", ["nested"]])
def test_anything_but_strings_and_integers_is_refused(value):
    with pytest.raises(TypeError):
        literal(["fine", value])
