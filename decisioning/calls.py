"""Program calls in flight, bounded per institution in each app process (issue 46, H4;
docs/decisioning.md, "Calls in flight").

**Why.** A call of a program's endpoint holds the request thread that makes it for up to the
endpoint's `timeout_ms` (3 s at most). gunicorn's gthread workers queue the requests they
accept behind busy threads, so one institution whose program answers slowly, flooded with
authorizations or self-tests, would hold every thread of every worker, and every other
institution's requests would wait behind it (review C: another bank's `GET /customers` waited
8.6 s). So a process lets at most DECISIONING_CALLS_PER_INSTITUTION calls of one institution
run at once (default: half its threads, at least one); its other threads stay free of that
institution's calls.

**Why per process, in memory.** The resource protected is the process's own threads. A count
over the deployment (advisory locks, a lease table) would cost a database round trip per call,
would still let one worker's threads all be taken (the whole count reached in one process), and
session advisory locks do not work behind DATABASE_POOLER=transaction. Over the deployment an
institution has at most workers x app nodes x the setting calls in flight.

**How.** A count per institution id under one lock, never waited on: `take` takes a slot or
says the bound is reached. A slot belongs to the `scope` it was taken in (a request's), which
gives back whatever its calls did not when it ends, so no path (an exception, a rollback, a
commit that failed, a call that raised) leaves a slot taken:

- an authorization or an increment takes its slot in its first transaction
  (`authorizations.services.authorize.program_gate`), before anything is held, and gives it
  back as soon as the call returns (`release`, from the call's `finally`): the count is the
  calls in flight. Past the bound the endpoint's `on_failure` decides at once, the program is
  not called (`program.error` BUSY..., metrics outcome `busy`);
- a self-test holds its slot for its call (`decisioning.services.decisioning_endpoint_test`);
  past the bound it is 429 `rate_limited`.
"""

import contextvars
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings

from decisioning.models import MAX_TIMEOUT_MS

# A slot is held for one call at most (the longest timeout): a 429 says to retry after it.
RETRY_AFTER = -(-MAX_TIMEOUT_MS // 1000)


def busy_error(limit: int) -> str:
    """`program.error` of a record decided without its program: the bound was reached."""
    calls = "call" if limit == 1 else "calls"
    return f"busy: not called, {limit} {calls} of this institution in flight (the limit)"


class _InFlight:
    """The calls in flight per institution id in this process."""

    def __init__(self):
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}

    def take(self, institution_id: str, limit: int) -> bool:
        with self._lock:
            count = self._counts.get(institution_id, 0)
            if count >= limit:
                return False
            self._counts[institution_id] = count + 1
            return True

    def give_back(self, institution_id: str) -> None:
        with self._lock:
            count = self._counts[institution_id] - 1
            if count:
                self._counts[institution_id] = count
            else:
                del self._counts[institution_id]  # no entry left behind per institution

    def count(self, institution_id: str) -> int:
        with self._lock:
            return self._counts.get(institution_id, 0)


_in_flight = _InFlight()
# The slots taken in the current scope: call id -> institution id.
_scope: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar(
    "tx_program_calls", default=None
)


@contextmanager
def scope() -> Iterator[None]:
    """Where slots may be taken (a request that may call a program: its views open it around
    the whole write). Every slot taken inside and not given back yet is given back when it
    ends, however it ends."""
    held: dict[str, str] = {}
    token = _scope.set(held)
    try:
        yield
    finally:
        _scope.reset(token)
        for institution_id in held.values():
            _in_flight.give_back(institution_id)
        held.clear()


def take(*, institution_id: str, call_id: str) -> bool:
    """Take one of the institution's DECISIONING_CALLS_PER_INSTITUTION slots in this process for
    the call `call_id` (the record's id), without waiting; False when they are all taken (then
    nothing is held). RuntimeError outside a `scope` (nothing would give it back)."""
    held = _scope.get()
    if held is None:
        raise RuntimeError(
            "A program call's slot is taken inside decisioning.calls.scope(): the scope gives "
            "it back whatever happens."
        )
    if call_id in held:
        raise RuntimeError(f"The call {call_id} holds its slot already.")
    if not _in_flight.take(institution_id, settings.DECISIONING_CALLS_PER_INSTITUTION):
        return False
    held[call_id] = institution_id
    return True


def release(call_id: str) -> None:
    """Give back the slot the call `call_id` took in the current scope (its call returned);
    nothing when it holds none (given back already, or never taken)."""
    held = _scope.get()
    institution_id = held.pop(call_id, None) if held is not None else None
    if institution_id is not None:
        _in_flight.give_back(institution_id)


def in_flight(institution_id: str) -> int:
    """The institution's calls holding a slot in this process now."""
    return _in_flight.count(institution_id)
