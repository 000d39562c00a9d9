"""PostgreSQL array parameters as literals: `'{"a","b"}'`, cast in the statement (`%s::text[]`).

psycopg adapts a Python list in pure Python: it works out a dumper for the list and for its
elements on every call (`ListDumper`), about 10 us a list, and a transfer's statements pass
nine lists. A literal is one string, which psycopg passes as it is; PostgreSQL reads it with the
cast. Every element is quoted, and a backslash or a double quote inside one escaped, so any
text arrives as it was (tests/core/test_pg_array.py).
"""

from collections.abc import Iterable


def literal(values: Iterable[str | int]) -> str:
    """The array literal of `values`: strings (any text) or integers, never None."""
    parts = []
    for value in values:
        if isinstance(value, str):
            parts.append('"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"')
        elif isinstance(value, int) and not isinstance(value, bool):
            parts.append(f"{value:d}")  # an IntEnum too: its number
        else:
            raise TypeError(f"An array literal takes strings or integers, not {value!r}.")
    return "{" + ",".join(parts) + "}"
