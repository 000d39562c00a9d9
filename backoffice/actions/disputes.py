"""What staff do to disputes: move them through their stages (docs/disputes.md, "Back office").

Each move goes through the stages' services as the API does (its locks, its money, its events,
the staff user as the actor), with a reason written on the dispute's step and in the admin
history. A move the dispute's stage does not allow is refused for that dispute alone (409).
"""

from backoffice.actions.base import Confirmation, Reason, StaffAction
from backoffice.actions.cases import case_actions
from core.money import money
from disputes.models import Dispute
from disputes.services.stages import (
    CARDHOLDER,
    ISSUER,
    dispute_grant_provisional_credit,
    dispute_transition,
)

# The dispute step's reason.
MAX_REASON = 300
REASON = Reason(
    max_length=MAX_REASON,
    help_text="Why (what was checked, what was decided): kept on the dispute's step, shown to "
    "the institution through the API and written in the admin history.",
)


Status = Dispute.Status
# The stages each move starts from (disputes.services.stages: every other is refused).
FILED_OR_NOT = (Status.DRAFT, Status.SUBMITTED)
RE_PRESENTED = (Status.REPRESENTMENT, Status.PREARBITRATION)


def _move(name: str, label: str, verb: str, service, applies, **move) -> StaffAction:
    """A move of disputes: `service(dispute=..., reason=..., **move)` (the stage `to`, an
    `outcome`, a `liability`), as the staff user; offered where `applies(dispute)`."""
    return StaffAction(
        name=name,
        label=label,
        model=Dispute,
        service=service,
        arguments=lambda dispute, asked: {"dispute": dispute, "reason": asked.reason, **move},
        reason=REASON,
        confirmation=Confirmation(
            template="admin/disputes/dispute/move_confirmation.html",
            title=f"{verb}: disputes",
            submit=f"{verb}: {{n}} dispute(s)",
            rows=lambda dispute: {
                "dispute": dispute,
                "amount": money(dispute.amount, dispute.currency),
                "provisional_credit": money(dispute.provisional_credit, dispute.currency),
                "remaining": money(dispute.remaining, dispute.currency),
            },
        ),
        verb=verb,
        history=lambda outcome, asked: f"{verb} (admin action; reason: “{asked.reason}”).",
        done=f"{verb}: {{n}} dispute(s).",
        already="Left as they were: {ids}.",
        applies=lambda dispute, user: applies(dispute),
    )


submit = _move(
    "submit",
    "Submit (credits the cardholder provisionally, unless the product credits by the deadline)",
    "Submit",
    dispute_transition,
    lambda dispute: dispute.status == Status.DRAFT,
    to=Dispute.Status.SUBMITTED,
)
grant_credit = _move(
    "grant_credit",
    "Grant the provisional credit now",
    "Grant the provisional credit",
    dispute_grant_provisional_credit,
    lambda dispute: dispute.status != Status.CLOSED and not dispute.provisional_credit,
)
deny = _move(
    "deny",
    "Deny (reverses the provisional credit)",
    "Deny",
    dispute_transition,
    lambda dispute: dispute.status in FILED_OR_NOT,
    to="closed",
    outcome=Dispute.Outcome.DENIED,
)
withdraw = _move(
    "withdraw",
    "Withdraw (reverses the provisional credit)",
    "Withdraw",
    dispute_transition,
    lambda dispute: dispute.status in FILED_OR_NOT,
    to="closed",
    outcome=Dispute.Outcome.WITHDRAWN,
)
write_off = _move(
    "write_off",
    "Accept the loss: write it off",
    "Write off",
    dispute_transition,
    lambda dispute: dispute.status in RE_PRESENTED,
    to="closed",
    liability=ISSUER,
)
cardholder_bears = _move(
    "cardholder_bears",
    "Accept the loss: the cardholder bears it (reverses that much credit)",
    "Cardholder bears",
    dispute_transition,
    lambda dispute: dispute.status in RE_PRESENTED,
    to="closed",
    liability=CARDHOLDER,
)

# Case work: a note, an assignment (`backoffice.actions.cases`; docs/back-office.md, "Case work").
note_disputes, take_disputes, assign_disputes = case_actions(model=Dispute, noun="dispute")
