"""Four eyes where money moves (docs/back-office.md, "Four eyes"): a maker–checker flow.

A staff user never moves money alone in the back office. They ask (`approval_request_adjustment`,
`approval_request_fee_waiver`): a pending `ApprovalRequest` with their reason, and
`approval.requested`. Another staff user decides:

- `approval_approve` locks the request, finds it still pending and not their own, and runs the
  real service as the approver, in the same transaction: `adjustment_create` (a load or an
  unload) or `fee_waive` (the request's reason is the waiver's). A refusal of that service
  (422 `insufficient_funds`, `account_not_active`, 409 the fee waived meanwhile...) undoes the
  whole approval: the request stays pending and the refusal says why. Approved, the request
  keeps the id of what it made; `approval.approved`.
- `approval_reject`: nothing moves; `approval.rejected`.

Nobody decides their own request: refused here (403 `permission_denied`), and by the database
(CHECK `approval_decider_not_requester`) whatever writes the row. Each decision needs a reason.
Every event names its staff user (the current actor: docs/events.md).
"""

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import Account, Adjustment, Fee
from accounts.services import adjustment_create, fee_waive
from core.actors import Actor
from core.exceptions import (
    AlreadyExists,
    BusinessRuleViolation,
    InvalidStateTransition,
    PermissionDenied,
    ValidationFailed,
)
from core.money import MAX_AMOUNT
from core.operations import Outcome, changed
from events.services import emit_for

from ..locks import lock_approval_request
from ..models import ApprovalRequest

MAX_REASON_LENGTH = 500
MAX_DESCRIPTION_LENGTH = 500


def _staff_user(actor: Actor):
    if actor.user is None:
        raise PermissionDenied("Only a staff user asks for or decides an approval request.")
    return actor.user


def _reason(reason, field: str = "reason") -> str:
    reason = reason.strip() if isinstance(reason, str) else ""
    if not reason:
        raise ValidationFailed("A reason is required.", details={field: "This field is required."})
    if len(reason) > MAX_REASON_LENGTH:
        raise ValidationFailed(details={field: f"At most {MAX_REASON_LENGTH} characters."})
    return reason


def approval_data(approval: ApprovalRequest) -> dict:
    """The data of the approval's events."""
    return {
        "kind": approval.kind,
        "target_id": approval.target_id,
        "amount": approval.amount,
        "currency": approval.currency,
        "status": approval.status,
        "requested_by": str(approval.requested_by_id),
        "decided_by": None if approval.decided_by_id is None else str(approval.decided_by_id),
        "result_id": approval.result_id or None,
    }


def _create(approval: ApprovalRequest) -> ApprovalRequest:
    with transaction.atomic(savepoint=False):
        approval.save(force_insert=True)
        emit_for(approval, "approval.requested", data=approval_data(approval))
    return approval


def approval_request_adjustment(
    *,
    account: Account,
    direction: str,
    amount: int,
    description: str = "",
    reason: str,
    actor: Actor,
) -> ApprovalRequest:
    """Ask for a load (`credit`) or an unload (`debit`) of `amount` minor units of the account's
    currency (the account's, as `adjustment_create` posts it), with the staff user's `reason`.
    Nothing moves until another staff user approves. 400 for a direction, an amount, a
    description or a reason that is not one; 422 `business_rule_violation` for an internal account
    (it carries the institution's side of every journal: never adjusted by staff). Funds and
    the account's status are checked when approved, against the balance then."""
    user = _staff_user(actor)
    reason = _reason(reason)
    if direction not in Adjustment.Direction.values:
        raise ValidationFailed(details={"direction": "credit or debit."})
    if not isinstance(amount, int) or isinstance(amount, bool) or not 0 < amount <= MAX_AMOUNT:
        raise ValidationFailed(details={"amount": f"An integer from 1 to {MAX_AMOUNT}."})
    description = (description or "").strip()
    if len(description) > MAX_DESCRIPTION_LENGTH:
        raise ValidationFailed(
            details={"description": f"At most {MAX_DESCRIPTION_LENGTH} characters."}
        )
    if account.is_internal:
        raise BusinessRuleViolation(
            "An internal account is not adjusted by staff.", details={"account_id": account.pk}
        )
    return _create(
        ApprovalRequest(
            institution_id=account.institution_id,
            kind=ApprovalRequest.Kind.ADJUSTMENT,
            target_id=account.pk,
            parameters={
                "direction": direction,
                "amount": amount,
                "currency": account.currency,
                "description": description,
            },
            amount=amount,
            currency=account.currency,
            requested_by=user,
            request_reason=reason,
        )
    )


def approval_request_fee_waiver(*, fee: Fee, reason: str, actor: Actor) -> ApprovalRequest:
    """Ask for `fee` to be waived, with the staff user's `reason` (the waiver's reason once
    approved). 409 `invalid_state_transition` for a fee that is not charged; 409
    `already_exists` when a waiver of it is already waiting (a partial unique index)."""
    user = _staff_user(actor)
    reason = _reason(reason)
    if fee.status != Fee.Status.CHARGED:
        raise InvalidStateTransition(
            f"The fee is {fee.status}: only a charged fee can be waived.",
            from_state=fee.status,
            to_state=Fee.Status.WAIVED,
        )
    approval = ApprovalRequest(
        institution_id=fee.institution_id,
        kind=ApprovalRequest.Kind.FEE_WAIVER,
        target_id=fee.pk,
        amount=fee.amount,
        currency=fee.currency,
        requested_by=user,
        request_reason=reason,
    )
    try:
        with transaction.atomic():
            return _create(approval)
    except IntegrityError as error:
        if "approval_one_pending_waiver" not in str(error):
            raise
        raise AlreadyExists(
            "A waiver of this fee is already waiting for approval.", details={"fee_id": fee.pk}
        ) from None


def _decidable(approval: ApprovalRequest, user, to_state: str) -> ApprovalRequest:
    """The request, locked, when `user` may decide it now."""
    approval = lock_approval_request(approval.pk)
    if approval.requested_by_id == user.pk:
        raise PermissionDenied(
            "You asked for this change: another staff user must approve or reject it."
        )
    if approval.status != ApprovalRequest.Status.PENDING:
        raise InvalidStateTransition(
            f"The request is {approval.status} already.",
            from_state=approval.status,
            to_state=to_state,
        )
    return approval


def _decide(approval: ApprovalRequest, user, status: str, reason: str, result_id: str = ""):
    approval.status = status
    approval.decided_by = user
    approval.decided_at = approval.updated_at = timezone.now()
    approval.decision_reason = reason
    approval.result_id = result_id
    approval.save(
        update_fields=[
            "status",
            "decided_by",
            "decided_at",
            "decision_reason",
            "result_id",
            "updated_at",
        ]
    )


def _carry_out(approval: ApprovalRequest, actor: Actor) -> str:
    """Run the real service as the approver; the id of what it made."""
    if approval.kind == ApprovalRequest.Kind.ADJUSTMENT:
        account = Account.objects.select_related("institution").get(
            pk=approval.target_id, institution_id=approval.institution_id
        )
        parameters = approval.parameters
        adjustment = adjustment_create(
            account=account,
            direction=parameters["direction"],
            amount=parameters["amount"],
            currency=parameters["currency"],
            description=parameters["description"],
            actor=actor,
        )
        return adjustment.pk
    fee = Fee.objects.get(pk=approval.target_id, institution_id=approval.institution_id)
    return fee_waive(fee=fee, user=actor.user, reason=approval.request_reason).value.pk


def approval_approve(
    *, approval: ApprovalRequest, reason: str, actor: Actor
) -> Outcome[ApprovalRequest]:
    """Approve a pending request of another staff user and carry it out, as `actor`, in one
    transaction (the request locked first: docs/money.md, "Locking"). 403 `permission_denied`
    for one's own request; 409 `invalid_state_transition` once decided; a refusal of the real
    service (422 `insufficient_funds`, ...) is raised as it is and leaves the request pending."""
    user = _staff_user(actor)
    reason = _reason(reason)
    with transaction.atomic(savepoint=False):
        approval = _decidable(approval, user, ApprovalRequest.Status.APPROVED)
        result_id = _carry_out(approval, actor)
        _decide(approval, user, ApprovalRequest.Status.APPROVED, reason, result_id)
        emit_for(approval, "approval.approved", data=approval_data(approval))
    return changed(approval, ApprovalRequest.Status.PENDING)


def approval_reject(
    *, approval: ApprovalRequest, reason: str, actor: Actor
) -> Outcome[ApprovalRequest]:
    """Reject a pending request of another staff user: nothing moves. 403 `permission_denied`
    for one's own request; 409 `invalid_state_transition` once decided."""
    user = _staff_user(actor)
    reason = _reason(reason)
    with transaction.atomic(savepoint=False):
        approval = _decidable(approval, user, ApprovalRequest.Status.REJECTED)
        _decide(approval, user, ApprovalRequest.Status.REJECTED, reason)
        emit_for(approval, "approval.rejected", data=approval_data(approval))
    return changed(approval, ApprovalRequest.Status.PENDING)
