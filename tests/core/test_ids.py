"""`core.ids.new_id`: prefixed, time-ordered and monotonic within the process.

Proven here: an id is the prefix, `_`, then 10 base32 characters of milliseconds and 16 of a
random part; ids made one after the other sort (as strings, after the prefix) in the order they
were made and never repeat, 10,000 of them in a tight loop (many in one millisecond) as well as
ids made by several threads at once; within one millisecond the random part goes up by one; an
id made after the clock stepped back still sorts after the one before, and once the clock is
past the last id's millisecond again the id carries the clock's time.
"""

import threading
import time

import pytest

from core import ids
from core.ids import new_id

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def parts(identifier: str, prefix: str = "tst") -> tuple[int, int]:
    """(milliseconds, random part) of an id."""
    head, _, body = identifier.partition("_")
    assert head == prefix
    assert len(body) == 26 and set(body) <= set(ALPHABET), identifier
    value = 0
    for char in body:
        value = value * 32 + ALPHABET.index(char)
    return value >> 80, value & (2**80 - 1)


def body(identifier: str) -> str:
    return identifier.split("_", 1)[1]


@pytest.fixture(autouse=True)
def restore_last(monkeypatch):
    """The process's last id is put back after each test: a clock moved by a test must not
    reach the ids other tests make."""
    monkeypatch.setattr(ids, "_last", ids._last)


def test_an_id_is_the_prefix_then_milliseconds_then_a_random_part():
    before = time.time_ns() // 1_000_000
    identifier = new_id("tst")
    after = time.time_ns() // 1_000_000
    millis, _ = parts(identifier)
    assert before <= millis <= after


def test_ids_made_in_a_tight_loop_are_strictly_increasing_and_unique():
    made = [new_id("tst") for _ in range(10_000)]
    bodies = [body(identifier) for identifier in made]
    assert all(a < b for a, b in zip(bodies, bodies[1:], strict=False))
    assert len(set(made)) == len(made)
    # Many share a millisecond: the loop really exercised the same-millisecond case.
    millis = [parts(identifier)[0] for identifier in made]
    assert len(set(millis)) < len(made)


def test_within_one_millisecond_the_random_part_goes_up_by_one(monkeypatch):
    now = time.time_ns()
    monkeypatch.setattr(ids.time, "time_ns", lambda: now)
    first, second, third = (parts(new_id("tst")) for _ in range(3))
    assert first[0] == second[0] == third[0] == now // 1_000_000
    assert (second[1], third[1]) == (first[1] + 1, first[1] + 2)


def test_ids_made_by_several_threads_at_once_are_unique():
    count, each = 8, 2_000
    barrier = threading.Barrier(count)
    made: list[list[str]] = [[] for _ in range(count)]

    def make(index):
        barrier.wait()
        made[index].extend(new_id("tst") for _ in range(each))

    threads = [threading.Thread(target=make, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    everything = [identifier for ours in made for identifier in ours]
    assert len(everything) == count * each
    assert len(set(everything)) == len(everything)
    # Each thread's own ids are in the order it made them.
    for ours in made:
        bodies = [body(identifier) for identifier in ours]
        assert all(a < b for a, b in zip(bodies, bodies[1:], strict=False))


@pytest.mark.parametrize("step_back_ms", [1, 5_000, 3_600_000])
def test_an_id_made_after_the_clock_stepped_back_sorts_after_the_one_before(
    monkeypatch, step_back_ms
):
    clock = [time.time_ns()]
    monkeypatch.setattr(ids.time, "time_ns", lambda: clock[0])
    before = new_id("tst")
    clock[0] -= step_back_ms * 1_000_000
    after = [new_id("tst") for _ in range(3)]
    assert body(before) < body(after[0]) < body(after[1]) < body(after[2])
    # The last id's millisecond is kept while the clock is behind it.
    assert {parts(identifier)[0] for identifier in after} == {parts(before)[0]}
    # Once the clock is past it again, the id carries the clock's time.
    clock[0] += (step_back_ms + 2) * 1_000_000
    later = new_id("tst")
    assert parts(later)[0] == clock[0] // 1_000_000
    assert body(after[2]) < body(later)


@pytest.mark.parametrize(
    "millis, random",
    [
        (0, 0),
        (1, 1),
        (1_764_000_000_123, 2**80 - 2),
        (32**10 - 1, 0),
        (32**10 - 1, 2**80 - 2),
        (0x2AAAAAAAAAAA, 0x15555555555555555555),
    ],
)
def test_the_characters_are_exactly_the_milliseconds_and_the_random_part(
    monkeypatch, millis, random
):
    """Every bit lands in its place, at the edges of both parts (and alternating bits)."""
    monkeypatch.setattr(ids, "_last", (-1, 0))  # every millisecond is after the last id's
    monkeypatch.setattr(ids.time, "time_ns", lambda: millis * 1_000_000 + 999_999)
    monkeypatch.setattr(ids.secrets, "randbits", lambda bits: random)
    assert parts(new_id("tst")) == (millis, random)
