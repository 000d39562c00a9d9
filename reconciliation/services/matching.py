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

`reconcile` plans first (reads only), then, unless it is a dry run, writes the plan in one
transaction under the account's reconciliation lock (`locks.lock_reconciliation`), planning
again under it: two runs at once match once. The unique constraints of `MatchedStatementLine`,
`MatchedLedgerLine` and of the open breaks are the database's word on the same.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta

from django.db import transaction
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts.models import Entry
from events.services import emit_many, event_for
from institutions.calendar import local_date
from payments.models import RailJournal

from ..locks import lock_reconciliation, lock_unmatched_expected
from ..models import (
    OPEN_STATES,
    BankStatement,
    BankStatementLine,
    ExpectedPayment,
    MatchedLedgerLine,
    MatchedStatementLine,
    ReconciliationBreak,
    ReconciliationMatch,
    ReconciliationRule,
    ReconciliationRun,
)
from .proof import gap_to_open, gaps_closed

Kind = ReconciliationBreak.Kind
Cardinality = ReconciliationRule.Cardinality
CREDIT, DEBIT = "credit", "debit"
KEYS = ("end_to_end_id", "trace_number", "bank_reference")


@dataclass(frozen=True, slots=True)
class LedgerLine:
    """An entry of the mirrored account, with what the rails know of its money."""

    entry_id: int
    journal_id: str
    amount: int
    direction: str  # as the bank says it: credit, money in (a debit of the mirrored account)
    value_date: date
    end_to_end_id: str = ""
    trace_number: str = ""
    ids: tuple[str, ...] = ()  # the order's or inbound entry's id
    references: tuple[str, ...] = ()  # those and its file's id
    remittance: str = ""

    @property
    def signed(self) -> int:
        return self.amount if self.direction == CREDIT else -self.amount


def signed(line: BankStatementLine) -> int:
    return line.amount if line.direction == CREDIT else -line.amount


@dataclass
class PlannedMatch:
    how: str
    lines: list[BankStatementLine]
    ledger: list[LedgerLine]
    key: str = ""
    rule: ReconciliationRule | None = None
    expected: ExpectedPayment | None = None

    @property
    def difference(self) -> int:
        """What the statement says less what the ledger says (0 for an expected payment's:
        its line is broken `bank_only` until its money is booked)."""
        if self.expected is not None:
            return 0
        return sum(signed(line) for line in self.lines) - sum(item.signed for item in self.ledger)


@dataclass
class PlannedBreak:
    kind: str
    amount: int
    line: BankStatementLine | None = None
    entry: LedgerLine | None = None
    match: PlannedMatch | None = None
    expected: ExpectedPayment | None = None


@dataclass
class Plan:
    statement: BankStatement
    matches: list[PlannedMatch] = field(default_factory=list)
    breaks: list[PlannedBreak] = field(default_factory=list)
    resolved: list[ReconciliationBreak] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.matches or self.breaks or self.resolved)


@dataclass
class Result:
    plan: Plan
    dry_run: bool
    run: ReconciliationRun | None = None
    break_rows: list[ReconciliationBreak | None] = field(default_factory=list)


# --- the ledger side ---------------------------------------------------------------------------
def _period(statement: BankStatement, lines: list[BankStatementLine]) -> tuple[date, date] | None:
    days = [line.value_date or line.booking_date for line in lines]
    days = [day for day in days if day is not None]
    start = statement.period_start or (min(days) if days else None)
    end = statement.period_end or (max(days) if days else None)
    if start is None or end is None:
        return None
    return start, end


def _ledger_lines(statement: BankStatement, entries) -> dict[int, LedgerLine]:
    """The entries (a queryset of the mirrored account's) as ledger lines, with their rails'
    order or inbound entry."""
    rows = list(
        entries.annotate(value_instant=Coalesce(F("journal__value_at"), F("journal__created_at")))
        .values_list("id", "journal_id", "amount", "direction", "value_instant")
        .order_by("id")
    )
    rails = {
        rail.journal_id: rail
        for rail in RailJournal.objects.filter(journal_id__in={row[1] for row in rows})
        .select_related("order", "inbound_entry")
        .only(
            "journal_id",
            "order__id",
            "order__end_to_end_id",
            "order__trace_number",
            "order__file_id",
            "order__remittance_info",
            "inbound_entry__id",
            "inbound_entry__trace_number",
            "inbound_entry__file_id",
        )
    }
    institution = statement.institution
    found = {}
    for entry_id, journal_id, amount, direction, instant in rows:
        rail = rails.get(journal_id)
        extra = {}
        if rail is not None and rail.order is not None:
            order = rail.order
            extra = {
                "end_to_end_id": order.end_to_end_id,
                "trace_number": order.trace_number,
                "ids": (order.id,),
                "references": tuple(filter(None, (order.id, order.file_id))),
                "remittance": order.remittance_info,
            }
        elif rail is not None:
            inbound = rail.inbound_entry
            extra = {
                "trace_number": inbound.trace_number,
                "ids": (inbound.id,),
                "references": (inbound.id, inbound.file_id),
            }
        found[entry_id] = LedgerLine(
            entry_id=entry_id,
            journal_id=journal_id,
            amount=amount,
            direction=CREDIT if direction == Entry.Direction.DEBIT else DEBIT,
            value_date=local_date(institution, instant),
            **extra,
        )
    return found


def _by_keys(statement: BankStatement, lines: list[BankStatementLine]):
    """The mirrored account's entries whose order or inbound entry a line's key names."""
    e2e = {line.end_to_end_id for line in lines if line.end_to_end_id}
    traces = {line.trace_number for line in lines if line.trace_number}
    refs = {line.bank_reference for line in lines if line.bank_reference}
    if not (e2e or traces or refs):
        return Entry.objects.none()
    orders = Q(order__end_to_end_id__in=e2e) | Q(order__trace_number__in=traces)
    inbound = Q(inbound_entry__trace_number__in=traces) | Q(inbound_entry_id__in=refs)
    named = RailJournal.objects.filter(
        Q(order__institution=statement.institution) & (orders | Q(order_id__in=refs))
        | Q(inbound_entry__institution=statement.institution) & inbound
    ).values("journal_id")
    return Entry.objects.filter(account_id=statement.account_id, journal_id__in=named)


def _in_days(statement: BankStatement, start: date, end: date):
    """The mirrored account's entries whose value instant may fall from `start` to `end` in the
    institution's calendar (a day more each side for the zones; the dates decide after)."""
    low = datetime.combine(start - timedelta(days=1), time.min, UTC)
    high = datetime.combine(end + timedelta(days=2), time.min, UTC)
    return Entry.objects.filter(account_id=statement.account_id).filter(_value_between(low, high))


def _value_between(low: datetime, high: datetime) -> Q:
    return Q(journal__value_at__gte=low, journal__value_at__lt=high) | Q(
        journal__value_at__isnull=True,
        journal__created_at__gte=low,
        journal__created_at__lt=high,
    )


# --- comparing ----------------------------------------------------------------------------------
def _compare(operator: str, theirs: str, ours: str) -> bool:
    if not theirs or not ours:
        return False
    theirs, ours = theirs.casefold(), ours.casefold()
    return theirs == ours if operator == "equals" else ours in theirs


def _holds(condition: dict, line: BankStatementLine, ledger: LedgerLine) -> bool:
    """A condition other than the amount: the line's field against the ledger line's."""
    name, operator = condition["field"], condition["operator"]
    if name == "bank_reference":
        return any(_compare(operator, line.bank_reference, ref) for ref in ledger.references)
    if name == "remittance":
        return _compare(operator, line.remittance, ledger.remittance)
    return _compare(operator, getattr(line, name), getattr(ledger, name))


def _close_in_time(rule: ReconciliationRule, line: BankStatementLine, ledger: LedgerLine) -> bool:
    day = line.value_date or line.booking_date
    return day is not None and abs((day - ledger.value_date).days) <= rule.date_window_days


def _pairs(rule: ReconciliationRule, line: BankStatementLine, ledger: LedgerLine) -> bool:
    """Everything but the amount holds."""
    return (
        line.direction == ledger.direction
        and _close_in_time(rule, line, ledger)
        and all(_holds(c, line, ledger) for c in rule.conditions if c["field"] != "amount")
    )


def _amount_ok(rule: ReconciliationRule, theirs: int, ours: int) -> bool:
    has_amount = any(c["field"] == "amount" for c in rule.conditions)
    return not has_amount or abs(theirs - ours) <= rule.amount_tolerance


# --- planning -----------------------------------------------------------------------------------
def plan(statement: BankStatement) -> Plan:
    """What a run would do now: reads only."""
    result = Plan(statement)
    lines = list(
        BankStatementLine.objects.filter(statement=statement, matched__isnull=True).order_by(
            "position"
        )
    )
    rules = list(
        ReconciliationRule.objects.filter(institution_id=statement.institution_id).order_by(
            "position"
        )
    )
    dated = statement.period_start is not None and statement.period_end is not None
    period = _period(
        statement, [] if dated else list(BankStatementLine.objects.filter(statement=statement))
    )
    entries = _by_keys(statement, lines)
    if period is not None:
        window = max((rule.date_window_days for rule in rules), default=0)
        start, end = period
        entries = entries | _in_days(
            statement, start - timedelta(days=window), end + timedelta(days=window)
        )
    ledger = _ledger_lines(statement, entries.distinct())
    taken = set(
        MatchedLedgerLine.objects.filter(entry_id__in=list(ledger)).values_list(
            "entry_id", flat=True
        )
    )
    free = {entry_id: item for entry_id, item in ledger.items() if entry_id not in taken}
    alone = list(lines)

    def matched(match: PlannedMatch) -> None:
        result.matches.append(match)
        for line in match.lines:
            alone.remove(line)
        for item in match.ledger:
            free.pop(item.entry_id)

    # 1. exact keys
    index: dict[tuple[str, str], list[LedgerLine]] = defaultdict(list)
    for item in ledger.values():
        index["end_to_end_id", item.end_to_end_id].append(item)
        index["trace_number", item.trace_number].append(item)
        for own in item.ids:
            index["bank_reference", own].append(item)
    for line in list(alone):
        for key in KEYS:
            value = getattr(line, key)
            named = [i for i in index.get((key, value), ()) if i.direction == line.direction]
            if not value or not named:
                continue
            open_ = [item for item in named if item.entry_id in free]
            if open_:
                matched(PlannedMatch("key", [line], [open_[0]], key=key))
            else:
                # Its money is matched already: the bank booked it twice.
                alone.remove(line)
                result.breaks.append(PlannedBreak(Kind.DUPLICATE, signed(line), line=line))
            break

    # 2. the rules, in order
    for rule in rules:
        _apply_rule(rule, alone, free, matched)

    # 3. expected payments
    expected = list(
        ExpectedPayment.objects.filter(
            institution_id=statement.institution_id,
            status=ExpectedPayment.Status.UNMATCHED,
            currency=statement.currency,
        ).order_by("id")
    )
    for line in list(alone):
        found = next((e for e in expected if _announced(e, line)), None)
        if found is not None:
            expected.remove(found)
            matched(PlannedMatch("expected", [line], [], expected=found))

    # The breaks
    for match in result.matches:
        if match.expected is not None:
            line = match.lines[0]
            result.breaks.append(
                PlannedBreak(Kind.BANK_ONLY, signed(line), line=line, expected=match.expected)
            )
        elif match.difference:
            one_line = len(match.lines) == 1
            result.breaks.append(
                PlannedBreak(
                    Kind.AMOUNT_MISMATCH,
                    match.difference,
                    line=match.lines[0] if one_line else None,
                    entry=None if one_line else match.ledger[0],
                    match=match,
                )
            )
    for line in alone:
        result.breaks.append(PlannedBreak(Kind.BANK_ONLY, signed(line), line=line))
    if period is not None:
        start, end = period
        for item in free.values():
            if start <= item.value_date <= end:
                result.breaks.append(PlannedBreak(Kind.LEDGER_ONLY, -item.signed, entry=item))
    _drop_open_already(result)
    _resolved_by_matches(result)
    # The chain (`services.proof`): this statement's opening against the previous closing, and
    # the gap before the next one that this statement closes.
    gap = gap_to_open(statement)
    if gap:
        result.breaks.append(PlannedBreak(Kind.MISSING_STATEMENT, gap))
    result.resolved += gaps_closed(statement)
    return result


def _apply_rule(rule, alone, free, matched) -> None:
    if rule.cardinality == Cardinality.ONE_TO_ONE:
        for line in list(alone):
            candidates = [
                item
                for item in free.values()
                if _pairs(rule, line, item) and _amount_ok(rule, line.amount, item.amount)
            ]
            if candidates:
                best = min(candidates, key=lambda i: (abs(i.amount - line.amount), i.entry_id))
                matched(PlannedMatch("rule", [line], [best], rule=rule))
    elif rule.cardinality == Cardinality.ONE_TO_MANY:
        for line in list(alone):
            group = [item for item in free.values() if _pairs(rule, line, item)]
            if group and _amount_ok(rule, line.amount, sum(item.amount for item in group)):
                matched(PlannedMatch("rule", [line], group, rule=rule))
    else:
        for item in sorted(free.values(), key=lambda i: i.entry_id):
            group = [line for line in alone if _pairs(rule, line, item)]
            if group and _amount_ok(rule, sum(line.amount for line in group), item.amount):
                matched(PlannedMatch("rule", group, [item], rule=rule))


def _announced(expected: ExpectedPayment, line: BankStatementLine) -> bool:
    day = line.value_date or line.booking_date
    if expected.direction != line.direction or not (
        expected.amount_min <= line.amount <= expected.amount_max
    ):
        return False
    if expected.date_from and (day is None or day < expected.date_from):
        return False
    if expected.date_to and (day is None or day > expected.date_to):
        return False
    if expected.end_to_end_id and expected.end_to_end_id != line.end_to_end_id:
        return False
    if expected.trace_number and expected.trace_number != line.trace_number:
        return False
    if expected.reference:
        reference = expected.reference.casefold()
        in_remittance = reference in line.remittance.casefold()
        if not in_remittance and reference != line.bank_reference.casefold():
            return False
    return True


def _drop_open_already(result: Plan) -> None:
    """A break open already for the same line (or ledger line) and kind is not opened again."""
    line_ids = [b.line.pk for b in result.breaks if b.line is not None]
    entry_ids = [b.entry.entry_id for b in result.breaks if b.line is None and b.entry]
    open_ = ReconciliationBreak.objects.filter(state__in=OPEN_STATES)
    by_line = set(
        open_.filter(statement_line_id__in=line_ids).values_list("kind", "statement_line_id")
    )
    by_entry = set(
        open_.filter(entry_id__in=entry_ids, statement_line__isnull=True).values_list(
            "kind", "entry_id"
        )
    )
    result.breaks = [
        b
        for b in result.breaks
        if not (
            (b.line is not None and (b.kind, b.line.pk) in by_line)
            or (b.line is None and b.entry is not None and (b.kind, b.entry.entry_id) in by_entry)
        )
    ]


def _match_date(match: PlannedMatch) -> date | None:
    """The later side's value date: until then the two sides differed (a break's `resolved_on`
    when this match resolves it)."""
    days = [line.value_date or line.booking_date for line in match.lines]
    days += [item.value_date for item in match.ledger]
    days = [day for day in days if day is not None]
    return max(days) if days else None


def _resolved_by_matches(result: Plan) -> None:
    """A line broken alone before (bank only, ledger only) that this run matches with the other
    side: its break is resolved by the match, from the later side's value date on."""
    by_line, by_entry = {}, {}
    for match in result.matches:
        if match.expected is not None:
            continue
        day = _match_date(match)
        by_line.update({line.pk: day for line in match.lines})
        by_entry.update({item.entry_id: day for item in match.ledger})
    if not (by_line or by_entry):
        return
    result.resolved = list(
        ReconciliationBreak.objects.filter(state__in=OPEN_STATES).filter(
            Q(kind=Kind.BANK_ONLY, statement_line_id__in=list(by_line))
            | Q(kind=Kind.LEDGER_ONLY, entry_id__in=list(by_entry))
        )
    )
    for row in result.resolved:
        row.resolution = "matched"
        row.resolved_on = (
            by_line.get(row.statement_line_id)
            if row.kind == Kind.BANK_ONLY
            else by_entry.get(row.entry_id)
        )


# --- writing ------------------------------------------------------------------------------------
def reconcile(*, statement: BankStatement, dry_run: bool = False) -> Result:
    """Match the statement (module docstring). A dry run only plans; a run that finds nothing
    new writes nothing either (no run, no event): the same statement twice changes nothing."""
    if dry_run:
        return Result(plan(statement), dry_run=True)
    with transaction.atomic():
        lock_reconciliation(statement.account_id)
        lock_unmatched_expected(statement.institution_id, statement.currency)
        planned = plan(statement)
        if planned.empty:
            return Result(planned, dry_run=False)
        return _write(planned)


def _write(planned: Plan) -> Result:
    statement = planned.statement
    institution = statement.institution
    now = timezone.now()
    run = ReconciliationRun.objects.create(
        institution=institution,
        statement=statement,
        matched_count=len(planned.matches),
        breaks_opened=len(planned.breaks),
        created_at=now,
    )
    rows = {}
    for match in planned.matches:
        rows[id(match)] = ReconciliationMatch(
            institution=institution,
            run=run,
            how=match.how,
            key=match.key,
            rule=match.rule,
            expected_payment=match.expected,
            difference=match.difference,
            created_at=now,
        )
    ReconciliationMatch.objects.bulk_create(rows.values())
    MatchedStatementLine.objects.bulk_create(
        MatchedStatementLine(statement_line=line, match=rows[id(match)])
        for match in planned.matches
        for line in match.lines
    )
    MatchedLedgerLine.objects.bulk_create(
        MatchedLedgerLine(entry_id=item.entry_id, match=rows[id(match)])
        for match in planned.matches
        for item in match.ledger
    )
    events = []
    expected = [match.expected for match in planned.matches if match.expected is not None]
    if expected:
        ExpectedPayment.objects.filter(pk__in=[e.pk for e in expected]).update(
            status=ExpectedPayment.Status.MATCHED, matched_at=now, updated_at=now
        )
        for item in expected:
            item.status, item.matched_at, item.updated_at = "matched", now, now
            data = {"expected_payment_id": item.pk, "status": item.status, "run_id": run.pk}
            events.append(event_for(item, "expected_payment.matched", data=data))
    breaks = [
        ReconciliationBreak(
            institution=institution,
            kind=item.kind,
            amount=item.amount,
            currency=statement.currency,
            statement=statement,
            statement_line=item.line,
            entry_id=item.entry.entry_id if item.entry else None,
            match=rows[id(item.match)] if item.match is not None else None,
            expected_payment=item.expected,
            run=run,
            created_at=now,
            updated_at=now,
        )
        for item in planned.breaks
    ]
    ReconciliationBreak.objects.bulk_create(breaks)
    for row in breaks:
        data = {"break_id": row.pk, "kind": row.kind, "amount": row.amount, "run_id": run.pk}
        events.append(event_for(row, "reconciliation_break.opened", data=data))
    if planned.resolved:
        for row in planned.resolved:
            row.state = ReconciliationBreak.State.RESOLVED
            row.resolved_at = row.updated_at = now
        ReconciliationBreak.objects.bulk_update(
            planned.resolved, ["state", "resolution", "resolved_at", "resolved_on", "updated_at"]
        )
        for row in planned.resolved:
            data = {"break_id": row.pk, "resolution": row.resolution, "run_id": run.pk}
            events.append(event_for(row, "reconciliation_break.resolved", data=data))
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
                "breaks_resolved": len(planned.resolved),
            },
        ),
    )
    emit_many(events)
    return Result(planned, dry_run=False, run=run, break_rows=breaks)
