"""A dispute's stages (docs/disputes.md, "Stages"): what the issuer does (`dispute_transition`)
and what the network answers (`dispute_network_message`), each on the dispute's row locked
first, with its money (`money`) and its steps in the same transaction.

    draft ──submit──▶ submitted ──chargeback accepted (network)──▶ chargeback
      │                  │                                           │  │
      │ withdraw         │ withdraw, deny                            │  └─ close (won: nothing
      ▼                  ▼                                           │     was re-presented)
    closed            closed                  representment received (network)
                                                                     ▼
    closed ◀─accept the loss─ representment ──file──▶ prearbitration ──file (after a decline)──▶
                                                   │                                 arbitration
                              accepted (network): won ◀┘    ruling (network): won | lost ◀──┘

Every other move is 409 `invalid_state_transition` and changes nothing. A closed dispute's
outcome follows its liability split: `won` when all was recovered, `partly_won` when some was,
`lost` when none; `withdrawn` and `denied` are the issuer's own (the cardholder bears what is
open: its provisional credit reversed). Closing gives the authorization back what the cardholder
bears (`disputed_amount`), so that a merchant's later refund of it may credit them; what was
recovered or written off stays counted (a return after a won chargeback never credits twice).
"""

from django.db import transaction
from django.utils import timezone

from authorizations.locks import lock_authorization
from cards.models import CardProduct
from core.actors import Actor
from core.exceptions import AmountExceedsRemaining, InvalidStateTransition, ValidationFailed

from ..locks import lock_dispute
from ..models import Dispute, DisputeDeadline, DisputeStep
from . import money
from .deadlines import deadlines_met
from .records import emit, record_step

Status = Dispute.Status
Outcome = Dispute.Outcome
Deadline = DisputeDeadline.Name

# What the issuer accepts when it closes a dispute with something still open.
CARDHOLDER = "cardholder"  # its provisional credit is reversed
ISSUER = "issuer"  # written off
LIABILITIES = (CARDHOLDER, ISSUER)
PROVISIONALLY_CREDITED = "provisionally_credited"  # what a refused grant names (409's `to`)

# Network messages (the sandbox's `network` scope).
CHARGEBACK_ACCEPTED = "chargeback_accepted"
REPRESENTMENT_RECEIVED = "representment_received"
PREARBITRATION_RESPONSE = "prearbitration_response"
ARBITRATION_RULING = "arbitration_ruling"
NETWORK_MESSAGES = (
    CHARGEBACK_ACCEPTED,
    REPRESENTMENT_RECEIVED,
    PREARBITRATION_RESPONSE,
    ARBITRATION_RULING,
)


def dispute_transition(
    *,
    dispute: Dispute,
    to: str,
    actor: Actor,
    outcome: str | None = None,
    liability: str | None = None,
    reason: str = "",
) -> Dispute:
    """The issuer's move of `dispute` to the stage `to` (the module docstring): `submitted`;
    `prearbitration`, `arbitration` (filing); `closed` with `outcome` `withdrawn` or `denied`
    (from a draft or a submitted dispute), or with the loss accepted (from a representment or
    a pre-arbitration: `liability` `cardholder` or `issuer` says who bears what is open), or
    won (a chargeback nothing was re-presented against)."""
    with transaction.atomic(savepoint=False):
        dispute = lock_dispute(dispute.pk)
        before = dispute.status
        if to == Status.SUBMITTED and before == Status.DRAFT:
            dispute.status = Status.SUBMITTED
            dispute.submitted_at = timezone.now()
            record_step(dispute, DisputeStep.Kind.SUBMITTED, before, actor, reason)
            deadlines_met(dispute, Deadline.NETWORK_FILING)
            if _credits_at_submission(dispute) and not dispute.provisional_credit:
                _grant(dispute, actor)
        elif to == Status.PREARBITRATION and before == Status.REPRESENTMENT:
            dispute.status = Status.PREARBITRATION
            record_step(dispute, DisputeStep.Kind.PREARBITRATION_FILED, before, actor, reason)
        elif to == Status.ARBITRATION and before == Status.PREARBITRATION and _declined(dispute):
            dispute.status = Status.ARBITRATION
            record_step(dispute, DisputeStep.Kind.ARBITRATION_FILED, before, actor, reason)
        elif to == Status.CLOSED and outcome in (Outcome.WITHDRAWN, Outcome.DENIED):
            if before not in (Status.DRAFT, Status.SUBMITTED):
                raise _refused(dispute, to)
            money.cardholder_bears(dispute)
            _close(dispute, outcome, before, actor, reason)
        elif to == Status.CLOSED and outcome is None and before == Status.CHARGEBACK:
            if liability is not None:
                raise ValidationFailed(
                    details={"liability": "Nothing is open to bear: all was charged back."}
                )
            _close(dispute, _outcome_of(dispute), before, actor, reason)
        elif (
            to == Status.CLOSED
            and outcome is None
            and before
            in (
                Status.REPRESENTMENT,
                Status.PREARBITRATION,
            )
        ):
            if liability not in LIABILITIES:
                raise ValidationFailed(
                    details={"liability": f"Who bears what is open: one of {list(LIABILITIES)}."}
                )
            _bear(dispute, liability, actor)
            _close(dispute, _outcome_of(dispute), before, actor, reason)
        else:
            raise _refused(dispute, to)
        _save(dispute, before)
    return dispute


def dispute_network_message(
    *,
    dispute: Dispute,
    message: str,
    actor: Actor,
    amount: int | None = None,
    accepted: bool | None = None,
    in_favor_of_issuer: bool | None = None,
) -> Dispute:
    """What the network answers (the module docstring): `chargeback_accepted` (submitted →
    chargeback: what is disputed is recovered); `representment_received` (chargeback →
    representment: `amount`, at most what was recovered, default all of it, is open again);
    `prearbitration_response` (`accepted`: the merchant gives up what it re-presented, and the
    dispute closes; declined, the issuer may file arbitration); `arbitration_ruling`
    (`in_favor_of_issuer`: recovered, else the cardholder bears what is open; either way it
    closes)."""
    with transaction.atomic(savepoint=False):
        dispute = lock_dispute(dispute.pk)
        before = dispute.status
        if message == CHARGEBACK_ACCEPTED and before == Status.SUBMITTED:
            dispute.status = Status.CHARGEBACK
            money.chargeback(dispute, actor)
        elif message == REPRESENTMENT_RECEIVED and before == Status.CHARGEBACK:
            amount = dispute.recovered if amount is None else amount
            if amount > dispute.recovered:
                raise AmountExceedsRemaining(
                    details={"amount": amount, "remaining": dispute.recovered}
                )
            dispute.status = Status.REPRESENTMENT
            money.representment(dispute, amount, actor)
        elif message == PREARBITRATION_RESPONSE and before == Status.PREARBITRATION:
            if _declined(dispute):  # answered already: the issuer's move now
                raise _refused(dispute, message)
            if accepted:
                money.recover(dispute, DisputeStep.Kind.PREARBITRATION_ACCEPTED, actor)
                _close(dispute, _outcome_of(dispute), before, actor)
            else:
                record_step(dispute, DisputeStep.Kind.PREARBITRATION_DECLINED, before, actor)
        elif message == ARBITRATION_RULING and before == Status.ARBITRATION:
            if in_favor_of_issuer:
                money.recover(dispute, DisputeStep.Kind.ARBITRATION_WON, actor)
            else:
                record_step(dispute, DisputeStep.Kind.ARBITRATION_LOST, before, actor)
                money.cardholder_bears(dispute)
            _close(dispute, _outcome_of(dispute), before, actor)
        else:
            raise _refused(dispute, message)
        _save(dispute, before)
    return dispute


def dispute_expire(dispute: Dispute, actor: Actor) -> None:
    """A draft past its network filing deadline (the deadline job, `watch`, the dispute's row
    locked): it can no longer be filed, and closes `expired`, the cardholder bearing it (no
    credit was given to a draft)."""
    before = dispute.status
    money.cardholder_bears(dispute)
    _close(dispute, Outcome.EXPIRED, before, actor, "The network's filing deadline passed.")
    _save(dispute, before)


def dispute_grant_provisional_credit(
    *, dispute: Dispute, actor: Actor, reason: str = ""
) -> Dispute:
    """Credit the cardholder provisionally now, apart from the stages (staff, before a product
    crediting `by_deadline` would, or a draft not yet filed): an open dispute not credited yet;
    409 `invalid_state_transition` otherwise. Meets the `provisional_credit` deadline; emits
    `dispute.updated` (`changedFields: [provisionalCredit]`)."""
    with transaction.atomic(savepoint=False):
        dispute = lock_dispute(dispute.pk)
        if dispute.status == Status.CLOSED or dispute.provisional_credit:
            raise InvalidStateTransition(
                f"A {dispute.status} dispute "
                + ("that is closed" if dispute.status == Status.CLOSED else "credited already")
                + " cannot be credited provisionally.",
                from_state=dispute.status,
                to_state=PROVISIONALLY_CREDITED,
            )
        _grant(dispute, actor, reason)
        dispute.updated_at = timezone.now()
        dispute.save(update_fields=["provisional_credit", "updated_at"])
        emit(dispute, "dispute.updated", {"changed_fields": ["provisional_credit"]})
    return dispute


def dispute_credit_by_deadline(dispute: Dispute, actor: Actor) -> bool:
    """The deadline job, on a `provisional_credit` deadline's day, the dispute's row locked: a
    product crediting `by_deadline` credits an open dispute not credited yet. Whether it did."""
    if (
        dispute.status == Status.CLOSED
        or dispute.provisional_credit
        or _credits_at_submission(dispute)
    ):
        return False
    dispute_grant_provisional_credit(
        dispute=dispute, actor=actor, reason="The policy's provisional credit deadline."
    )
    return True


def dispute_reverse_held(dispute: Dispute, actor: Actor) -> None:
    """The deadline job, the day after a held reversal's notice ran out, the dispute's row
    locked: take the credit back (`money.reverse_provisional_credit`)."""
    money.reverse_provisional_credit(dispute, actor)
    dispute.updated_at = timezone.now()
    dispute.save(
        update_fields=["provisional_credit", "provisional_credit_reverses_on", "updated_at"]
    )


def _credits_at_submission(dispute: Dispute) -> bool:
    return (
        dispute.card.product.dispute_provisional_credit
        == CardProduct.ProvisionalCredit.AT_SUBMISSION
    )


def _grant(dispute: Dispute, actor: Actor, reason: str = "") -> None:
    money.grant_provisional_credit(dispute, actor, reason)
    deadlines_met(dispute, Deadline.PROVISIONAL_CREDIT)


def _notify_reversal(dispute: Dispute) -> None:
    """The notice of a held reversal: its amount, and `provisionalCreditReversesOn`, the
    notice's last day (the reversal is posted the day after)."""
    emit(
        dispute,
        "dispute.provisional_credit_reversal_scheduled",
        {"reversal_amount": money.owed_back(dispute)},
    )


def _declined(dispute: Dispute) -> bool:
    """Whether the network declined the dispute's pre-arbitration (its last step says so)."""
    last = dispute.steps.order_by("-id").values_list("kind", flat=True).first()
    return last == DisputeStep.Kind.PREARBITRATION_DECLINED


def _bear(dispute: Dispute, liability: str, actor: Actor) -> None:
    if liability == CARDHOLDER:
        money.cardholder_bears(dispute)
    else:
        money.write_off(dispute, actor)


def _outcome_of(dispute: Dispute) -> str:
    if dispute.recovered == dispute.amount:
        return Outcome.WON
    return Outcome.PARTLY_WON if dispute.recovered else Outcome.LOST


def _close(dispute: Dispute, outcome: str, before: str, actor: Actor, reason: str = "") -> None:
    """Closed with `outcome`: the cardholder's money settled (`money.settle`: what they do not
    keep taken back, at once or after the policy's notice; what they keep credited), and what
    they bear no longer counts as disputed on its authorization (a merchant's refund of it may
    come)."""
    money.settle(dispute, actor)
    dispute.status = Status.CLOSED
    dispute.outcome = outcome
    dispute.resolution_reason = reason[:300]
    dispute.closed_at = timezone.now()
    if dispute.cardholder_liable:
        authorization = lock_authorization(dispute.authorization_id)
        authorization.disputed_amount -= dispute.cardholder_liable
        authorization.save(update_fields=["disputed_amount"])
    record_step(dispute, DisputeStep.Kind.CLOSED, before, actor, reason)
    deadlines_met(dispute)


def _save(dispute: Dispute, before: str) -> None:
    dispute.updated_at = timezone.now()
    dispute.save(
        update_fields=[
            "status",
            "outcome",
            "resolution_reason",
            "submitted_at",
            "closed_at",
            "provisional_credit",
            "provisional_credit_reverses_on",
            "recovered",
            "cardholder_liable",
            "written_off",
            "remaining",
            "updated_at",
        ]
    )
    if dispute.status != before:
        emit(dispute, "dispute.stage_changed", {"from": before, "to": dispute.status})
    if dispute.status == Status.CLOSED:
        emit(dispute, "dispute.closed")
        if dispute.provisional_credit_reverses_on:
            _notify_reversal(dispute)


def _refused(dispute: Dispute, to: str) -> InvalidStateTransition:
    return InvalidStateTransition(
        f"A {dispute.status} dispute cannot move to {to}.", from_state=dispute.status, to_state=to
    )
