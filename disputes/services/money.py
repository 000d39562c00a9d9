"""A dispute's money (docs/disputes.md, "Money"): each step one balanced journal against the
institution's `dispute_clearing` account, written with its `DisputeStep`, and the dispute's
liability split moved with it (PostgreSQL keeps the split whole: `dispute_liability_split`).

- provisional credit: dispute clearing → cardholder (a `CashInc` line); the split unchanged;
- chargeback: card clearing → dispute clearing; remaining → recovered;
- representment: dispute clearing → card clearing; recovered → remaining;
- recovered again (pre-arbitration accepted, arbitration won): card clearing → dispute
  clearing; remaining → recovered;
- the cardholder bears what is open: remaining → cardholder liable, and what they were credited
  beyond what they keep is reversed: cardholder → dispute clearing (a `CashDec` line), at once,
  or after the dispute policy's notice (Reg E: five business days), posted by the deadline job;
- at the close, what the cardholder keeps and was not credited yet (a product crediting
  `by_deadline`, closed before its deadline): dispute clearing → cardholder (a `CashInc` line);
- write-off: dispute losses → dispute clearing; remaining → written off.

The reversal takes the credit back whatever the account has left (`posting.FORCED`, as the
network's own messages: the cardholder may have spent it); what it takes beyond the account's
available is its `network_overdraft`, paid back first by what comes in (docs/overdraft.md). Every
function runs in the caller's transaction, the dispute's row locked first.
"""

from django.utils import timezone

from accounts.locks import lock_accounts
from accounts.models import Account, Entry, Journal, StatementLine
from accounts.posting import FORCED, credit, debit, journal_new, post
from accounts.services import internal_account
from accounts.statement_lines import Line, statement_lines_new
from core.actors import Actor
from core.rows import new_row
from institutions.calendar import business_days_after, local_date

from ..models import Dispute, DisputeStep
from .deadlines import REVERSAL_NOTICE
from .records import record_step


def grant_provisional_credit(dispute: Dispute, actor: Actor, reason: str = "") -> DisputeStep:
    """Credit the cardholder what is disputed, from dispute clearing (an open dispute not
    credited yet)."""
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
        reason=reason,
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


def cardholder_bears(dispute: Dispute) -> None:
    """What is open is the cardholder's (the close, `settle`, takes back the credit it
    covered)."""
    dispute.cardholder_liable += dispute.remaining
    dispute.remaining = 0


def settle(dispute: Dispute, actor: Actor) -> None:
    """A dispute closing: the cardholder ends with what they keep (`recovered + written_off`).
    What they were credited beyond it is taken back at once or, under a policy with a notice
    (`deadlines.REVERSAL_NOTICE`: Reg E's five business days), held until the notice has run
    (`reversal_hold`); what they keep and were not credited yet is credited (`credit_owed`)."""
    if owed_back(dispute):
        notice = REVERSAL_NOTICE[dispute.card.product.dispute_policy]
        if notice:
            reversal_hold(dispute, notice, actor)
        else:
            reverse_provisional_credit(dispute, actor)
    else:
        credit_owed(dispute, actor)


def owed_back(dispute: Dispute) -> int:
    """What the cardholder was credited beyond what they may keep (all but what they bear)."""
    return max(0, dispute.provisional_credit - (dispute.amount - dispute.cardholder_liable))


def reversal_hold(dispute: Dispute, notice: int, actor: Actor) -> DisputeStep:
    """The cardholder is told that what is owed back will be taken after `notice` business days
    of the institution's calendar from today: `provisional_credit_reverses_on`, the last of
    them, the deadline job posting the reversal the day after (`reverse_provisional_credit`).
    The close emits `dispute.provisional_credit_reversal_scheduled`: the notice a program sends
    the cardholder."""
    institution = dispute.institution
    today = local_date(institution, timezone.now())
    dispute.provisional_credit_reverses_on = business_days_after(institution, today, notice)
    return record_step(dispute, DisputeStep.Kind.REVERSAL_NOTICE, dispute.status, actor)


def reverse_provisional_credit(dispute: Dispute, actor: Actor) -> DisputeStep | None:
    """Take back what the cardholder was credited beyond what they keep: cardholder → dispute
    clearing, whatever the account has left (`FORCED`)."""
    amount = owed_back(dispute)
    dispute.provisional_credit_reverses_on = None
    if not amount:
        return None
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
    return step


def credit_owed(dispute: Dispute, actor: Actor) -> DisputeStep | None:
    """At the close: what the cardholder keeps (recovered or written off) and was not credited
    yet (a product crediting `by_deadline`, closed before the deadline), credited now,
    value-dated as the provisional credit."""
    amount = dispute.recovered + dispute.written_off - dispute.provisional_credit
    if amount <= 0:
        return None
    step = _move(
        dispute,
        DisputeStep.Kind.CREDIT,
        amount,
        into=dispute.account_id,
        out_of=_internal(dispute, Account.InternalCode.DISPUTE_CLEARING),
        line=(StatementLine.Type.CASH_INC, "Dispute credit"),
        actor=actor,
        value_at=_debited_at(dispute),
    )
    dispute.provisional_credit += amount
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
    reason: str = "",
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
        reason=reason[:300],
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
