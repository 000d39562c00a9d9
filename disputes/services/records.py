"""What every move of a dispute writes besides its money: its step (the dispute's history) and
its event."""

from core.actors import Actor
from core.rows import new_row
from events.services import emit_for

from ..models import Dispute, DisputeStep


def record_step(
    dispute: Dispute, kind: str, from_status: str, actor: Actor, reason: str = ""
) -> DisputeStep:
    """A step with no money of its own: the dispute's stage `from_status` → its status now."""
    step = new_row(
        DisputeStep,
        dispute=dispute,
        kind=kind,
        from_status=from_status,
        to_status=dispute.status,
        reason=reason,
        **actor.stamp("created_by"),
    )
    step.save(force_insert=True)
    return step


def emit(dispute: Dispute, event_type: str, extra: dict | None = None) -> None:
    data = {
        "authorization_id": dispute.authorization_id,
        "card_id": dispute.card_id,
        "account_id": dispute.account_id,
        "amount": dispute.amount,
        "currency": dispute.currency,
        "reason": dispute.reason,
        "status": dispute.status,
        "outcome": dispute.outcome or None,
        "provisional_credit": dispute.provisional_credit,
        "provisional_credit_reverses_on": (
            dispute.provisional_credit_reverses_on.isoformat()
            if dispute.provisional_credit_reverses_on
            else None
        ),
        "recovered": dispute.recovered,
        "cardholder_liable": dispute.cardholder_liable,
        "written_off": dispute.written_off,
        "remaining": dispute.remaining,
        **(extra or {}),
    }
    emit_for(dispute, event_type, data=data, institution=dispute.institution)
