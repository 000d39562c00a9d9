"""What staff do to approval requests: the second staff user's decision (docs/back-office.md,
"Four eyes"). Approving runs the real service as the approver, in the approval's transaction;
nobody decides their own request (the service refuses it, and the database). And the bank's
administrators set and remove the thresholds up to which one staff user acts alone."""

from backoffice.actions.base import Confirmation, Reason, StaffAction
from backoffice.actions.forms import FormWrite
from backoffice.actions.four_eyes import asked_for
from backoffice.forms import APPROVAL_REASON_HELP
from backoffice.models import ApprovalRequest, ApprovalThreshold
from backoffice.services.approvals import approval_approve, approval_reject
from backoffice.services.thresholds import approval_threshold_remove, approval_threshold_set


def _decide(name: str, label: str, verb: str, service) -> StaffAction:
    """A decision of requests: each decided (or refused, alone: one's own, decided already, the
    change refused), with the decider's reason."""
    return StaffAction(
        name=name,
        label=label,
        model=ApprovalRequest,
        service=service,
        arguments=lambda approval, asked: {"approval": approval, "reason": asked.reason},
        reason=Reason(help_text=APPROVAL_REASON_HELP),
        confirmation=Confirmation(
            template="admin/backoffice/approvalrequest/decide_confirmation.html",
            title=f"{verb}: approval requests",
            submit=f"{verb} {{n}} request(s)",
            rows=lambda approval: {"approval": approval, "asked_for": asked_for(approval)},
            context={"label": verb},
        ),
        select_related=("requested_by",),
        # A pending request, and not the user's own: nobody decides what they asked for.
        applies=lambda approval, user: (
            approval.status == ApprovalRequest.Status.PENDING
            and approval.requested_by_id != user.pk
        ),
        verb=verb,
        history=lambda outcome, asked: (
            f"{verb} ({asked_for(outcome.value)}"
            + (f", made {outcome.value.result_id}" if outcome.value.result_id else "")
            + f"; admin action “{verb}”; reason: “{asked.reason}”)."
        ),
        done=f"{verb}: {{n}} request(s).",
        already="Left as they were: {ids}.",
    )


approve_requests = _decide(
    "approve_requests",
    "Approve selected requests (the change is made now)",
    "Approve",
    approval_approve,
)
reject_requests = _decide(
    "reject_requests", "Reject selected requests (nothing moves)", "Reject", approval_reject
)


# --- Thresholds: one at a time, from its own page ---------------------------------------------
# What a threshold is about (institution, kind, currency) stays once made; its amounts change.
set_threshold = FormWrite(
    page="add and change forms",
    model=ApprovalThreshold,
    service=approval_threshold_set,
    arguments=lambda saving: {
        "institution": saving.obj.institution,
        "kind": saving.obj.kind,
        "currency": saving.obj.currency,
        "up_to": saving.data["up_to"],
        "daily_up_to": saving.data["daily_up_to"],
    },
)
remove_threshold = FormWrite(
    page="delete page",
    model=ApprovalThreshold,
    service=approval_threshold_remove,
    arguments=lambda saving: {"threshold": saving.obj},
)
