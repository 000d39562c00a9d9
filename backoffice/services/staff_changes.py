"""What a staff user's change of money becomes: made at once, or asked for (docs/back-office.md,
"Four eyes").

Each change of money a staff user makes in the back office goes through one of these. It is made
at once, by the staff user alone, when it takes no risk or stays within the institution's
threshold (`ApprovalThreshold`) for its kind and currency; otherwise it becomes an
`ApprovalRequest` that a second staff user decides (`backoffice.services.approvals`). With no
threshold set, every one waits for a second user: that is the default a new institution has.

- an adjustment (a load or an unload): alone when its amount is within the threshold;
- a fee waiver: alone when the fee's amount is;
- an overdraft limit: a lower one at once; a raise alone when the new limit is;
- card limits: lower ones at once; a raise alone when every limit raised is, new value against
  the threshold (one request for the whole change otherwise);
- a PIN unblock: alone while the card's chain was unblocked fewer times than the threshold in
  the API cap's rolling window (`cards.services.pin.UNBLOCK_WINDOW`), counted under the card's
  lock, every unblock counted whoever made it.

Made at once, the change is the real service's, run as the staff user: its own events name them
(docs/events.md), and the admin history keeps the reason. A threshold is per change, not a sum
over a day: splitting a change stays visible in the history, and is the approvers' to notice.
"""

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from accounts.models import Account, Fee
from accounts.services import account_set_overdraft_limit, adjustment_create, fee_waive
from cards.locks import lock_card
from cards.models import Card, PinUnblock
from cards.services import card_limits_set
from cards.services.pin import UNBLOCK_WINDOW
from core.actors import Actor
from core.exceptions import BusinessRuleViolation
from core.operations import Outcome, changed, unchanged

from ..models import ApprovalRequest, ApprovalThreshold
from .approvals import (
    approval_request_adjustment,
    approval_request_card_limits_raise,
    approval_request_fee_waiver,
    approval_request_overdraft_raise,
    approval_request_pin_unblock,
    checked_adjustment,
    checked_card_limits,
    checked_limit,
    checked_reason,
    pin_unblocked,
    raised_limits,
)


@dataclass(frozen=True)
class StaffChange:
    """A change asked for (`approval`, waiting for a second staff user), or made at once
    (`approval` None; `made`, the id of what was made or changed)."""

    approval: ApprovalRequest | None
    made: str = ""

    @property
    def asked(self) -> bool:
        return self.approval is not None


def threshold(institution_id: str, kind: str, currency: str = "") -> int | None:
    """The institution's threshold of `kind` in `currency`; None where it has none."""
    return (
        ApprovalThreshold.objects.filter(
            institution_id=institution_id, kind=kind, currency=currency
        )
        .values_list("up_to", flat=True)
        .first()
    )


def _alone(institution_id: str, kind: str, currency: str, amount: int) -> bool:
    up_to = threshold(institution_id, kind, currency)
    return up_to is not None and amount <= up_to


def staff_adjust(
    *,
    account: Account,
    direction: str,
    amount: int,
    description: str = "",
    reason: str,
    actor: Actor,
) -> StaffChange:
    """A load or an unload: `adjustment_create` at once within the threshold, else asked."""
    reason = checked_reason(reason)
    description = checked_adjustment(account, direction, amount, description)
    kind = ApprovalRequest.Kind.ADJUSTMENT
    if _alone(account.institution_id, kind, account.currency, amount):
        adjustment = adjustment_create(
            account=account,
            direction=direction,
            amount=amount,
            currency=account.currency,
            description=description,
            actor=actor,
        )
        return StaffChange(approval=None, made=adjustment.pk)
    return StaffChange(
        approval=approval_request_adjustment(
            account=account,
            direction=direction,
            amount=amount,
            description=description,
            reason=reason,
            actor=actor,
        )
    )


def staff_waive_fee(*, fee: Fee, reason: str, actor: Actor) -> StaffChange:
    """A fee waiver: `fee_waive` at once within the threshold, else asked."""
    reason = checked_reason(reason)
    if _alone(fee.institution_id, ApprovalRequest.Kind.FEE_WAIVER, fee.currency, fee.amount):
        return StaffChange(
            approval=None, made=fee_waive(fee=fee, user=actor.user, reason=reason).value.pk
        )
    return StaffChange(approval=approval_request_fee_waiver(fee=fee, reason=reason, actor=actor))


def staff_set_overdraft_limit(
    *, account: Account, limit: int, reason: str, actor: Actor
) -> Outcome[StaffChange]:
    """A new overdraft limit: a lower one set at once, a raise at once within the threshold,
    else asked. The limit it has already changes nothing."""
    reason = checked_reason(reason)
    limit = checked_limit(limit, "overdraft_limit")
    if account.is_internal:
        raise BusinessRuleViolation(
            "An internal account has no overdraft limit.", details={"account_id": account.pk}
        )
    if limit == account.overdraft_limit:
        return unchanged(StaffChange(approval=None))
    kind = ApprovalRequest.Kind.OVERDRAFT_RAISE
    if limit < account.overdraft_limit or _alone(
        account.institution_id, kind, account.currency, limit
    ):
        outcome = account_set_overdraft_limit(account=account, limit=limit)
        return changed(StaffChange(approval=None, made=outcome.value.pk))
    return changed(
        StaffChange(
            approval=approval_request_overdraft_raise(
                account=account, limit=limit, reason=reason, actor=actor
            )
        )
    )


def staff_set_card_limits(
    *, card: Card, changes: dict, reason: str, actor: Actor
) -> Outcome[StaffChange]:
    """New card limits: set at once when none is raised or every raised one is within the
    threshold, else the whole change asked. Limits as they are change nothing."""
    reason = checked_reason(reason)
    changes = checked_card_limits(changes)
    changes = {field: value for field, value in changes.items() if getattr(card, field) != value}
    if not changes:
        return unchanged(StaffChange(approval=None))
    raised = raised_limits(card, changes)
    kind = ApprovalRequest.Kind.CARD_LIMITS_RAISE
    currency = card.account.currency
    if not raised or _alone(card.institution_id, kind, currency, max(raised.values())):
        return changed(
            StaffChange(approval=None, made=card_limits_set(card=card, changes=changes).pk)
        )
    return changed(
        StaffChange(
            approval=approval_request_card_limits_raise(
                card=card, changes=changes, reason=reason, actor=actor
            )
        )
    )


def staff_unblock_pin(*, card: Card, reason: str, actor: Actor) -> Outcome[StaffChange]:
    """A PIN unblock: at once while the card's chain was unblocked fewer times than the
    threshold in the window, else asked. A PIN that is not blocked changes nothing."""
    reason = checked_reason(reason)
    with transaction.atomic(savepoint=False):
        # The card's lock serializes the count with every other unblock of its chain.
        card = lock_card(card.pk)
        if not card.pin_blocked:
            return unchanged(StaffChange(approval=None))
        up_to = threshold(card.institution_id, ApprovalRequest.Kind.PIN_UNBLOCK)
        recent = PinUnblock.objects.filter(
            lineage_id=card.lineage_root_id, created_at__gt=timezone.now() - UNBLOCK_WINDOW
        ).count()
        if up_to is not None and recent < up_to:
            return changed(StaffChange(approval=None, made=pin_unblocked(card, reason, actor)))
        return changed(
            StaffChange(
                approval=approval_request_pin_unblock(card=card, reason=reason, actor=actor)
            )
        )
