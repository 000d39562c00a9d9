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
(docs/events.md), and the admin history keeps the reason.

**Four eyes that cannot be sliced.** A change that moves money (an adjustment, a fee waiver) is
made alone only while the same user's alone-made changes of that kind **to that target** over
the last 24 hours, this one included, stay within the threshold, and their alone-made changes of
that kind and currency **to every target together** within the daily total (`daily_up_to`,
else the threshold itself: a new institution starts strict). A PIN unblock is counted per card
chain already (whoever made them); where the institution sets a daily total for it, the user's
alone-made unblocks in 24 hours, this one included, stay within it. Otherwise it is asked. A
limit raise is measured by the limit it sets, which slicing cannot raise: no sum. Every change
made alone is written down (`AloneChange`), counted under a lock of the staff user's row (two
changes of one user at once are counted one after the other), and several alone-made changes
to one account, whoever made them, raise a monitoring alert (`_watch_account`).
"""

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from accounts.locks import lock_accounts
from accounts.models import Account, Fee
from accounts.services import account_set_overdraft_limit, adjustment_create, fee_waive
from cards.locks import lock_card
from cards.models import Card, PinUnblock
from cards.services import card_limits_set
from cards.services.pin import UNBLOCK_WINDOW
from core.actors import Actor
from core.exceptions import BusinessRuleViolation
from core.operations import Outcome, changed, unchanged
from institutions.locks import lock_staff_user_for_counting
from monitoring.services.alerts import alert_raise_staff_changes

from ..models import AloneChange, ApprovalRequest, ApprovalThreshold
from .approvals import (
    approval_request_adjustment,
    approval_request_break_book,
    approval_request_break_place,
    approval_request_card_limits_raise,
    approval_request_fee_waiver,
    approval_request_inbound_apply,
    approval_request_inbound_return,
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


# The window of the sums and of the alert on one account's alone-made changes.
WINDOW = timedelta(hours=24)
Kind = ApprovalRequest.Kind
SUMMED = (Kind.ADJUSTMENT, Kind.FEE_WAIVER)
# Kinds whose target is an account (the alert watches accounts).
OF_ACCOUNTS = (Kind.ADJUSTMENT, Kind.FEE_WAIVER, Kind.OVERDRAFT_RAISE)


def threshold(institution_id: str, kind: str, currency: str = "") -> ApprovalThreshold | None:
    """The institution's threshold of `kind` in `currency`; None where it has none."""
    return ApprovalThreshold.objects.filter(
        institution_id=institution_id, kind=kind, currency=currency
    ).first()


def _daily(limit: ApprovalThreshold) -> int:
    return limit.up_to if limit.daily_up_to is None else limit.daily_up_to


def _alone(
    *, institution_id: str, kind: str, currency: str, amount: int, target_id: str, actor: Actor
) -> bool:
    """Whether the change is made alone: within the threshold and, for a change that moves
    money, the sums of the module docstring. In the caller's transaction: the staff user's row
    is locked first, so their changes are summed one after the other until it ends."""
    limit = threshold(institution_id, kind, currency)
    if limit is None or amount > limit.up_to:
        return False
    if kind not in SUMMED:
        return True
    mine = _made_alone_by(actor, kind).filter(currency=currency)
    to_target = mine.filter(target_id=target_id).aggregate(sum=Sum("amount"))["sum"] or 0
    everywhere = mine.aggregate(sum=Sum("amount"))["sum"] or 0
    return to_target + amount <= limit.up_to and everywhere + amount <= _daily(limit)


def _made_alone_by(actor: Actor, kind: str):
    """The user's alone-made changes of `kind` in the window, their row locked first."""
    lock_staff_user_for_counting(actor.user.pk)
    return AloneChange.objects.filter(
        made_by=actor.user, kind=kind, created_at__gt=timezone.now() - WINDOW
    )


def _made_alone(
    *,
    institution_id: str,
    kind: str,
    target_id: str,
    amount: int | None,
    currency: str,
    actor: Actor,
    made_id: str,
) -> None:
    """Write down a change made alone (`AloneChange`), and watch its account."""
    change = AloneChange.objects.create(
        institution_id=institution_id,
        kind=kind,
        target_id=target_id,
        amount=amount,
        currency=currency,
        made_by=actor.user,
        made_id=made_id,
    )
    if kind in OF_ACCOUNTS:
        _watch_account(change)


def _watch_account(change: AloneChange) -> None:
    """One monitoring alert when `change` brings the alone-made changes to its account in the
    window, whoever made them, to FOUR_EYES_ALERT_CHANGES. The account's row is locked while
    they are counted (the change locked it already: its own posting), so exactly one change
    sees the count reach it."""
    account = lock_accounts([change.target_id])[change.target_id]
    recent = AloneChange.objects.filter(
        target_id=account.pk, kind__in=OF_ACCOUNTS, created_at__gt=timezone.now() - WINDOW
    )
    if recent.count() != settings.FOUR_EYES_ALERT_CHANGES:
        return
    alert_raise_staff_changes(
        account=account,
        amount=change.amount,
        currency=change.currency,
        made_id=change.made_id,
        details={
            "count": settings.FOUR_EYES_ALERT_CHANGES,
            "window_seconds": int(WINDOW.total_seconds()),
            "changes": [
                {"kind": kind, "made_id": made_id, "staff_user_id": user_id}
                for kind, made_id, user_id in recent.order_by("id").values_list(
                    "kind", "made_id", "made_by_id"
                )
            ],
        },
    )


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
    with transaction.atomic(savepoint=False):
        if _alone(
            institution_id=account.institution_id,
            kind=kind,
            currency=account.currency,
            amount=amount,
            target_id=account.pk,
            actor=actor,
        ):
            adjustment = adjustment_create(
                account=account,
                direction=direction,
                amount=amount,
                currency=account.currency,
                description=description,
                actor=actor,
            )
            _made_alone(
                institution_id=account.institution_id,
                kind=kind,
                target_id=account.pk,
                amount=amount,
                currency=account.currency,
                actor=actor,
                made_id=adjustment.pk,
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
    """A fee waiver: `fee_waive` at once within the threshold and the sums, else asked."""
    reason = checked_reason(reason)
    kind = ApprovalRequest.Kind.FEE_WAIVER
    with transaction.atomic(savepoint=False):
        if _alone(
            institution_id=fee.institution_id,
            kind=kind,
            currency=fee.currency,
            amount=fee.amount,
            target_id=fee.account_id,
            actor=actor,
        ):
            waived = fee_waive(fee=fee, user=actor.user, reason=reason).value
            _made_alone(
                institution_id=fee.institution_id,
                kind=kind,
                target_id=fee.account_id,
                amount=fee.amount,
                currency=fee.currency,
                actor=actor,
                made_id=waived.pk,
            )
            return StaffChange(approval=None, made=waived.pk)
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
    if limit < account.overdraft_limit:  # risk taken away: nobody else needed, nothing counted
        outcome = account_set_overdraft_limit(account=account, limit=limit)
        return changed(StaffChange(approval=None, made=outcome.value.pk))
    with transaction.atomic(savepoint=False):
        if _alone(
            institution_id=account.institution_id,
            kind=kind,
            currency=account.currency,
            amount=limit,
            target_id=account.pk,
            actor=actor,
        ):
            outcome = account_set_overdraft_limit(account=account, limit=limit)
            _made_alone(
                institution_id=account.institution_id,
                kind=kind,
                target_id=account.pk,
                amount=limit,
                currency=account.currency,
                actor=actor,
                made_id=outcome.value.pk,
            )
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
    if not raised:  # lower limits only: risk taken away
        return changed(
            StaffChange(approval=None, made=card_limits_set(card=card, changes=changes).pk)
        )
    highest = max(raised.values())
    with transaction.atomic(savepoint=False):
        if _alone(
            institution_id=card.institution_id,
            kind=kind,
            currency=currency,
            amount=highest,
            target_id=card.pk,
            actor=actor,
        ):
            made = card_limits_set(card=card, changes=changes).pk
            _made_alone(
                institution_id=card.institution_id,
                kind=kind,
                target_id=card.pk,
                amount=highest,
                currency=currency,
                actor=actor,
                made_id=made,
            )
            return changed(StaffChange(approval=None, made=made))
    return changed(
        StaffChange(
            approval=approval_request_card_limits_raise(
                card=card, changes=changes, reason=reason, actor=actor
            )
        )
    )


def staff_unblock_pin(*, card: Card, reason: str, actor: Actor) -> Outcome[StaffChange]:
    """A PIN unblock: at once while the card's chain was unblocked fewer times than the
    threshold in the window and, where the threshold has a daily total, the user's alone-made
    unblocks in 24 hours, this one included, stay within it; else asked. A PIN that is not
    blocked changes nothing."""
    reason = checked_reason(reason)
    kind = ApprovalRequest.Kind.PIN_UNBLOCK
    with transaction.atomic(savepoint=False):
        # The card's lock serializes the count with every other unblock of its chain.
        card = lock_card(card.pk)
        if not card.pin_blocked:
            return unchanged(StaffChange(approval=None))
        limit = threshold(card.institution_id, kind)
        recent = PinUnblock.objects.filter(
            lineage_id=card.lineage_root_id, created_at__gt=timezone.now() - UNBLOCK_WINDOW
        ).count()
        if (
            limit is not None
            and recent < limit.up_to
            and (
                limit.daily_up_to is None or _made_alone_by(actor, kind).count() < limit.daily_up_to
            )
        ):
            made = pin_unblocked(card, reason, actor)
            _made_alone(
                institution_id=card.institution_id,
                kind=kind,
                target_id=card.pk,
                amount=None,
                currency="",
                actor=actor,
                made_id=made,
            )
            return changed(StaffChange(approval=None, made=made))
        return changed(
            StaffChange(
                approval=approval_request_pin_unblock(card=card, reason=reason, actor=actor)
            )
        )


def staff_apply_inbound(*, inbound, account: Account, reason: str, actor: Actor) -> StaffChange:
    """An inbound credit in suspense applied to an account: always asked (money from suspense
    to a customer is placed by two people; no threshold makes it alone)."""
    return StaffChange(
        approval=approval_request_inbound_apply(
            inbound=inbound, account=account, reason=reason, actor=actor
        )
    )


def staff_return_inbound(*, inbound, code: str, reason: str, actor: Actor) -> StaffChange:
    """An inbound credit in suspense returned with `code`: always asked, as applying it is."""
    return StaffChange(
        approval=approval_request_inbound_return(
            inbound=inbound, code=code, reason=reason, actor=actor
        )
    )


def staff_book_break(*, brk, kind: str, reason: str, actor: Actor) -> StaffChange:
    """A reconciliation break's money moved (a bank-only credit to suspense, a bank fee, a late
    presentment force posted): always asked, as money placed from suspense is (no threshold
    makes it alone)."""
    return StaffChange(
        approval=approval_request_break_book(brk=brk, kind=kind, reason=reason, actor=actor)
    )


def staff_place_break(*, brk, account: Account, reason: str, actor: Actor) -> StaffChange:
    """A reconciliation break's credit booked to suspense placed on a customer account: always
    asked, as an inbound credit applied from suspense is."""
    return StaffChange(
        approval=approval_request_break_place(brk=brk, account=account, reason=reason, actor=actor)
    )
