"""Posting: the only code that changes balances, through one PostgreSQL function.

`post()` sends an operation to `tx_post` (accounts/sql/posting.sql) in one round trip: the
accounts it touches, what each must pass (`debit`: active with the funds; `credit`: not closed;
every account: its balances stay within their bigint columns, else 422 `balance_out_of_range`),
what is added to their `posted` and `pending` balances, the journal when money moves, and the
rows that record the operation (its own row, statement lines, events). The function locks the
accounts in id order, checks them and writes everything, or refuses with the TX error of the
first check that fails, having written nothing. PostgreSQL checks the journal again at commit
(`accounts/sql/ledger_rules.sql`).

Transfers, reversals, adjustments, holds placed, captured, released and expired, card
authorizations, presentments and returns all post here.
"""

import json
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from core import exceptions, pg_array
from core.rows import as_row, new_row
from events.services import announce, lookups

from .models import Entry, Journal

DEBIT = Entry.Direction.DEBIT
CREDIT = Entry.Direction.CREDIT
# Money or a hold leaving a customer account that the card network already paid (an advice, a
# force post): never refused for funds (only a closed account refuses it); what it takes the
# account below zero available becomes its `network_overdraft` (accounts/sql/network_overdraft.sql).
FORCED = "forced"

# The refusals tx_post raises (SQLSTATE TX001, the code as its message).
REFUSALS = {
    error.code: error
    for error in (
        exceptions.NotFound,
        exceptions.CurrencyMismatch,
        exceptions.AccountNotActive,
        exceptions.InsufficientFunds,
        exceptions.BalanceOutOfRange,
    )
}


@dataclass(frozen=True)
class Move:
    """One account's part in a posting: its check, and what is added to its balances."""

    account_id: str
    check: str = ""  # DEBIT, CREDIT, FORCED or "" (none)
    posted: int = 0  # credit +, debit -
    pending: int = 0  # a hold placed +, released or captured -
    needs: int = 0  # a DEBIT: what must be available (0: only the status is checked)


def debit(account_id: str, amount: int, *, needs: int | None = None, check: str = DEBIT) -> Move:
    """`amount` leaves the account: it must be active with `needs` (default `amount`)
    available (unless `check=""`: the other side of a movement, e.g. an internal account)."""
    return Move(account_id, check, posted=-amount, needs=amount if needs is None else needs)


def credit(account_id: str, amount: int, *, check: str = CREDIT) -> Move:
    """`amount` comes into the account: it must not be closed (unless `check=""`)."""
    return Move(account_id, check, posted=amount)


def journal_new(*, institution_id: str, kind: str, description: str = "") -> Journal:
    """A journal not yet written: `post()` writes it with its entries."""
    return new_row(
        Journal,
        institution_id=institution_id,
        kind=kind,
        description=description[:500],
        created_at=timezone.now(),
    )


def post(
    *,
    institution_id: str,
    currency: str,
    moves: list[Move],
    journal: Journal | None = None,
    rows: Iterable = (),
    lines: Iterable = (),
    events: Iterable = (),
) -> None:
    """Check and post `moves` in one round trip, writing `journal` (required when a `posted`
    amount moves; they must sum to zero), the new model instances `rows` (in order: the
    operation's own rows, of a table tx_post has an INSERT for: a new kind of operation adds
    its table there, posting.sql), the statement lines `lines` and the events `events` (then
    announced to their consumers). Raises the TX error of the first refused check."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("post() must run inside the operation's transaction.")
    account_ids = [move.account_id for move in moves]
    if not moves or len(set(account_ids)) != len(account_ids):
        raise ValueError(f"A posting names each of its accounts once: {moves!r}")
    if sum(move.posted for move in moves) != 0 or (
        journal is None and any(move.posted for move in moves)
    ):
        raise ValueError(f"An unbalanced posting, or one without its journal: {moves!r}")
    rows, lines, events = list(rows), list(lines), list(events)
    now = journal.created_at if journal is not None else timezone.now()
    arguments = [
        institution_id,
        currency,
        now,
        pg_array.literal(account_ids),
        pg_array.literal([move.check for move in moves]),
        pg_array.literal([move.needs for move in moves]),
        pg_array.literal([move.posted for move in moves]),
        pg_array.literal([move.pending for move in moves]),
        _json(as_row(journal)) if journal is not None else None,
        _json([[row._meta.db_table, as_row(row)] for row in rows]),
        _json([as_row(line) for line in lines]),
        _json([as_row(event) for event in events]),
    ]
    carried = lookups(events)
    try:
        with connection.cursor() as cursor:
            for move in moves:
                if move.check == FORCED:
                    cursor.execute(_ALLOW_FORCED_SQL, [move.pending, move.posted, move.account_id])
            cursor.execute(
                "SELECT tx_post(%s, %s, %s, %s::text[], %s::text[], %s::bigint[], %s::bigint[], "
                "%s::bigint[], %s::jsonb, %s::jsonb, %s::jsonb, %s::jsonb)" + carried.sql,
                [*arguments, *carried.params],
            )
            found = carried.found(cursor.fetchone()[1:])
    except DatabaseError as error:
        refusal = _refusal(error)
        if refusal is None:
            raise
        raise refusal from None
    _written([journal, *rows, *lines] if journal is not None else [*rows, *lines], events, found)


# Before a FORCED move, its account may go that far below zero available: the allowance raised to
# what the move leaves it short (never lowered here; the trigger lowers it as it is paid back).
# The row is locked by the caller (the card's account, locked with the card); a closed account
# is refused by tx_post right after, rolling this back with the rest.
_ALLOW_FORCED_SQL = """
    UPDATE accounts_account
       SET network_overdraft = GREATEST(network_overdraft,
                                        pending + %s - posted - %s - overdraft_limit)
     WHERE id = %s AND kind = 'customer'
"""


@dataclass(frozen=True)
class Movement:
    """One item of `post_many`: `amount` out of `source_id` (active, with the funds) into
    `destination_id` (not closed), recorded by its journal, its own row, lines and event."""

    source_id: str
    destination_id: str
    amount: int
    currency: str
    journal: Journal
    row: object  # a new model instance; every item's of one model
    lines: list
    event: object  # events.models.Event


def post_many(
    *, institution_id: str, movements: list[Movement], atomic: bool
) -> dict[int, exceptions.TXError]:
    """Check and post `movements` in order in one round trip (`tx_post_many`, the batch form of
    `tx_post`: the same locks, checks and refusals, on running balances). Returns the refused
    items by index. `atomic`: the first refusal ends it with nothing written; otherwise the
    refused items are skipped and the others written, their events announced."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("post_many() must run inside the operation's transaction.")
    if not movements or len({type(m.row) for m in movements}) != 1:
        raise ValueError("post_many() takes one or more movements, their rows of one model")
    now = timezone.now()
    arguments = [
        institution_id,
        now,
        atomic,
        pg_array.literal([m.source_id for m in movements]),
        pg_array.literal([m.destination_id for m in movements]),
        pg_array.literal([m.amount for m in movements]),
        pg_array.literal([m.currency for m in movements]),
        _json([as_row(m.journal) for m in movements]),
        movements[0].row._meta.db_table,
        _json([as_row(m.row) for m in movements]),
        _json([[as_row(line) for line in m.lines] for m in movements]),
        _json([as_row(m.event) for m in movements]),
    ]
    carried = lookups([m.event for m in movements])
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tx_post_many(%s, %s, %s, %s::text[], %s::text[], %s::bigint[], %s::text[], "
            "%s::jsonb, %s, %s::jsonb, %s::jsonb, %s::jsonb)" + carried.sql,
            [*arguments, *carried.params],
        )
        answer, *values = cursor.fetchone()
    # Read for every item's event: a superset of the written ones', which is all it must be.
    found = carried.found(values)
    refused = {
        refusal["index"]: REFUSALS[refusal["code"]](refusal["message"], details=refusal["details"])
        for refusal in (json.loads(answer) if isinstance(answer, str) else answer)
    }
    if atomic and refused:
        return refused
    written = [m for index, m in enumerate(movements) if index not in refused]
    _written(
        [row for m in written for row in (m.journal, m.row, *m.lines)],
        [m.event for m in written],
        found,
    )
    return refused


def _written(rows: list, events: list, found: dict) -> None:
    """The instances the posting function wrote are saved rows now; their events are told to
    their consumers, with what their lookups read."""
    for row in [*rows, *events]:
        row._state.adding = False
    announce(events, found)


def _json(value) -> str:
    return json.dumps(value, separators=(",", ":"))


def _refusal(error: DatabaseError) -> exceptions.TXError | None:
    cause = error.__cause__
    if getattr(cause, "sqlstate", None) != "TX001":
        return None
    diag = cause.diag
    return REFUSALS[diag.message_primary](
        diag.message_hint or None, details=json.loads(diag.message_detail)
    )
