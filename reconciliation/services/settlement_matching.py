"""Matching a card network's settlement against TX's clearing, and the settlement's proof
(docs/reconciliation.md, "Matching a settlement" and "The settlement's proof").

TX's side is card clearing: the entries of the institution's `card_clearing` account of the
settlement's currency, but the settlements' own journals. Each is one transaction TX cleared
under the id it gave the network: a presentment (`hold_capture`, its authorization's id, a
`purchase` or for a `Cash` authorization `cash`), a return (`card_return`, the return's id,
`refund`), a dispute's step (`dispute`, its authorization's id: a `chargeback` when it takes
from card clearing, a `representment` when it gives back). Amounts are counted as the
settlement counts them, from the institution's side: card clearing's debits positive (a refund,
what the network pays the institution), its credits negative (a presentment, what the
institution pays).

A row is matched with the entry of its transaction id and kind not matched yet (the one of the
same amount, else the oldest): one row, one entry, whatever the amounts (a difference is an
`amount_mismatch` break). A row whose id and kind name only entries matched already is settled
twice: `duplicate`. A row with none is `network_only` (the late presentment); an entry of the
settlement's days (`settlement_days`) nothing matched is `tx_only`. A break's amount is what
the network settled less what TX cleared.

Writes as the statements' matching does (`services.matching`): planned, then written under
card clearing's reconciliation lock, planning again under it; a dry run and a run that finds
nothing new write nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.db import connection, transaction
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts.models import Account, Entry, Journal, StatementLine
from authorizations.models import Authorization, CardReturn
from disputes.models import DisputeStep
from events.services import emit_many, event_for
from institutions.calendar import local_date

from ..locks import lock_reconciliation
from ..models import (
    OPEN_STATES,
    MatchedLedgerLine,
    MatchedSettlementRow,
    NetworkSettlement,
    NetworkSettlementRow,
    ReconciliationBreak,
    ReconciliationMatch,
    ReconciliationRun,
)
from .proof import ONE_SETTLEMENT, SETTLEMENT_PROOF_SQL

Kind = ReconciliationBreak.Kind
RowKind = NetworkSettlementRow.Kind
KEY = "transaction_id"  # the network transaction id (`ReconciliationMatch.key`)


@dataclass(frozen=True, slots=True)
class Cleared:
    """An entry of card clearing: a transaction TX cleared, as the network would settle it."""

    entry_id: int
    journal_id: str
    amount: int  # signed as the settlement signs: a debit of card clearing positive
    value_date: date
    transaction_id: str = ""  # the id TX gave the network ("" for none known)
    kind: str = ""  # the settlement row's kind it would be


@dataclass
class PlannedMatch:
    row: NetworkSettlementRow
    cleared: Cleared
    how: str = "key"
    key: str = KEY

    @property
    def difference(self) -> int:
        """What the network settled less what TX cleared."""
        return self.row.amount - self.cleared.amount


@dataclass
class PlannedBreak:
    kind: str
    amount: int
    row: NetworkSettlementRow | None = None
    cleared: Cleared | None = None
    match: PlannedMatch | None = None


@dataclass
class Plan:
    settlement: NetworkSettlement
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


# --- TX's side ----------------------------------------------------------------------------------
def card_clearing(settlement: NetworkSettlement) -> Account | None:
    return Account.objects.filter(
        institution_id=settlement.institution_id,
        internal_code=Account.InternalCode.CARD_CLEARING,
        currency=settlement.currency,
    ).first()


def settlement_days(settlement: NetworkSettlement) -> tuple[date, date]:
    """The days (in the institution's calendar) whose clearing the settlement settles: those
    after the network's previous settlement date in the currency, up to and including its own
    (the network settles on a day what it cleared that day, and TX clears a presentment when
    the network sends it); its own day alone when it is the network's first."""
    previous = (
        NetworkSettlement.objects.filter(
            institution_id=settlement.institution_id,
            network=settlement.network,
            currency=settlement.currency,
            settlement_date__lt=settlement.settlement_date,
        )
        .order_by("-settlement_date")
        .values_list("settlement_date", flat=True)
        .first()
    )
    start = previous + timedelta(days=1) if previous else settlement.settlement_date
    return start, settlement.settlement_date


def _tx_entries(account: Account):
    """Card clearing's entries of TX's clearing: all but the settlements' journals."""
    return Entry.objects.filter(account=account).exclude(
        journal__kind=Journal.Kind.NETWORK_SETTLEMENT
    )


def _in_days(settlement: NetworkSettlement, start: date, end: date) -> Q:
    """Entries whose value instant falls in the days `start` to `end` of the institution."""
    zone = ZoneInfo(settlement.institution.time_zone)
    low = datetime.combine(start, time.min, zone)
    high = datetime.combine(end + timedelta(days=1), time.min, zone)
    return Q(journal__value_at__gte=low, journal__value_at__lt=high) | Q(
        journal__value_at__isnull=True,
        journal__created_at__gte=low,
        journal__created_at__lt=high,
    )


def _named(account: Account, ids: set[str]):
    """Card clearing's entries of the transactions the ids name (authorizations, returns)."""
    journals = StatementLine.objects.filter(
        authorization_id__in=ids,
        settlement_status=StatementLine.SettlementStatus.PRESENTMENT,
        category__isnull=True,
        journal__isnull=False,
    ).values("journal_id")
    returns = CardReturn.objects.filter(id__in=ids).values("journal_id")
    steps = DisputeStep.objects.filter(
        dispute__authorization_id__in=ids, journal__isnull=False
    ).values("journal_id")
    return _tx_entries(account).filter(
        Q(journal_id__in=journals) | Q(journal_id__in=returns) | Q(journal_id__in=steps)
    )


def _cleared(settlement: NetworkSettlement, entries) -> dict[int, Cleared]:
    """The entries as cleared transactions, each with its id and kind."""
    rows = list(
        entries.annotate(value_instant=Coalesce(F("journal__value_at"), F("journal__created_at")))
        .values_list("id", "journal_id", "amount", "direction", "value_instant")
        .order_by("id")
    )
    journals = {row[1] for row in rows}
    keys: dict[str, tuple[str, str]] = {}
    for journal_id, authorization_id, type_ in StatementLine.objects.filter(
        journal_id__in=journals,
        authorization__isnull=False,
        settlement_status=StatementLine.SettlementStatus.PRESENTMENT,
        category__isnull=True,
    ).values_list("journal_id", "authorization_id", "authorization__type"):
        cash = type_ == Authorization.Type.CASH
        keys[journal_id] = (authorization_id, RowKind.CASH if cash else RowKind.PURCHASE)
    for journal_id, return_id in CardReturn.objects.filter(journal_id__in=journals).values_list(
        "journal_id", "id"
    ):
        keys[journal_id] = (return_id, RowKind.REFUND)
    for journal_id, authorization_id in DisputeStep.objects.filter(
        journal_id__in=journals
    ).values_list("journal_id", "dispute__authorization_id"):
        keys[journal_id] = (authorization_id, "")  # its kind: by the entry's direction
    found = {}
    for entry_id, journal_id, amount, direction, instant in rows:
        debit = direction == Entry.Direction.DEBIT
        transaction_id, kind = keys.get(journal_id, ("", ""))
        if transaction_id and not kind:
            kind = RowKind.CHARGEBACK if debit else RowKind.REPRESENTMENT
        found[entry_id] = Cleared(
            entry_id=entry_id,
            journal_id=journal_id,
            amount=amount if debit else -amount,
            value_date=local_date(settlement.institution, instant),
            transaction_id=transaction_id or "",
            kind=kind,
        )
    return found


def _other_settlements_tx_only():
    """Entries another settlement's open `tx_only` break claims."""
    return ReconciliationBreak.objects.filter(
        kind=Kind.TX_ONLY, state__in=OPEN_STATES, entry__isnull=False
    )


# --- planning -----------------------------------------------------------------------------------
def plan(settlement: NetworkSettlement) -> Plan:
    """What a run would do now: reads only."""
    result = Plan(settlement)
    rows = list(
        NetworkSettlementRow.objects.filter(settlement=settlement, matched__isnull=True).order_by(
            "position"
        )
    )
    account = card_clearing(settlement)
    if account is None:  # nothing cleared in the currency, ever
        result.breaks = [PlannedBreak(Kind.NETWORK_ONLY, row.amount, row=row) for row in rows]
        _drop_open_already(result)
        return result
    start, end = settlement_days(settlement)
    entries = _named(account, {row.network_transaction_id for row in rows}) | _tx_entries(
        account
    ).filter(_in_days(settlement, start, end))
    cleared = _cleared(settlement, entries.distinct())
    taken = set(
        MatchedLedgerLine.objects.filter(entry_id__in=list(cleared)).values_list(
            "entry_id", flat=True
        )
    )
    free = {entry_id: item for entry_id, item in cleared.items() if entry_id not in taken}
    index: dict[tuple[str, str], list[Cleared]] = {}
    for item in cleared.values():
        if item.transaction_id:
            index.setdefault((item.transaction_id, item.kind), []).append(item)

    for row in rows:
        named = index.get((row.network_transaction_id, row.kind), [])
        open_ = [item for item in named if item.entry_id in free]
        if open_:
            same = [item for item in open_ if item.amount == row.amount]
            match = PlannedMatch(row, (same or open_)[0])
            result.matches.append(match)
            free.pop(match.cleared.entry_id)
            if match.difference:
                result.breaks.append(
                    PlannedBreak(Kind.AMOUNT_MISMATCH, match.difference, row=row, match=match)
                )
        elif named:
            # Its transaction is settled already: the network settled it twice.
            result.breaks.append(PlannedBreak(Kind.DUPLICATE, row.amount, row=row))
        else:
            result.breaks.append(PlannedBreak(Kind.NETWORK_ONLY, row.amount, row=row))
    for item in free.values():
        if start <= item.value_date <= end:
            result.breaks.append(PlannedBreak(Kind.TX_ONLY, -item.amount, cleared=item))
    _drop_open_already(result)
    _resolved_by_matches(result)
    return result


def _drop_open_already(result: Plan) -> None:
    """A break open already for the same row (or entry: whichever settlement's) and kind is not
    opened again."""
    row_ids = [b.row.pk for b in result.breaks if b.row is not None]
    entry_ids = [b.cleared.entry_id for b in result.breaks if b.cleared is not None]
    open_ = ReconciliationBreak.objects.filter(state__in=OPEN_STATES)
    by_row = set(
        open_.filter(settlement_row_id__in=row_ids).values_list("kind", "settlement_row_id")
    )
    by_entry = set(
        _other_settlements_tx_only().filter(entry_id__in=entry_ids).values_list("kind", "entry_id")
    )
    result.breaks = [
        b
        for b in result.breaks
        if not (
            (b.row is not None and (b.kind, b.row.pk) in by_row)
            or (b.cleared is not None and (b.kind, b.cleared.entry_id) in by_entry)
        )
    ]


def _resolved_by_matches(result: Plan) -> None:
    """A row broken `network_only` (the late presentment TX has cleared since) or an entry
    broken `tx_only` (settled a day later) that this run matches: its break is resolved by the
    match, from the later side's date on (the settlement date or the clearing's)."""
    by_row, by_entry = {}, {}
    for match in result.matches:
        day = max(result.settlement.settlement_date, match.cleared.value_date)
        by_row[match.row.pk] = day
        by_entry[match.cleared.entry_id] = day
    if not by_row:
        return
    result.resolved = list(
        ReconciliationBreak.objects.filter(state__in=OPEN_STATES).filter(
            Q(kind=Kind.NETWORK_ONLY, settlement_row_id__in=list(by_row))
            | Q(kind=Kind.TX_ONLY, entry_id__in=list(by_entry))
        )
    )
    for row in result.resolved:
        row.resolved_on = (
            by_row.get(row.settlement_row_id)
            if row.kind == Kind.NETWORK_ONLY
            else by_entry.get(row.entry_id)
        )


# --- writing ------------------------------------------------------------------------------------
def reconcile_settlement(*, settlement: NetworkSettlement, dry_run: bool = False) -> Result:
    """Match the settlement (module docstring). A dry run only plans; a run that finds nothing
    new writes nothing either (no run, no event)."""
    if dry_run:
        return Result(plan(settlement), dry_run=True)
    with transaction.atomic():
        account = card_clearing(settlement)
        # Card clearing's lock, or the settlement's when the currency has none yet.
        lock_reconciliation(account.pk if account else settlement.pk)
        planned = plan(settlement)
        if planned.empty:
            return Result(planned, dry_run=False)
        return _write(planned)


def _write(planned: Plan) -> Result:
    settlement = planned.settlement
    institution = settlement.institution
    now = timezone.now()
    run = ReconciliationRun.objects.create(
        institution=institution,
        settlement=settlement,
        matched_count=len(planned.matches),
        breaks_opened=len(planned.breaks),
        created_at=now,
    )
    rows = {
        id(match): ReconciliationMatch(
            institution=institution,
            run=run,
            how=ReconciliationMatch.How.KEY,
            key=KEY,
            difference=match.difference,
            created_at=now,
        )
        for match in planned.matches
    }
    ReconciliationMatch.objects.bulk_create(rows.values())
    MatchedSettlementRow.objects.bulk_create(
        MatchedSettlementRow(settlement_row=match.row, match=rows[id(match)])
        for match in planned.matches
    )
    MatchedLedgerLine.objects.bulk_create(
        MatchedLedgerLine(entry_id=match.cleared.entry_id, match=rows[id(match)])
        for match in planned.matches
    )
    breaks = [
        ReconciliationBreak(
            institution=institution,
            kind=item.kind,
            amount=item.amount,
            currency=settlement.currency,
            settlement=settlement,
            settlement_row=item.row,
            entry_id=item.cleared.entry_id if item.cleared else None,
            match=rows[id(item.match)] if item.match is not None else None,
            run=run,
            created_at=now,
            updated_at=now,
        )
        for item in planned.breaks
    ]
    ReconciliationBreak.objects.bulk_create(breaks)
    events = [
        event_for(
            row,
            "reconciliation_break.opened",
            data={"break_id": row.pk, "kind": row.kind, "amount": row.amount, "run_id": run.pk},
        )
        for row in breaks
    ]
    if planned.resolved:
        for row in planned.resolved:
            row.state, row.resolution = ReconciliationBreak.State.RESOLVED, "matched"
            row.resolved_at = row.updated_at = now
        ReconciliationBreak.objects.bulk_update(
            planned.resolved, ["state", "resolution", "resolved_at", "resolved_on", "updated_at"]
        )
        for row in planned.resolved:
            data = {"break_id": row.pk, "resolution": "matched", "run_id": run.pk}
            events.append(event_for(row, "reconciliation_break.resolved", data=data))
    events.insert(
        0,
        event_for(
            run,
            "reconciliation.completed",
            data={
                "reconciliation_id": run.pk,
                "network_settlement_id": settlement.pk,
                "matched": run.matched_count,
                "breaks_opened": run.breaks_opened,
                "breaks_resolved": len(planned.resolved),
            },
        ),
    )
    emit_many(events)
    return Result(planned, dry_run=False, run=run, break_rows=breaks)


# --- the proof ----------------------------------------------------------------------------------
def settlement_proof(settlement: NetworkSettlement) -> dict:
    """Card clearing's movement of the settlement's transactions against its transactions total
    less its open breaks, to the minor unit (docs/reconciliation.md, "The settlement's proof"),
    now, reconciled or not: `proof.SETTLEMENT_PROOF_SQL`, which `verify_ledger` runs for every
    reconciled settlement."""
    with connection.cursor() as cursor:
        cursor.execute(SETTLEMENT_PROOF_SQL.format(where=ONE_SETTLEMENT), [settlement.pk])  # noqa: S608
        _id, movement, transactions, open_breaks = cursor.fetchone()
    difference = movement - (transactions - open_breaks)
    return {
        "card_clearing_movement": movement,
        "net": settlement.net,
        "interchange": settlement.interchange,
        "scheme_fees": settlement.scheme_fees,
        "transactions": transactions,
        "open_breaks": open_breaks,
        "difference": difference,
        "holds": difference == 0,
    }
