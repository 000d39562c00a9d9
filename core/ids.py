"""Opaque, prefixed, time-ordered identifiers (`cus_01JD...`).

48 bits of milliseconds then 80 random bits, in Crockford base32: ids sort by creation time, so a
primary key doubles as the newest-first ordering of cursor pagination, and the prefix tells a
reader what kind of object an id names. Clients must treat them as opaque strings.
"""

import secrets
import threading
import time

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


# Every pair of characters, by the 10 bits they stand for: an id's 26 characters in 13 lookups.
# Five ids a transfer: encoding one character at a time took 3.2 us an id, this 1.5 (new_id in
# all: 4.0 -> 2.3 us; bench/README.md).
_PAIRS = [high + low for high in _ALPHABET for low in _ALPHABET]


def _base32(value: int, length: int) -> str:
    """The low `5 * length` bits of `value` in `length` characters (an even number), the most
    significant first."""
    return "".join([_PAIRS[(value >> shift) & 1023] for shift in range(5 * length - 10, -1, -10)])


_last = (0, 0)  # (millis, random) of the last id this process made
_lock = threading.Lock()


def new_id(prefix: str) -> str:
    """Monotonic within the process: an id made in the same millisecond as the one before (or
    while the clock stepped back) takes that one's random part plus one, so ids made one after
    the other sort in that order (a transfer batch's items list in request order)."""
    global _last
    millis = time.time_ns() // 1_000_000
    with _lock:
        last_millis, last_random = _last
        if millis <= last_millis and last_random < 2**80 - 1:
            millis, random = last_millis, last_random + 1
        else:
            random = secrets.randbits(80)
        _last = (millis, random)
    return f"{prefix}_{_base32(millis << 80 | random, 26)}"


def ids_in_sql(prefix: str, number: str) -> tuple[str, str]:
    """Ids of `prefix` for rows written by one SQL statement (`INSERT ... SELECT`, a
    reconciliation run's matches): an expression of the row's `number` (an SQL bigint from 1
    up, below 2**50) with one `%s` placeholder, and that placeholder's value. Each id is
    `new_id`'s form: its clock and the high 30 bits of its random part made once here, its last
    50 bits the row's number: unique within the statement, in the rows' order, and made in
    PostgreSQL rather than one Python call a row."""
    head = new_id(prefix)[: len(prefix) + 1 + 16]
    chars = " || ".join(
        f"substr('{_ALPHABET}', ((({number}) >> {shift}) & 31)::int + 1, 1)"
        for shift in range(45, -1, -5)
    )
    return f"%s || {chars}", head


def bound(prefix: str, moment, *, upper: bool) -> str:
    """The smallest (or largest) id of `prefix` that can have been made at `moment` (to the
    millisecond): a date range becomes an id range, served by the primary key's index."""
    # Clamped to what 10 characters can hold: a moment before 1970 is negative, and a negative
    # number renders as "ZZZZZZZZZZ", the largest prefix (fromDate=1969-12-31 found nothing,
    # toDate=1969-12-31 found everything).
    millis = min(max(int(moment.timestamp() * 1000), 0), 32**10 - 1)
    return f"{prefix}_{_base32(millis, 10)}{(_ALPHABET[-1] if upper else _ALPHABET[0]) * 16}"


class IdConverter:
    """`<id:name>` in a route: ASCII letters, digits, `_` and `-` (`new_id` makes a lowercase
    prefix, `_` and 26 base32 characters; `-` keeps fixed segments such as v1's
    `cards/joint-account` routable as they were), at most the 40 characters of every id column.
    Anything else (a NUL, `%2F`, a 600-character segment, non-ASCII) matches no route: the JSON
    404 of an unknown URL, answered before authentication, idempotency or any query, so nothing
    is stored for it (the idempotency record's `path` column would overflow) and PostgreSQL never
    sees it."""

    regex = "[0-9A-Za-z_-]{1,40}"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value
