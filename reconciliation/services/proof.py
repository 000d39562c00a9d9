"""The proof of a bank statement (docs/reconciliation.md, "The proof").

For an end-of-day statement (camt.053, BAI2, MT940) that was reconciled, the mirrored account's
balance by value date at the statement's closing instant (the end of its last day in the
institution's time zone), counted as the bank counts it, equals the statement's closing balance
less the breaks that stand at that instant, to the minor unit:

    ledger(closing instant) = closing balance - sum(standing breaks' amounts)

- **as the bank counts it**: the mirrored account (`rail_settlement`) is TX's view of the bank
  account kept the other way round (money in debits it): its debits less its credits;
- **by value date**: an entry counts from its journal's value date when it has one
  (`Journal.value_at`), else from its posting (docs/balances-at-an-instant.md);
- **the breaks that stand** at a statement: every break of a statement of the same account
  that closes on or before it, open or assigned, or resolved from a later day on
  (`resolved_on`: a later match, or a booking of another day).

The chain: each statement's opening balance is the previous statement's closing balance. What
the bank moved between the two less what the ledger moved between them is a `missing_statement`
break on the later statement (the first statement's is its opening balance less the ledger's at
its opening instant: what the account held before TX saw its statements). With it open, the
proof holds; the statement that was missing, once reconciled, resolves it when the chain
closes.

One SQL query computes the proof (`PROOF_SQL`), for the API and for `verify_ledger` (registered
by `ReconciliationConfig.ready`): one place says what the proof is. So does the network
settlement's (`SETTLEMENT_PROOF_SQL`, docs/reconciliation.md "The settlement's proof"), for
`settlement_matching.settlement_proof` and `verify_ledger`: every reconciled settlement.
"""

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.db import connection

from ..models import OPEN_STATES, BankStatement, ReconciliationBreak

# An intraday statement (camt.052) is not in the chain and has no proof: its closing balance is
# the day's so far, and the day's end-of-day statement repeats its lines.
END_OF_DAY = (BankStatement.Format.CAMT_053, BankStatement.Format.BAI2, BankStatement.Format.MT940)

# The mirrored account's money as the bank counts it (debits less credits), by value date,
# before an instant: `{account}` and `{instant}` are SQL expressions (parameters or columns).
LEDGER_BEFORE = """
            SELECT COALESCE(SUM(CASE WHEN e.direction = 'debit' THEN e.amount
                                     ELSE -e.amount END), 0)::bigint AS ledger
              FROM accounts_entry e
              JOIN accounts_journal j ON j.id = e.journal_id
             WHERE e.account_id = {account}
               AND COALESCE(j.value_at, e.created_at) < {instant}"""
LEDGER_SQL = LEDGER_BEFORE.format(account="%s", instant="%s")

# Every reconciled end-of-day statement (of `{where}`): its ledger at the closing instant, its
# closing balance and the sum of the breaks that stand at it.
PROOF_SQL = """
    SELECT s.id, l.ledger, s.closing_balance, k.breaks::bigint AS breaks
      FROM (SELECT st.id, st.account_id, st.closing_balance, st.period_end,
                   ((st.period_end + 1)::timestamp AT TIME ZONE i.time_zone) AS closing_at
              FROM reconciliation_bankstatement st
              JOIN api_institution i ON i.id = st.institution_id
             WHERE st.format IN ('camt.053', 'bai2', 'mt940')
               AND st.period_end IS NOT NULL AND st.closing_balance IS NOT NULL
               AND EXISTS (SELECT 1 FROM reconciliation_reconciliationrun r
                            WHERE r.statement_id = st.id)
               {where}) s
      CROSS JOIN LATERAL ({ledger}) l
      CROSS JOIN LATERAL (
            SELECT COALESCE(SUM(b.amount), 0) AS breaks
              FROM reconciliation_reconciliationbreak b
              JOIN reconciliation_bankstatement bs ON bs.id = b.statement_id
             WHERE bs.account_id = s.account_id AND bs.period_end <= s.period_end
               AND (b.state IN ('open', 'assigned') OR b.resolved_on > s.period_end)) k
""".replace("{ledger}", LEDGER_BEFORE.format(account="s.account_id", instant="s.closing_at"))

# `where` is one of two constant filters, never a value: the statement's id is a parameter.
ALL_STATEMENTS, ONE_STATEMENT = "", "AND st.id = %s"
CHECKS = {
    "reconciled statements whose proof does not hold (ledger by value date at the closing "
    "instant, in the bank's terms, against the closing balance less the standing breaks)": (
        "SELECT * FROM ("  # noqa: S608 (`where` a constant)
        + PROOF_SQL.format(where=ALL_STATEMENTS)
        + ") p WHERE p.ledger <> p.closing_balance - p.breaks"
    ),
}


# The settlement's proof (docs/reconciliation.md, "The settlement's proof"), of `{where}`'s
# settlements: its transactions total (net less interchange and scheme fees: what its journal
# posted on card clearing), card clearing's movement of TX's clearing (not the settlements'
# journals) counted as the settlement signs (debits less credits), and its open breaks. The
# movement counts the entries of the settlement's days (after the network's previous settlement
# date in the currency, up to its own; its own alone when it is the first) that nothing matched
# and no other settlement's open `tx_only` break claims, and the entries its own rows matched,
# of whichever day.
SETTLEMENT_PROOF_SQL = """
    SELECT s.id, m.movement::bigint AS movement, s.transactions, k.breaks::bigint AS breaks
      FROM (SELECT ns.id, ns.net - ns.interchange - ns.scheme_fees AS transactions,
                   (SELECT a.id FROM accounts_account a
                     WHERE a.institution_id = ns.institution_id
                       AND a.internal_code = 'card_clearing' AND a.currency = ns.currency)
                       AS account_id,
                   (COALESCE((SELECT MAX(p.settlement_date) + 1
                                FROM reconciliation_networksettlement p
                               WHERE p.institution_id = ns.institution_id
                                 AND p.network = ns.network AND p.currency = ns.currency
                                 AND p.settlement_date < ns.settlement_date),
                             ns.settlement_date)::timestamp AT TIME ZONE i.time_zone) AS low,
                   ((ns.settlement_date + 1)::timestamp AT TIME ZONE i.time_zone) AS high
              FROM reconciliation_networksettlement ns
              JOIN api_institution i ON i.id = ns.institution_id
             WHERE true {where}) s
      CROSS JOIN LATERAL (
            SELECT COALESCE(SUM(CASE WHEN e.direction = 'debit' THEN e.amount
                                     ELSE -e.amount END), 0) AS movement
              FROM accounts_entry e
              JOIN accounts_journal j ON j.id = e.journal_id
             WHERE e.account_id = s.account_id AND j.kind <> 'network_settlement'
               AND ((COALESCE(j.value_at, j.created_at) >= s.low
                     AND COALESCE(j.value_at, j.created_at) < s.high
                     AND NOT EXISTS (SELECT 1 FROM reconciliation_matchedledgerline ml
                                      WHERE ml.entry_id = e.id)
                     AND NOT EXISTS (SELECT 1 FROM reconciliation_reconciliationbreak b
                                      WHERE b.entry_id = e.id AND b.kind = 'tx_only'
                                        AND b.state IN ('open', 'assigned')
                                        AND b.settlement_id IS DISTINCT FROM s.id))
                    OR EXISTS (SELECT 1 FROM reconciliation_matchedledgerline ml
                                 JOIN reconciliation_reconciliationmatch mt ON mt.id = ml.match_id
                                 JOIN reconciliation_reconciliationrun r ON r.id = mt.run_id
                                WHERE ml.entry_id = e.id AND r.settlement_id = s.id))) m
      CROSS JOIN LATERAL (
            SELECT COALESCE(SUM(b.amount), 0) AS breaks
              FROM reconciliation_reconciliationbreak b
             WHERE b.settlement_id = s.id AND b.state IN ('open', 'assigned')) k
"""

# `where` is one of two constant filters, never a value: the settlement's id is a parameter.
RECONCILED_SETTLEMENTS = """AND EXISTS (SELECT 1 FROM reconciliation_reconciliationrun r
                                         WHERE r.settlement_id = ns.id)"""
ONE_SETTLEMENT = "AND ns.id = %s"
CHECKS[
    "reconciled network settlements whose proof does not hold (card clearing's movement of "
    "TX's clearing against the settlement's transactions less its open breaks)"
] = (
    "SELECT * FROM ("  # noqa: S608 (`where` a constant)
    + SETTLEMENT_PROOF_SQL.format(where=RECONCILED_SETTLEMENTS)
    + ") p WHERE p.movement <> p.transactions - p.breaks"
)


@dataclass(frozen=True)
class Proof:
    """A statement's proof as the API shows it (`holds`: `difference` is 0)."""

    closing_at: datetime
    ledger_balance: int
    closing_balance: int
    standing_breaks: int

    @property
    def difference(self) -> int:
        return self.ledger_balance - (self.closing_balance - self.standing_breaks)

    @property
    def holds(self) -> bool:
        return self.difference == 0


def day_start(institution, day: date) -> datetime:
    """The first instant of `day` in the institution's time zone."""
    return datetime.combine(day, time(), ZoneInfo(institution.time_zone))


def statement_proof(statement: BankStatement) -> Proof | None:
    """The statement's proof now, or None when it has none: intraday, without a closing balance
    or a last day, or not reconciled yet."""
    with connection.cursor() as cursor:
        cursor.execute(PROOF_SQL.format(where=ONE_STATEMENT), [statement.pk])  # noqa: S608
        row = cursor.fetchone()
    if row is None:
        return None
    _id, ledger, closing, breaks = row
    closing_at = day_start(statement.institution, statement.period_end + timedelta(days=1))
    return Proof(closing_at, ledger, closing, breaks)


def ledger_at(account_id: str, instant: datetime) -> int:
    with connection.cursor() as cursor:
        cursor.execute(LEDGER_SQL, [account_id, instant])
        return cursor.fetchone()[0]


def _in_chain(statement: BankStatement) -> bool:
    return (
        statement.format in END_OF_DAY
        and statement.period_end is not None
        and statement.opening_balance is not None
        and statement.closing_balance is not None
    )


def _first_day(statement: BankStatement) -> date:
    return statement.period_start or statement.period_end


def _second_of_its_day(statement: BankStatement) -> bool:
    """Another end-of-day statement of the account ends on this one's first day: a second
    statement of a day (a correction, a page) is not chained; the day's first is."""
    return BankStatement.objects.filter(
        account_id=statement.account_id,
        format__in=END_OF_DAY,
        period_end=_first_day(statement),
        id__lt=statement.pk,
    ).exists()


def previous_statement(statement: BankStatement) -> BankStatement | None:
    """The account's end-of-day statement closing last before this one's first day."""
    return (
        BankStatement.objects.filter(
            account_id=statement.account_id,
            format__in=END_OF_DAY,
            period_end__lt=_first_day(statement),
            closing_balance__isnull=False,
        )
        .exclude(pk=statement.pk)
        .order_by("-period_end", "-id")
        .first()
    )


def opening_gap(statement: BankStatement, previous: BankStatement | None) -> int:
    """What the bank moved between `previous`'s close and this statement's opening, less what
    the ledger moved (by value date): before the first statement, the whole opening balance
    less the ledger's at its opening instant."""
    institution = statement.institution
    opened = day_start(institution, _first_day(statement))
    if previous is None:
        return statement.opening_balance - ledger_at(statement.account_id, opened)
    closed = day_start(institution, previous.period_end + timedelta(days=1))
    ledger = ledger_at(statement.account_id, opened) - ledger_at(statement.account_id, closed)
    return statement.opening_balance - previous.closing_balance - ledger


def gap_to_open(statement: BankStatement) -> int:
    """The amount of the `missing_statement` break a run of the statement opens (0: none): the
    opening gap, when the statement is in the chain and has no such break open already."""
    if not _in_chain(statement) or _second_of_its_day(statement):
        return 0
    if ReconciliationBreak.objects.filter(
        statement=statement,
        kind=ReconciliationBreak.Kind.MISSING_STATEMENT,
        state__in=OPEN_STATES,
    ).exists():
        return 0
    return opening_gap(statement, previous_statement(statement))


def gaps_closed(statement: BankStatement) -> list[ReconciliationBreak]:
    """The open `missing_statement` breaks this statement closes: the next statement's, when
    the gap between the two is now 0 (resolved from this statement's last day: the lines of
    the missing days are this statement's, and its own breaks stand for them)."""
    if not _in_chain(statement):
        return []
    closed = []
    following = (
        ReconciliationBreak.objects.filter(
            kind=ReconciliationBreak.Kind.MISSING_STATEMENT,
            state__in=OPEN_STATES,
            statement__account_id=statement.account_id,
            statement__period_end__gt=statement.period_end,
        )
        .exclude(statement=statement)
        .select_related("statement__institution")
    )
    for row in following:
        later = row.statement
        if previous_statement(later) == statement and opening_gap(later, statement) == 0:
            row.resolution, row.resolved_on = "statement_received", statement.period_end
            closed.append(row)
    return closed
