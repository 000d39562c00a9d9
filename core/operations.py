"""One way into the domain: every write, whoever asks for it, runs as an operation.

API views (`api.views.TXView`), the back office's staff actions and forms (`backoffice.actions`),
management commands (`core.management.base.TXCommand`) and periodic jobs (`jobs.tasks`) all
enter the domain here, so a write guarantees the same things whichever door it came through:

- one durable transaction: the service's writes commit together or not at all (a service called
  inside an already open transaction is a bug of its caller, and `durable=True` says so);
- the current actor (`core.actors`): every event the service emits names who asked;
- what a refusal keeps. A service that is refused (it raises a `TXError`) has all its writes
  undone, but some facts must outlive the refusal: a wrong PIN is counted, a failed PAN lookup
  counts against card-number guessing, a monitoring alert about a refused payment is raised.
  The service says so with `keep_if_refused(write)` before it raises; the operation runs those
  writes after undoing the service's own, once, and commits them with whatever commits the
  refusal: with the stored answer of an API request (the caller runs `Operation.keep` in the
  transaction that stores it), otherwise in a transaction of their own right after the
  rollback. A kept write may return the error to answer instead of the one raised (the PIN
  count answers how many tries are left once the try is counted);
- an `Outcome`: what the service returned, whether it changed anything, and the value it
  changed from (`Outcome.changed`, `Outcome.previous`), so no caller re-reads or re-locks rows
  to tell "done" from "already so".

A service that commits in batches of its own (expiry jobs, key rotation) cannot run inside one
transaction; `run_batches` gives it the actor and checks that no transaction is open.
"""

import contextvars
import functools
import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from django.db import transaction

from core.actors import Actor, acting_as
from core.exceptions import TXError

T = TypeVar("T")


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """What a service did: `value` (the object it returns), `changed` (False when the object
    already was as asked: nothing written, no event), `previous` (the value it changed from,
    e.g. the old status, when the service says)."""

    value: T
    changed: bool = True
    previous: Any = None


def unchanged(value: T) -> Outcome[T]:
    return Outcome(value, changed=False)


def changed(value: T, previous: Any = None) -> Outcome[T]:
    return Outcome(value, changed=True, previous=previous)


KeptWrite = Callable[[], TXError | None]


@dataclass
class Operation:
    actor: Actor
    kept: list[KeptWrite] = field(default_factory=list)
    # Kept writes that parts (`part()`) already ran inside the operation: undone with it if the
    # whole operation is refused, so run again then.
    kept_by_parts: list[KeptWrite] = field(default_factory=list)

    def keep(self, error: TXError) -> TXError:
        """Run what this operation's refusal `error` keeps, in the caller's transaction (the
        one that commits the refusal's answer: `operation(answered=...)`); the error to answer:
        `error` or a kept write's."""
        by_parts, kept, self.kept_by_parts, self.kept = self.kept_by_parts, self.kept, [], []
        for write in by_parts:
            write()  # a part's refusal was answered already: only its write is redone
        return _run_kept(kept, error)


def _run_kept(writes: list[KeptWrite], error: TXError) -> TXError:
    """Run the kept writes of a refusal, in order; the error to answer: the last one a write
    returned in its place, else `error`."""
    answer = error
    for write in writes:
        replacement = write()
        if replacement is not None:
            answer = replacement
    return answer


_current: contextvars.ContextVar[Operation | None] = contextvars.ContextVar(
    "tx_operation", default=None
)


@contextmanager
def part() -> Iterator[None]:
    """A part of the running operation that may be refused on its own (an item of an
    independent transfer batch): in a savepoint, so a refusal undoes the part's writes only and
    runs what it keeps (`keep_if_refused`) at once; the error (or a kept write's answer) goes on
    to the caller, which decides what the refusal means for the rest. Kept writes that ran here
    run again if the whole operation is refused after all (its rollback undid them)."""
    operation = _current.get()
    if operation is None:
        raise RuntimeError("part() runs inside an operation.")
    outer, operation.kept = operation.kept, []
    inner = len(operation.kept_by_parts)
    try:
        with transaction.atomic():
            yield
    except TXError as error:
        writes, operation.kept = operation.kept, outer
        for write in operation.kept_by_parts[inner:]:
            write()  # a refused inner part's kept write, undone by this part's rollback
        answer = _run_kept(writes, error)
        operation.kept_by_parts.extend(writes)
        if answer is error:
            raise
        raise answer from None
    except BaseException:
        operation.kept = outer + operation.kept  # not a refusal: its keeps stay the operation's
        raise
    operation.kept = outer + operation.kept


def keep_if_refused(write: KeptWrite) -> None:
    """Ask the running operation to run `write` if this operation is refused (after the
    service's writes are undone). Outside an operation there is nothing to undo them: `write`
    is not needed and is dropped, which is why every entry point runs an operation."""
    operation = _current.get()
    if operation is not None:
        operation.kept.append(write)


@contextmanager
def operation(
    actor: Actor, *, answered: Callable[[TXError], bool] | None = None
) -> Iterator[Operation]:
    """The durable transaction of one operation, run as `actor`. A `TXError` leaving the block
    rolls the transaction back; the writes to keep then commit in a transaction of their own
    and the error (or its replacement) goes on to the caller. When `answered(error)`, the
    caller commits an answer to the refusal (an API request's stored answer): the error goes
    on at once and the caller runs `op.keep(error)` in the transaction that commits it, so the
    kept writes and the answer commit together or not at all."""
    op = Operation(actor)
    token = _current.set(op)
    try:
        with acting_as(actor):
            try:
                with transaction.atomic(durable=True):
                    yield op
            except TXError as error:
                if (not op.kept and not op.kept_by_parts) or (answered and answered(error)):
                    raise
                with transaction.atomic(durable=True):
                    answer = op.keep(error)
                if answer is error:
                    raise
                raise answer from None
    finally:
        _current.reset(token)


def run(
    service: Callable[..., T],
    /,
    *,
    actor: Actor,
    then: Callable[[Outcome], None] | None = None,
    **arguments,
) -> Outcome:
    """Run one service as one operation: `service(**arguments)` in a durable transaction as
    `actor` (passed on as `actor=` to a service that takes one, to stamp its rows). Returns its
    `Outcome` (a service that returns a plain value changed something). `then(outcome)` runs in
    the same transaction, after the service: what the entry point records of the change (the
    admin's LogEntry) commits with it or not at all."""
    if _takes_actor(service):
        arguments["actor"] = actor
    with operation(actor):
        result = service(**arguments)
        outcome = result if isinstance(result, Outcome) else Outcome(result)
        if then is not None:
            then(outcome)
    return outcome


@functools.cache
def _takes_actor(service: Callable) -> bool:
    return "actor" in inspect.signature(service).parameters


def run_batches(service: Callable[..., T], /, *, actor: Actor, **arguments) -> T:
    """Run a service that commits its own batches (each batch its own durable transaction)
    as `actor`. No transaction may be open: its batches must commit as they go."""
    # Django's own check of that (RuntimeError inside another atomic block; a test case's
    # transaction is allowed): an empty durable block sends nothing to the database.
    with transaction.atomic(durable=True):
        pass
    with acting_as(actor):
        return service(**arguments)
