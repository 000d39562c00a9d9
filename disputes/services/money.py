"""A dispute's money (docs/disputes.md, "Money"): each step one balanced journal against the
institution's `dispute_clearing` account, written with its `DisputeStep`, and the dispute's
liability split moved with it (PostgreSQL keeps the split whole: `dispute_liability_split`).

- provisional credit: dispute clearing → cardholder (a `CashInc` line); the split unchanged;
- chargeback: card clearing → dispute clearing; remaining → recovered;
- representment: dispute clearing → card clearing; recovered → remaining;
- recovered again (pre-arbitration accepted, arbitration won): card clearing → dispute
  clearing; remaining → recovered;
- provisional credit reversed: cardholder → dispute clearing (a `CashDec` line); remaining →
  cardholder liable;
- write-off: dispute losses → dispute clearing; remaining → written off.

The reversal takes the credit back whatever the account has left (`posting.FORCED`, as the
network's own messages: the cardholder may have spent it); what it takes beyond the account's
available is its `network_overdraft`, paid back first by what comes in (docs/overdraft.md). Every
function runs in the caller's transaction, the dispute's row locked first.
"""

from accounts.locks import lock_accounts
from accounts.models import Account, Entry, Journal, StatementLine
from accounts.posting import FORCED, credit, debit, journal_new, post
from accounts.services import internal_account
from accounts.statement_lines import Line, statement_lines_new
from core.actors import Actor
from core.rows import new_row

from ..models import Dispute, DisputeStep


def grant_provisional_credit(dispute: Dispute, actor: Actor) -> DisputeStep:
    """Credit the cardholder what is disputed, from dispute clearing."""
    amount = dispute.amount - dispute.provisional_credit
    step = _move(
        dispute,
        DisputeStep.Kind.PROVISIONAL_CREDIT,
        amount,
        into=dispute.account_id,
        out_of=_internal(dispute, Account.InternalCode.DISPUTE_CLEARING),
        line=(StatementLine.Type.CASH_INC, "Provisional credit"),
        actor=actor,
        # Value-dated to the payment it disputes (PSD2 art. 73; docs/disputes.md, "Money").
        value_at=_debited_at(dispute),
    )
    dispute.provisional_credit += amount
    return step


def chargeback(dispute: Dispute, actor: Actor) -> DisputeStep:
    """The network charged the merchant back: what is open is recovered."""
    return _recover(dispute, DisputeStep.Kind.CHARGEBACK, actor)


def recover(dispute: Dispute, kind: str, actor: Actor) -> DisputeStep:
    """The merchant's side gave up what it had re-presented (pre-arbitration accepted,
    arbitration won): what is open is recovered."""
    return _recover(dispute, kind, actor)


def representment(dispute: Dispute, amount: int, actor: Actor) -> DisputeStep:
    """The merchant re-presented `amount` (at most what was recovered): it is open again."""
    step = _move(
        dispute,
        DisputeStep.Kind.REPRESENTMENT,
        amount,
        into=_internal(dispute, Account.InternalCode.CARD_CLEARING),
        out_of=_internal(dispute, Account.InternalCode.DISPUTE_CLEARING),
        actor=actor,
    )
    dispute.recovered -= amount
    dispute.remaining += amount
    return step


def cardholder_bears(dispute: Dispute, actor: Actor) -> DisputeStep | None:
    """What is open is the cardholder's: its provisional credit reversed (none was given: no
    money moves)."""
    amount = min(dispute.remaining, dispute.provisional_credit)
    step = None
    if amount:
        step = _move(
            dispute,
            DisputeStep.Kind.PROVISIONAL_CREDIT_REVERSED,
            amount,
            into=_internal(dispute, Account.InternalCode.DISPUTE_CLEARING),
            out_of=dispute.account_id,
            line=(StatementLine.Type.CASH_DEC, "Provisional credit reversed"),
            actor=actor,
        )
        dispute.provisional_credit -= amount
    dispute.cardholder_liable += dispute.remaining
    dispute.remaining = 0
    return step


def write_off(dispute: Dispute, actor: Actor) -> DisputeStep:
    """What is open is the issuer's loss: dispute losses pay dispute clearing back (the
    cardholder keeps the credit)."""
    amount = dispute.remaining
    step = _move(
        dispute,
        DisputeStep.Kind.WRITE_OFF,
        amount,
        into=_internal(dispute, Account.InternalCode.DISPUTE_CLEARING),
        out_of=_internal(dispute, Account.InternalCode.DISPUTE_LOSSES),
        actor=actor,
    )
    dispute.written_off += amount
    dispute.remaining = 0
    return step


def _recover(dispute: Dispute, kind: str, actor: Actor) -> DisputeStep:
    amount = dispute.remaining
    step = _move(
        dispute,
        kind,
        amount,
        into=_internal(dispute, Account.InternalCode.DISPUTE_CLEARING),
        out_of=_internal(dispute, Account.InternalCode.CARD_CLEARING),
        actor=actor,
    )
    dispute.recovered += amount
    dispute.remaining = 0
    return step


def _debited_at(dispute: Dispute):
    """The instant the disputed payment's first presentment debited the cardholder's account:
    its entry's, the instant the balance at an instant reads (`accounts.selectors.
    balance_at`)."""
    return (
        Entry.objects.filter(
            account_id=dispute.account_id,
            direction=Entry.Direction.DEBIT,
            journal__statement_lines__authorization_id=dispute.authorization_id,
            journal__statement_lines__settlement_status=StatementLine.SettlementStatus.PRESENTMENT,
            journal__statement_lines__category__isnull=True,
        )
        .order_by("created_at")
        .values_list("created_at", flat=True)
        .first()
    )


def _internal(dispute: Dispute, code: str) -> str:
    return internal_account(
        institution=dispute.institution, code=code, currency=dispute.currency
    ).pk


def _move(
    dispute: Dispute,
    kind: str,
    amount: int,
    *,
    into: str,
    out_of: str,
    actor: Actor,
    line: tuple[str, str] | None = None,
    value_at=None,
) -> DisputeStep:
    """`amount` (> 0) from `out_of` into `to`, one journal, its step and the cardholder's
    statement line when the cardholder's account is one side (`line`: its type and words).
    `value_at`: the journal's value date, when earlier than now (`Journal.value_at`)."""
    if amount <= 0:
        raise ValueError(f"A dispute's money step moves something: {amount}")
    journal = journal_new(
        institution_id=dispute.institution_id,
        kind=Journal.Kind.DISPUTE,
        description=f"Dispute {dispute.pk}: {kind.replace('_', ' ')}",
    )
    journal.value_at = value_at
    step = new_row(
        DisputeStep,
        dispute=dispute,
        kind=kind,
        from_status=dispute.status,
        to_status=dispute.status,
        amount=amount,
        journal=journal,
        **actor.stamp("created_by"),
    )
    lines = []
    moves = [credit(into, amount, check=""), debit(out_of, amount, check="")]
    if line is not None:
        line_type, words = line
        cardholder = lock_accounts([dispute.account_id])[dispute.account_id]
        lines = statement_lines_new(
            lines=[Line(cardholder, line_type, amount, f"{words}: {_merchant(dispute)}")],
            currency=dispute.currency,
            journal=journal,
            authorization=dispute.authorization,
            merchant=dispute.authorization.merchant,
        )
        for statement_line in lines:
            statement_line.dispute = dispute
            statement_line.category = StatementLine.Category.DISPUTE
            statement_line.card = dispute.card
            statement_line.value_at = value_at
        if into == dispute.account_id:  # a credit: the account must not be closed
            moves[0] = credit(into, amount)
        else:  # the reversal: whatever the account has left
            moves[1] = debit(out_of, amount, check=FORCED)
    post(
        institution_id=dispute.institution_id,
        currency=dispute.currency,
        moves=moves,
        journal=journal,
        lines=lines,
    )
    step.save(force_insert=True)
    return step


def _merchant(dispute: Dispute) -> str:
    return dispute.authorization.merchant_name
