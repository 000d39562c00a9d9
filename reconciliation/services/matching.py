"""Matching a statement against the ledger (docs/reconciliation.md, "Matching" and "Breaks").

The statement's lines are matched with the ledger lines of the account it mirrors (the entries
of the institution's `rail_settlement` account of its currency), in three steps, each taking
only what the ones before left:

1. exact keys: the line's end-to-end id, trace number or bank reference names the payment
   order or inbound entry behind a ledger line (`payments.models.RailJournal`), of the same
   direction: one line, one ledger line, whatever the amounts (a difference is a break);
2. the institution's rules, in their order (`services.rules`);
3. expected payments: a line still alone that one of them announced.

What is left is broken: a line alone `bank_only`, a ledger line of the statement's period
alone `ledger_only`, a match whose amounts differ `amount_mismatch`, a line whose key names a
ledger line matched already `duplicate`.

Directions: the statement speaks as the bank does, a credit is money in. The mirrored account
is TX's view of the same money: money in debits it (`rail_settlement` -> account), money out
credits it. So a ledger line's direction "as the bank says it" is the opposite of its entry's.

**At scale** (docs/reconciliation.md, "Scale"): the plan is made in the database, in temporary
tables of the run's transaction (`rp_*`), never with the lines in Python: the statement's
unmatched lines (`rp_line`), the ledger lines the run looks at (`rp_ledger`), the candidate
pairs of a step (`rp_cand`: a join on the key, or on a rule's equal fields, the date window and
the tolerance checked in the same query), the matches (`rp_match`, `rp_mline`, `rp_mentry`),
the breaks (`rp_break`) and what the run resolves (`rp_resolved`). A step is sequential by
nature (a line takes the best ledger line still free, in the lines' order), but a line whose
candidates no other line wants cannot be disturbed by the order: those are decided set-based
(`_decide`); only the **contested** ones (two lines wanting one ledger line: a bank booking the
same money twice) are walked in order, in Python, read by a server-side cursor. The writes are
`INSERT ... SELECT` from the plan; the answer lists the first `LISTED` of each kind.

`reconcile` plans (reads only, but for the temporary tables), then, unless it is a dry run,
writes the plan in the same transaction under the account's reconciliation lock
(`locks.lock_reconciliation`), planning only once it holds it: two runs at once match once.
The unique constraints of `MatchedStatementLine`, `MatchedLedgerLine` and of the open breaks
are the database's word on the same. A dry run's temporary tables are dropped with the
savepoint it plans in: it writes nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from itertools import groupby

from django.db import connection, transaction
from django.utils import timezone

from core.ids import ids_in_sql
from events.services import emit_many, event_for

from ..locks import lock_reconciliation, lock_unmatched_expected
from ..models import (
    BankStatement,
    ExpectedPayment,
    ReconciliationBreak,
    ReconciliationRule,
    ReconciliationRun,
)
from .proof import gap_to_open, gaps_closed

Kind = ReconciliationBreak.Kind
Cardinality = ReconciliationRule.Cardinality
CREDIT, DEBIT = "credit", "debit"
KEYS = ("end_to_end_id", "trace_number", "bank_reference")
# The answer lists at most this many matches, breaks and resolved breaks each, in the run's
# order; its counts say how many there are (the rest: the API's lists, docs "Scale").
LISTED = 1000
CHUNK = 5000  # rows a server-side cursor reads at once; events written at once


@dataclass(frozen=True, slots=True)
class LedgerLine:
    """An entry of the mirrored account, as the answer names it."""

    entry_id: int
    journal_id: str


@dataclass
class PlannedMatch:
    how: str
    line_ids: list[str]
    ledger: list[LedgerLine]
    difference: int
    key: str = ""
    rule_id: str | None = None
    expected_id: str | None = None


@dataclass
class PlannedBreak:
    kind: str
    amount: int
    line_id: str | None = None
    ledger: list[LedgerLine] = field(default_factory=list)
    expected_id: str | None = None


@dataclass
class Plan:
    """What a run does: its counts, and the first `LISTED` of each list in the run's order."""

    statement: BankStatement
    matched_count: int = 0
    breaks_count: int = 0
    resolved_count: int = 0
    matches: list[PlannedMatch] = field(default_factory=list)
    breaks: list[PlannedBreak] = field(default_factory=list)
    resolved: list[ReconciliationBreak] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.matched_count or self.breaks_count or self.resolved_count)


@dataclass
class Result:
    plan: Plan
    dry_run: bool
    run: ReconciliationRun | None = None
    break_rows: list[ReconciliationBreak | None] = field(default_factory=list)


# --- the scratch tables -------------------------------------------------------------------------
SCRATCH = ("rp_line", "rp_ledger", "rp_ref", "rp_keyed", "rp_cand", "rp_contested")
SCRATCH += ("rp_pick", "rp_cpick", "rp_match", "rp_mline", "rp_mentry", "rp_dup", "rp_diff")
SCRATCH += ("rp_break", "rp_resolved", "rp_opened")

# The lines still alone, and the ledger lines still free, at a step.
ALONE = """NOT EXISTS (SELECT FROM rp_mline x WHERE x.line_id = l.id)
       AND NOT EXISTS (SELECT FROM rp_dup x WHERE x.line_id = l.id)"""
FREE = "g.free AND NOT EXISTS (SELECT FROM rp_mentry x WHERE x.entry_id = g.entry_id)"


def _sql(cursor, sql: str, params=None) -> None:
    cursor.execute(sql, params)


def _scratch(cursor) -> None:
    _sql(cursor, f"DROP TABLE IF EXISTS {', '.join(SCRATCH)}")
    _sql(cursor, "DROP SEQUENCE IF EXISTS rp_seq")
    _sql(cursor, "CREATE TEMP SEQUENCE rp_seq")
    _sql(
        cursor,
        """CREATE TEMP TABLE rp_match (no bigint PRIMARY KEY, step int, sort bigint, how text,
                                       key text, rule_id text, expected_id text)
           ON COMMIT DROP""",
    )
    _sql(
        cursor,
        "CREATE TEMP TABLE rp_mline (line_id text PRIMARY KEY, no bigint) ON COMMIT DROP",
    )
    _sql(
        cursor,
        "CREATE TEMP TABLE rp_mentry (entry_id bigint PRIMARY KEY, no bigint) ON COMMIT DROP",
    )
    _sql(
        cursor,
        "CREATE TEMP TABLE rp_dup (line_id text PRIMARY KEY, position int) ON COMMIT DROP",
    )
    _sql(
        cursor,
        """CREATE TEMP TABLE rp_pick (no bigint, line_id text, entry_id bigint, sort bigint)
           ON COMMIT DROP""",
    )
    _sql(
        cursor,
        """CREATE TEMP TABLE rp_cpick (local int, line_id text, entry_id bigint, sort bigint,
                                       expected_id text) ON COMMIT DROP""",
    )
    _sql(
        cursor,
        """CREATE TEMP TABLE rp_break (grp int, s1 bigint, s2 bigint, kind text, amount bigint,
                                       line_id text, entry_id bigint, match_no bigint,
                                       expected_id text) ON COMMIT DROP""",
    )
    _sql(
        cursor,
        """CREATE TEMP TABLE rp_resolved (break_id text PRIMARY KEY, resolved_on date)
           ON COMMIT DROP""",
    )


def _drop_scratch(cursor) -> None:
    _sql(cursor, f"DROP TABLE IF EXISTS {', '.join(SCRATCH)}")
    _sql(cursor, "DROP SEQUENCE IF EXISTS rp_seq")


# --- the two sides ------------------------------------------------------------------------------
def _lines(cursor, statement: BankStatement) -> None:
    """The statement's unmatched lines, signed as the bank signs (a credit, money in, above 0)."""
    _sql(
        cursor,
        """CREATE TEMP TABLE rp_line ON COMMIT DROP AS
           SELECT l.id, l.position, l.direction, l.amount,
                  CASE WHEN l.direction = 'credit' THEN l.amount ELSE -l.amount END AS signed,
                  COALESCE(l.value_date, l.booking_date) AS day,
                  l.end_to_end_id AS e2e, l.trace_number AS trace, l.bank_reference AS ref,
                  l.remittance
             FROM reconciliation_bankstatementline l
            WHERE l.statement_id = %s
              AND NOT EXISTS (SELECT FROM reconciliation_matchedstatementline m
                               WHERE m.statement_line_id = l.id)""",
        [statement.pk],
    )
    _sql(cursor, "ALTER TABLE rp_line ADD PRIMARY KEY (id)")
    _sql(cursor, "ANALYZE rp_line")


def _period(cursor, statement: BankStatement) -> tuple[date, date] | None:
    start, end = statement.period_start, statement.period_end
    if start is None or end is None:
        _sql(
            cursor,
            """SELECT min(COALESCE(value_date, booking_date)), max(COALESCE(value_date,
                      booking_date))
                 FROM reconciliation_bankstatementline WHERE statement_id = %s""",
            [statement.pk],
        )
        first, last = cursor.fetchone()
        start, end = start or first, end or last
    if start is None or end is None:
        return None
    return start, end


def _ledger(cursor, statement: BankStatement, days: tuple[date, date] | None) -> None:
    """The ledger lines a run looks at: the mirrored account's entries whose order or inbound
    entry a line's key names, wherever their dates fall, and those whose value instant may
    fall in `days` (a day more each side for the zones; their local date decides after); each
    with its rails' order or inbound entry, its direction as the bank says it, its local value
    date, and whether a match of an earlier run has it (`free`)."""
    # Joins, one a key, not `IN (...) OR IN (...)`: PostgreSQL hashes an OR of IN lists only
    # while the hash fits work_mem, and walks it for every order beyond (a million lines' keys
    # took minutes).
    orders = " UNION ".join(
        f"""SELECT r.journal_id FROM rp_line l
              JOIN payments_paymentorder o ON o.{column} = l.{key}
              JOIN payments_railjournal r ON r.order_id = o.id
             WHERE l.{key} <> '' AND o.institution_id = %(institution)s"""
        for column, key in (("end_to_end_id", "e2e"), ("trace_number", "trace"), ("id", "ref"))
    )
    inbound = " UNION ".join(
        f"""SELECT r.journal_id FROM rp_line l
              JOIN payments_inboundentry i ON i.{column} = l.{key}
              JOIN payments_railjournal r ON r.inbound_entry_id = i.id
             WHERE l.{key} <> '' AND i.institution_id = %(institution)s"""
        for column, key in (("trace_number", "trace"), ("id", "ref"))
    )
    named = f"""
        SELECT e.id FROM accounts_entry e
         WHERE e.account_id = %(account)s
           AND e.journal_id IN ({orders} UNION {inbound})"""
    params = {
        "account": statement.account_id,
        "institution": statement.institution_id,
        "zone": statement.institution.time_zone,
    }
    considered = named
    if days is not None:
        params["low"] = datetime.combine(days[0] - timedelta(days=1), time.min, UTC)
        params["high"] = datetime.combine(days[1] + timedelta(days=2), time.min, UTC)
        # Of the period, the unmatched only: a matched entry is no rule's candidate and no
        # ledger line alone, and a key that names it finds it above (a duplicate). A re-run of
        # a statement matched whole reads what is left, not the period again. An entry is
        # posted when its journal is (`tx_post`) and a value date is never after the posting
        # (a CHECK), so one valued from `low` on was posted from `low` on: the range of the
        # account's index by posting (`entry_account_at_idx`), not its whole history.
        considered += """
        UNION
        SELECT e.id FROM accounts_entry e JOIN accounts_journal j ON j.id = e.journal_id
         WHERE e.account_id = %(account)s AND e.created_at >= %(low)s
           AND COALESCE(j.value_at, j.created_at) >= %(low)s
           AND COALESCE(j.value_at, j.created_at) < %(high)s
           AND NOT EXISTS (SELECT FROM reconciliation_matchedledgerline m
                            WHERE m.entry_id = e.id)"""
    _sql(
        cursor,
        f"""CREATE TEMP TABLE rp_ledger ON COMMIT DROP AS
            SELECT e.id AS entry_id, e.journal_id, e.amount,
                   CASE WHEN e.direction = 'debit' THEN 'credit' ELSE 'debit' END AS direction,
                   CASE WHEN e.direction = 'debit' THEN e.amount ELSE -e.amount END AS signed,
                   (COALESCE(j.value_at, j.created_at) AT TIME ZONE %(zone)s)::date AS day,
                   COALESCE(o.end_to_end_id, '') AS e2e,
                   COALESCE(o.trace_number, i.trace_number, '') AS trace,
                   COALESCE(o.id, i.id, '') AS own,
                   COALESCE(o.file_id, i.file_id, '') AS file,
                   COALESCE(o.remittance_info, '') AS remittance,
                   NOT EXISTS (SELECT FROM reconciliation_matchedledgerline m
                                WHERE m.entry_id = e.id) AS free
              FROM ({considered}) c
              JOIN accounts_entry e ON e.id = c.id
              JOIN accounts_journal j ON j.id = e.journal_id
              LEFT JOIN payments_railjournal r ON r.journal_id = e.journal_id
              LEFT JOIN payments_paymentorder o ON o.id = r.order_id
              LEFT JOIN payments_inboundentry i ON i.id = r.inbound_entry_id""",
        params,
    )
    _sql(cursor, "ALTER TABLE rp_ledger ADD PRIMARY KEY (entry_id)")
    _sql(cursor, "ANALYZE rp_ledger")


# --- deciding a step ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """How a step's candidates (`rp_cand`: line_id, position, entry_id, line_amount,
    entry_amount, pref) are decided. `anchor` is the side walked in order: the lines (by
    position) or the ledger lines (by entry id, a `many_to_one` rule). `one` takes the
    anchor's best candidate still free (by `pref`, then the other side's order); otherwise the
    anchor takes all its candidates still free, when their sum passes `tolerance` (None: no
    amount condition)."""

    anchor: str
    one: bool
    tolerance: int | None = None

    @property
    def other(self) -> str:
        return "entry_id" if self.anchor == "line_id" else "line_id"

    @property
    def sort(self) -> str:
        return "position" if self.anchor == "line_id" else "entry_id"

    @property
    def other_sort(self) -> str:
        return "entry_id" if self.anchor == "line_id" else "position"

    def ok(self, anchor_amount: int, others: int) -> bool:
        return self.tolerance is None or abs(anchor_amount - others) <= self.tolerance

    @property
    def ok_sql(self) -> str:
        if self.tolerance is None:
            return "TRUE"
        own, others = (
            ("line_amount", "entry_amount")
            if self.anchor == "line_id"
            else ("entry_amount", "line_amount")
        )
        return f"abs(max({own}) - sum({others})) <= {int(self.tolerance)}"


def _decide(cursor, step: Step) -> None:
    """Fill `rp_pick` (a row a line and ledger line of a match, its `no` from `rp_seq`) from
    `rp_cand`, as walking the anchors in order would. An anchor none of whose candidates
    another anchor wants is decided by itself (in SQL); the contested ones in order."""
    anchor, other, sort = step.anchor, step.other, step.sort
    _sql(cursor, "ANALYZE rp_cand")
    _sql(cursor, "TRUNCATE rp_pick, rp_cpick")
    _sql(
        cursor,
        f"""CREATE TEMP TABLE rp_contested ON COMMIT DROP AS
            SELECT DISTINCT c.{anchor} AS id FROM rp_cand c
              JOIN (SELECT {other} FROM rp_cand GROUP BY {other} HAVING count(*) > 1) w
                ON w.{other} = c.{other}""",
    )
    uncontested = f"NOT EXISTS (SELECT FROM rp_contested x WHERE x.id = c.{anchor})"
    if step.one:
        _sql(
            cursor,
            f"""INSERT INTO rp_pick (no, line_id, entry_id, sort)
                SELECT nextval('rp_seq'), line_id, entry_id, {sort} FROM (
                    SELECT DISTINCT ON ({anchor}) line_id, entry_id, {sort}
                      FROM rp_cand c WHERE {uncontested}
                     ORDER BY {anchor}, pref, {step.other_sort}) best""",
        )
    else:
        _sql(
            cursor,
            f"""WITH taken AS (
                    SELECT {anchor}, nextval('rp_seq') AS no FROM rp_cand c
                     WHERE {uncontested} GROUP BY {anchor} HAVING {step.ok_sql})
                INSERT INTO rp_pick (no, line_id, entry_id, sort)
                SELECT t.no, c.line_id, c.entry_id, c.{sort}
                  FROM rp_cand c JOIN taken t ON t.{anchor} = c.{anchor}""",
        )
    _walk_contested(cursor, step)
    _sql(cursor, "DROP TABLE rp_contested")


def _walk_contested(cursor, step: Step) -> None:
    """The contested anchors in order, each taking what the ones before left: only their
    candidates are read (a server-side cursor), and only the other side they took is held."""
    anchor, other = step.anchor, step.other
    reader = connection.chunked_cursor()
    reader.execute(
        f"""SELECT c.{anchor}, c.{step.sort}, c.{other}, c.line_amount, c.entry_amount
              FROM rp_cand c JOIN rp_contested x ON x.id = c.{anchor}
             ORDER BY c.{step.sort}, c.pref, c.{step.other_sort}"""
    )
    taken, picks, local = set(), [], 0

    def rows():
        while batch := reader.fetchmany(CHUNK):
            yield from batch

    for (anchor_id, sort), group in groupby(rows(), key=lambda row: (row[0], row[1])):
        free = [row for row in group if row[2] not in taken]
        if not free:
            continue
        if step.one:
            free = free[:1]
        else:
            anchor_amount = free[0][3] if anchor == "line_id" else free[0][4]
            others = sum(row[4] if anchor == "line_id" else row[3] for row in free)
            if not step.ok(anchor_amount, others):
                continue
        local += 1
        for row in free:
            taken.add(row[2])
            line_id, entry_id = (anchor_id, row[2]) if anchor == "line_id" else (row[2], anchor_id)
            picks.append((local, line_id, entry_id, sort, None))
        if len(picks) >= CHUNK:
            _cpicks(cursor, picks)
            picks = []
    reader.close()
    _cpicks(cursor, picks)
    _cpicks_to_picks(cursor)


def _cpicks(cursor, picks: list[tuple]) -> None:
    if picks:
        cursor.executemany(
            "INSERT INTO rp_cpick (local, line_id, entry_id, sort, expected_id) "
            "VALUES (%s, %s, %s, %s, %s)",
            picks,
        )


def _cpicks_to_picks(cursor) -> None:
    _sql(
        cursor,
        """INSERT INTO rp_pick (no, line_id, entry_id, sort)
           SELECT n.no, c.line_id, c.entry_id, c.sort FROM rp_cpick c
             JOIN (SELECT local, nextval('rp_seq') AS no FROM rp_cpick GROUP BY local) n
               ON n.local = c.local""",
    )


def _record(cursor, step_no: int, how: str, *, key_sql="''", rule_id=None, join="") -> None:
    """The step's picks as matches."""
    _sql(
        cursor,
        f"""INSERT INTO rp_match (no, step, sort, how, key, rule_id)
            SELECT DISTINCT ON (p.no) p.no, %s, p.sort, %s, {key_sql}, %s
              FROM rp_pick p {join}""",
        [step_no, how, rule_id],
    )
    _sql(
        cursor,
        """INSERT INTO rp_mline (line_id, no) SELECT DISTINCT line_id, no FROM rp_pick
            WHERE line_id IS NOT NULL""",
    )
    _sql(
        cursor,
        """INSERT INTO rp_mentry (entry_id, no) SELECT DISTINCT entry_id, no FROM rp_pick
            WHERE entry_id IS NOT NULL""",
    )


def _new_cand(cursor, select: str, params=None) -> None:
    _sql(cursor, "DROP TABLE IF EXISTS rp_cand")
    _sql(cursor, f"CREATE TEMP TABLE rp_cand ON COMMIT DROP AS {select}", params)


# --- 1. exact keys ------------------------------------------------------------------------------
def _by_keys(cursor) -> None:
    """A line's first key that names a ledger line of its direction (matched or not) decides:
    the lowest entry still free of those it names, else the line is a duplicate."""
    joins = [
        (1, "g.e2e = l.e2e", "l.e2e"),
        (2, "g.trace = l.trace", "l.trace"),
        (3, "g.own = l.ref", "l.ref"),
    ]
    named = " UNION ALL ".join(
        f"""SELECT l.id AS line_id, l.position, {ord_} AS ord, g.entry_id, g.amount, l.amount
                   AS line_amount, g.free
              FROM rp_line l JOIN rp_ledger g ON {on} AND g.direction = l.direction
             WHERE {value} <> ''"""
        for ord_, on, value in joins
    )
    _new_cand(
        cursor,
        f"""SELECT n.line_id, n.position, n.entry_id, n.line_amount, n.amount AS entry_amount,
                   0 AS pref, n.ord, n.free
              FROM ({named}) n""",
    )
    _sql(
        cursor,
        """CREATE TEMP TABLE rp_keyed ON COMMIT DROP AS
           SELECT DISTINCT ON (line_id) line_id, position, ord FROM rp_cand
            ORDER BY line_id, ord""",
    )
    _sql(
        cursor,
        """DELETE FROM rp_cand c USING rp_keyed k
            WHERE k.line_id = c.line_id AND (c.ord <> k.ord OR NOT c.free)""",
    )
    _decide(cursor, Step("line_id", one=True))
    key_sql = "(ARRAY['end_to_end_id', 'trace_number', 'bank_reference'])[k.ord]"
    _record(cursor, 0, "key", key_sql=key_sql, join="JOIN rp_keyed k ON k.line_id = p.line_id")
    # A key that names only ledger lines matched already: the bank booked the money twice.
    _sql(
        cursor,
        """INSERT INTO rp_dup (line_id, position)
           SELECT k.line_id, k.position FROM rp_keyed k
            WHERE NOT EXISTS (SELECT FROM rp_mline m WHERE m.line_id = k.line_id)""",
    )


# --- 2. the rules -------------------------------------------------------------------------------
SIDES = {
    "end_to_end_id": ("l.e2e", "g.e2e"),
    "trace_number": ("l.trace", "g.trace"),
    "remittance": ("l.remittance", "g.remittance"),
    "bank_reference": ("l.ref", "f.ref"),  # the order's or inbound entry's id, and its file's
}


def _condition_sql(condition: dict) -> str:
    """A condition other than the amount, without case, an empty value never holding: an
    `equals` is an equality of the lowered values (the join the database hashes), a `contains`
    the line's value containing the ledger's."""
    theirs, ours = SIDES[condition["field"]]
    if condition["operator"] == "equals":
        return f"lower({theirs}) = lower({ours}) AND {theirs} <> '' AND {ours} <> ''"
    return f"{theirs} <> '' AND {ours} <> '' AND strpos(lower({theirs}), lower({ours})) > 0"


def _by_rule(cursor, rule: ReconciliationRule, step_no: int) -> None:
    has_amount = any(c["field"] == "amount" for c in rule.conditions)
    others = [c for c in rule.conditions if c["field"] != "amount"]
    where = [
        ALONE,
        FREE,
        "l.day IS NOT NULL",
        f"abs(l.day - g.day) <= {int(rule.date_window_days)}",
    ]
    where += [_condition_sql(c) for c in others]
    one = rule.cardinality == Cardinality.ONE_TO_ONE
    if one and has_amount:
        # Amount-only equality is a join on the amount too.
        where.append(f"abs(l.amount - g.amount) <= {int(rule.amount_tolerance)}")
        if rule.amount_tolerance == 0:
            where.append("l.amount = g.amount")
    refs = ""
    if any(c["field"] == "bank_reference" for c in others):
        _sql(cursor, "DROP TABLE IF EXISTS rp_ref")
        _sql(
            cursor,
            """CREATE TEMP TABLE rp_ref ON COMMIT DROP AS
               SELECT entry_id, own AS ref FROM rp_ledger WHERE own <> ''
               UNION SELECT entry_id, file FROM rp_ledger WHERE file <> ''""",
        )
        _sql(cursor, "ANALYZE rp_ref")
        refs = "JOIN rp_ref f ON f.entry_id = g.entry_id"
    _new_cand(
        cursor,
        f"""SELECT DISTINCT l.id AS line_id, l.position, g.entry_id, l.amount AS line_amount,
                   g.amount AS entry_amount, abs(l.amount - g.amount) AS pref
              FROM rp_line l JOIN rp_ledger g ON g.direction = l.direction {refs}
             WHERE {" AND ".join(where)}""",
    )
    tolerance = int(rule.amount_tolerance) if has_amount else None
    if one:
        step = Step("line_id", one=True)
    elif rule.cardinality == Cardinality.ONE_TO_MANY:
        step = Step("line_id", one=False, tolerance=tolerance)
    else:
        step = Step("entry_id", one=False, tolerance=tolerance)
    _decide(cursor, step)
    _record(cursor, step_no, "rule", rule_id=rule.pk)


# --- 3. expected payments -----------------------------------------------------------------------
def _by_expected(cursor, statement: BankStatement, step_no: int) -> None:
    """Each line still alone, in order, with the oldest unmatched expected payment that
    announces it and no line before took. Only the lines an expected payment announces are
    read; only the expected payments taken are held."""
    reader = connection.chunked_cursor()
    reader.execute(
        f"""SELECT l.id, l.position, e.id
              FROM rp_line l
              JOIN reconciliation_expectedpayment e
                ON e.direction = l.direction AND l.amount BETWEEN e.amount_min AND e.amount_max
             WHERE e.institution_id = %s AND e.currency = %s AND e.status = 'unmatched'
               AND {ALONE}
               AND (e.date_from IS NULL OR l.day >= e.date_from)
               AND (e.date_to IS NULL OR l.day <= e.date_to)
               AND (e.end_to_end_id = '' OR e.end_to_end_id = l.e2e)
               AND (e.trace_number = '' OR e.trace_number = l.trace)
               AND (e.reference = '' OR strpos(lower(l.remittance), lower(e.reference)) > 0
                    OR lower(e.reference) = lower(l.ref))
             ORDER BY l.position, e.id""",
        [statement.institution_id, statement.currency],
    )
    taken, picks = set(), []
    while batch := reader.fetchmany(CHUNK):
        for line_id, position, expected_id in batch:
            if expected_id in taken or (picks and picks[-1][1] == line_id):
                continue
            taken.add(expected_id)
            picks.append((len(picks) + 1, line_id, None, position, expected_id))
    reader.close()
    _sql(cursor, "TRUNCATE rp_cpick")
    _cpicks(cursor, picks)
    _sql(
        cursor,
        """WITH n AS (SELECT local, line_id, sort, expected_id, nextval('rp_seq') AS no
                        FROM rp_cpick),
                m AS (INSERT INTO rp_match (no, step, sort, how, key, expected_id)
                      SELECT no, %s, sort, 'expected', '', expected_id FROM n)
           INSERT INTO rp_mline (line_id, no) SELECT line_id, no FROM n""",
        [step_no],
    )


# --- the breaks ---------------------------------------------------------------------------------
def _breaks(cursor, statement: BankStatement, days: tuple[date, date] | None) -> None:
    # Each match's sides: the difference (what the statement says less what the ledger says;
    # 0 for an expected payment's, broken bank_only until booked), its line when it has one,
    # its ledger line when it has one, the later side's value date.
    _sql(
        cursor,
        """CREATE TEMP TABLE rp_diff ON COMMIT DROP AS
           SELECT m.no, m.step, m.sort, m.how, m.key, m.rule_id, m.expected_id,
                  CASE WHEN m.expected_id IS NOT NULL THEN 0
                       ELSE COALESCE(a.s, 0) - COALESCE(b.s, 0) END AS difference,
                  a.n AS lines, a.line_id, b.entry_id, GREATEST(a.day, b.day) AS day
             FROM rp_match m
             LEFT JOIN (SELECT x.no, sum(l.signed) AS s, count(*) AS n, min(l.id) AS line_id,
                               max(l.day) AS day
                          FROM rp_mline x JOIN rp_line l ON l.id = x.line_id GROUP BY x.no) a
               ON a.no = m.no
             LEFT JOIN (SELECT x.no, sum(g.signed) AS s, min(g.entry_id) AS entry_id,
                               max(g.day) AS day
                          FROM rp_mentry x JOIN rp_ledger g ON g.entry_id = x.entry_id
                         GROUP BY x.no) b
               ON b.no = m.no""",
    )
    _sql(cursor, "ALTER TABLE rp_diff ADD PRIMARY KEY (no)")
    # The answer reads the first matches' sides by their number.
    _sql(cursor, "CREATE INDEX ON rp_mline (no)")
    _sql(cursor, "CREATE INDEX ON rp_mentry (no)")
    # In the order of the answer: the duplicates, the matches' breaks (in their order), the
    # lines alone, the ledger lines alone.
    _sql(
        cursor,
        f"""INSERT INTO rp_break (grp, s1, s2, kind, amount, line_id, entry_id, match_no,
                                  expected_id)
            SELECT 0, d.position, 0, '{Kind.DUPLICATE}', l.signed, l.id, NULL::bigint, NULL::bigint,
                   NULL::text
              FROM rp_dup d JOIN rp_line l ON l.id = d.line_id
            UNION ALL
            SELECT 1, d.step, d.sort, '{Kind.BANK_ONLY}', l.signed, l.id, NULL::bigint,
                   NULL::bigint, d.expected_id
              FROM rp_diff d JOIN rp_line l ON l.id = d.line_id WHERE d.expected_id IS NOT NULL
            UNION ALL
            SELECT 1, d.step, d.sort, '{Kind.AMOUNT_MISMATCH}', d.difference,
                   CASE WHEN d.lines = 1 THEN d.line_id END,
                   CASE WHEN d.lines = 1 THEN NULL::bigint ELSE d.entry_id END, d.no, NULL::text
              FROM rp_diff d WHERE d.expected_id IS NULL AND d.difference <> 0
            UNION ALL
            SELECT 2, l.position, 0, '{Kind.BANK_ONLY}', l.signed, l.id, NULL::bigint, NULL::bigint,
                   NULL::text
              FROM rp_line l WHERE {ALONE}""",
    )
    if days is not None:
        _sql(
            cursor,
            f"""INSERT INTO rp_break (grp, s1, s2, kind, amount, entry_id)
                SELECT 3, g.entry_id, 0, '{Kind.LEDGER_ONLY}', -g.signed, g.entry_id
                  FROM rp_ledger g WHERE {FREE} AND g.day BETWEEN %s AND %s""",
            list(days),
        )
    # A break open already for the same line (or ledger line) and kind is not opened again.
    open_ = "r.state IN ('open', 'assigned') AND r.kind = b.kind"
    _sql(
        cursor,
        f"""DELETE FROM rp_break b
             WHERE (b.line_id IS NOT NULL AND EXISTS (
                        SELECT FROM reconciliation_reconciliationbreak r
                         WHERE {open_} AND r.statement_line_id = b.line_id))
                OR (b.line_id IS NULL AND b.entry_id IS NOT NULL AND EXISTS (
                        SELECT FROM reconciliation_reconciliationbreak r
                         WHERE {open_} AND r.entry_id = b.entry_id
                           AND r.statement_line_id IS NULL))""",
    )
    # The chain (`services.proof`): this statement's opening against the previous closing.
    gap = gap_to_open(statement)
    if gap:
        _sql(
            cursor,
            f"INSERT INTO rp_break (grp, s1, s2, kind, amount) "
            f"VALUES (4, 0, 0, '{Kind.MISSING_STATEMENT}', %s)",
            [gap],
        )
    # A line broken alone before (bank only, ledger only) that this run matches with the
    # other side: its break is resolved by the match, from the later side's value date on.
    _sql(
        cursor,
        f"""INSERT INTO rp_resolved (break_id, resolved_on)
            SELECT r.id, d.day FROM reconciliation_reconciliationbreak r
              JOIN rp_mline x ON x.line_id = r.statement_line_id
              JOIN rp_diff d ON d.no = x.no
             WHERE r.state IN ('open', 'assigned') AND r.kind = '{Kind.BANK_ONLY}'
               AND d.expected_id IS NULL
            UNION
            SELECT r.id, d.day FROM reconciliation_reconciliationbreak r
              JOIN rp_mentry x ON x.entry_id = r.entry_id
              JOIN rp_diff d ON d.no = x.no
             WHERE r.state IN ('open', 'assigned') AND r.kind = '{Kind.LEDGER_ONLY}'""",
    )


# --- planning -----------------------------------------------------------------------------------
def _plan(cursor, statement: BankStatement) -> tuple[Plan, list[ReconciliationBreak]]:
    """Fill the scratch tables with what a run would do now (reads only but for them); the
    plan's counts and first rows, and the gaps this statement closes."""
    rules = list(
        ReconciliationRule.objects.filter(institution_id=statement.institution_id).order_by(
            "position"
        )
    )
    _scratch(cursor)
    _lines(cursor, statement)
    period = _period(cursor, statement)
    days = None
    if period is not None:
        window = max((rule.date_window_days for rule in rules), default=0)
        days = (period[0] - timedelta(days=window), period[1] + timedelta(days=window))
    _ledger(cursor, statement, days)
    _by_keys(cursor)
    for number, rule in enumerate(rules, start=1):
        _by_rule(cursor, rule, number)
    _by_expected(cursor, statement, len(rules) + 1)
    _breaks(cursor, statement, period)
    closed = gaps_closed(statement)
    result = Plan(statement)
    _sql(
        cursor,
        """SELECT (SELECT count(*) FROM rp_match), (SELECT count(*) FROM rp_break),
                  (SELECT count(*) FROM rp_resolved)""",
    )
    result.matched_count, result.breaks_count, resolved = cursor.fetchone()
    result.resolved_count = resolved + len(closed)
    result.matches, by_no = _listed_matches(cursor)
    result.breaks = _listed_breaks(cursor, by_no)
    result.resolved = _listed_resolved(cursor, closed)
    return result, closed


def _ledger_of(cursor, condition: str, params) -> dict:
    """The ledger lines of matches (`no`), in their entries' order."""
    _sql(
        cursor,
        f"""SELECT x.no, g.entry_id, g.journal_id FROM rp_mentry x
              JOIN rp_ledger g ON g.entry_id = x.entry_id WHERE {condition}
             ORDER BY x.no, g.entry_id""",
        params,
    )
    found = {}
    for no, entry_id, journal_id in cursor.fetchall():
        found.setdefault(no, []).append(LedgerLine(entry_id, journal_id))
    return found


def _listed_matches(cursor) -> tuple[list[PlannedMatch], dict]:
    _sql(
        cursor,
        """SELECT no, how, key, rule_id, expected_id, difference FROM rp_diff
            ORDER BY step, sort LIMIT %s""",
        [LISTED],
    )
    rows = cursor.fetchall()
    numbers = [row[0] for row in rows]
    _sql(
        cursor,
        """SELECT x.no, l.id FROM rp_mline x JOIN rp_line l ON l.id = x.line_id
            WHERE x.no = ANY(%s) ORDER BY x.no, l.position""",
        [numbers],
    )
    lines = {}
    for no, line_id in cursor.fetchall():
        lines.setdefault(no, []).append(line_id)
    ledger = _ledger_of(cursor, "x.no = ANY(%s)", [numbers])
    listed, by_no = [], {}
    for no, how, key, rule_id, expected_id, difference in rows:
        by_no[no] = ledger.get(no, [])
        listed.append(
            PlannedMatch(
                how=how,
                line_ids=lines.get(no, []),
                ledger=by_no[no],
                difference=difference,
                key=key or "",
                rule_id=rule_id,
                expected_id=expected_id,
            )
        )
    return listed, by_no


def _listed_breaks(cursor, by_no: dict) -> list[PlannedBreak]:
    _sql(
        cursor,
        """SELECT b.kind, b.amount, b.line_id, b.entry_id, g.journal_id, b.match_no,
                  b.expected_id
             FROM rp_break b LEFT JOIN rp_ledger g ON g.entry_id = b.entry_id
            ORDER BY b.grp, b.s1, b.s2 LIMIT %s""",
        [LISTED],
    )
    rows = cursor.fetchall()
    unknown = [row[5] for row in rows if row[5] is not None and row[5] not in by_no]
    if unknown:
        by_no = {**by_no, **_ledger_of(cursor, "x.no = ANY(%s)", [unknown])}
    listed = []
    for kind, amount, line_id, entry_id, journal_id, match_no, expected_id in rows:
        if match_no is not None:
            ledger = by_no.get(match_no, [])
        else:
            ledger = [LedgerLine(entry_id, journal_id)] if entry_id is not None else []
        listed.append(PlannedBreak(kind, amount, line_id, ledger, expected_id))
    return listed


def _listed_resolved(cursor, closed: list[ReconciliationBreak]) -> list[ReconciliationBreak]:
    _sql(
        cursor, "SELECT break_id, resolved_on FROM rp_resolved ORDER BY break_id LIMIT %s", [LISTED]
    )
    on = dict(cursor.fetchall())
    rows = list(ReconciliationBreak.objects.filter(pk__in=list(on)).order_by("pk"))
    for row in rows:
        row.resolution, row.resolved_on = "matched", on[row.pk]
    return (rows + closed)[:LISTED]


# --- writing ------------------------------------------------------------------------------------
def reconcile(*, statement: BankStatement, dry_run: bool = False) -> Result:
    """Match the statement (module docstring). A dry run only plans; a run that finds nothing
    new writes nothing either (no run, no event): the same statement twice changes nothing."""
    with transaction.atomic(), connection.cursor() as cursor:
        if not dry_run:
            lock_reconciliation(statement.account_id)
            lock_unmatched_expected(statement.institution_id, statement.currency)
        planned, closed = _plan(cursor, statement)
        if dry_run or planned.empty:
            _drop_scratch(cursor)
            return Result(planned, dry_run=dry_run)
        result = _write(cursor, planned, closed)
        _drop_scratch(cursor)
        return result


def _write(cursor, planned: Plan, closed: list[ReconciliationBreak]) -> Result:
    statement = planned.statement
    institution = statement.institution
    now = timezone.now()
    run = ReconciliationRun.objects.create(
        institution=institution,
        statement=statement,
        matched_count=planned.matched_count,
        breaks_opened=planned.breaks_count,
        created_at=now,
    )
    match_id, match_head = ids_in_sql("rmt", "no")
    break_match_id, _ = ids_in_sql("rmt", "b.match_no")
    _sql(
        cursor,
        f"""INSERT INTO reconciliation_reconciliationmatch
                (id, institution_id, run_id, how, key, rule_id, expected_payment_id, difference,
                 created_at)
            SELECT {match_id}, %s, %s, how, key, rule_id, expected_id, difference, %s
              FROM rp_diff ORDER BY step, sort""",
        [match_head, institution.pk, run.pk, now],
    )
    _sql(
        cursor,
        f"""INSERT INTO reconciliation_matchedstatementline (statement_line_id, match_id)
            SELECT line_id, {match_id} FROM rp_mline""",
        [match_head],
    )
    _sql(
        cursor,
        f"""INSERT INTO reconciliation_matchedledgerline (entry_id, match_id)
            SELECT entry_id, {match_id} FROM rp_mentry""",
        [match_head],
    )
    events = []
    _sql(
        cursor,
        """UPDATE reconciliation_expectedpayment SET status = 'matched', matched_at = %s,
                  updated_at = %s
            WHERE id IN (SELECT expected_id FROM rp_diff WHERE expected_id IS NOT NULL)
        RETURNING id, metadata""",
        [now, now],
    )
    for expected_id, metadata in cursor.fetchall():  # at most the unmatched expected payments
        # Its metadata, as every event about it carries (docs/metadata.md).
        metadata = json.loads(metadata) if isinstance(metadata, str) else metadata
        item = ExpectedPayment(id=expected_id, institution=institution, metadata=metadata or {})
        data = {"expected_payment_id": expected_id, "status": "matched", "run_id": run.pk}
        events.append(event_for(item, "expected_payment.matched", data=data))
    break_id, break_head = ids_in_sql("brk", "n")
    _sql(
        cursor,
        f"""CREATE TEMP TABLE rp_opened ON COMMIT DROP AS
            SELECT {break_id} AS id, b.* FROM (
                SELECT row_number() OVER (ORDER BY grp, s1, s2) AS n, * FROM rp_break) b""",
        [break_head],
    )
    _sql(
        cursor,
        f"""INSERT INTO reconciliation_reconciliationbreak
                (id, institution_id, kind, state, amount, currency, statement_id,
                 statement_line_id, entry_id, match_id, expected_payment_id, run_id, resolution,
                 created_at, updated_at)
            SELECT b.id, %s, b.kind, 'open', b.amount, %s, %s, b.line_id, b.entry_id,
                   CASE WHEN b.match_no IS NOT NULL THEN {break_match_id} END,
                   b.expected_id, %s, '', %s, %s
              FROM rp_opened b ORDER BY b.n""",
        [
            institution.pk,
            statement.currency,
            statement.pk,
            match_head,
            run.pk,
            now,
            now,
        ],
    )
    _sql(
        cursor,
        """UPDATE reconciliation_reconciliationbreak r
               SET state = 'resolved', resolution = 'matched', resolved_on = x.resolved_on,
                   resolved_at = %s, updated_at = %s
              FROM rp_resolved x WHERE r.id = x.break_id AND r.state IN ('open', 'assigned')""",
        [now, now],
    )
    if closed:
        for row in closed:
            row.state = ReconciliationBreak.State.RESOLVED
            row.resolved_at = row.updated_at = now
        ReconciliationBreak.objects.bulk_update(
            closed, ["state", "resolution", "resolved_at", "resolved_on", "updated_at"]
        )
    events.insert(
        0,
        event_for(
            run,
            "reconciliation.completed",
            data={
                "reconciliation_id": run.pk,
                "bank_statement_id": statement.pk,
                "matched": run.matched_count,
                "breaks_opened": run.breaks_opened,
                "breaks_resolved": planned.resolved_count,
            },
        ),
    )
    emit_many(events)
    _break_events(cursor, run, institution, closed)
    rows = _break_rows(cursor)
    for row in planned.resolved:
        row.state = ReconciliationBreak.State.RESOLVED
        row.resolved_at = row.updated_at = now
    return Result(planned, dry_run=False, run=run, break_rows=rows)


def _break_events(cursor, run, institution, closed) -> None:
    """One event a break opened or resolved, written a `CHUNK` at a time (read by a
    server-side cursor: a run of a million breaks never holds them all)."""
    reader = connection.chunked_cursor()
    reader.execute(
        """SELECT 'opened', id, kind, amount, NULL FROM (SELECT * FROM rp_opened ORDER BY n) o
           UNION ALL SELECT 'resolved', break_id, NULL, NULL, 'matched' FROM rp_resolved"""
    )
    while batch := reader.fetchmany(CHUNK):
        _emit_breaks(run, institution, batch)
    reader.close()
    _emit_breaks(run, institution, [("resolved", r.pk, None, None, r.resolution) for r in closed])


def _emit_breaks(run, institution, rows) -> None:
    events = []
    for what, break_id, kind, amount, resolution in rows:
        row = ReconciliationBreak(id=break_id, institution=institution)
        if what == "opened":
            data = {"break_id": break_id, "kind": kind, "amount": amount, "run_id": run.pk}
        else:
            data = {"break_id": break_id, "resolution": resolution, "run_id": run.pk}
        events.append(event_for(row, f"reconciliation_break.{what}", data=data))
    if events:
        emit_many(events)


def _break_rows(cursor) -> list[ReconciliationBreak]:
    _sql(cursor, "SELECT id FROM rp_opened ORDER BY n LIMIT %s", [LISTED])
    ids = [row[0] for row in cursor.fetchall()]
    found = ReconciliationBreak.objects.in_bulk(ids)
    return [found[pk] for pk in ids]
