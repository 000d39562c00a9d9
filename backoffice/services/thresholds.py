"""The institutions' approval thresholds (docs/back-office.md, "Four eyes"): up to where one
staff user acts alone. Set by the bank's administrators (superusers) in the admin, recorded in
its history; no staff role may change one."""

from django.db import transaction
from django.utils import timezone

from core.exceptions import ValidationFailed
from core.money import MAX_AMOUNT
from institutions.services import validate_currency

from ..models import ApprovalRequest, ApprovalThreshold

# Kinds measured by the value they set (a limit), which slicing cannot raise: no daily total.
UNSUMMED = (ApprovalRequest.Kind.OVERDRAFT_RAISE, ApprovalRequest.Kind.CARD_LIMITS_RAISE)
# Money placed from suspense (docs/payments.md) and a reconciliation break's money booked
# (docs/reconciliation.md) always take two people: no threshold.
ALWAYS_ASKED = (
    ApprovalRequest.Kind.INBOUND_APPLY,
    ApprovalRequest.Kind.INBOUND_RETURN,
    ApprovalRequest.Kind.BREAK_CREDIT,
    ApprovalRequest.Kind.BREAK_FEE,
    ApprovalRequest.Kind.BREAK_FORCE_POST,
    ApprovalRequest.Kind.BREAK_PLACE,
)
THRESHOLD_KINDS = [kind for kind in ApprovalRequest.Kind if kind not in ALWAYS_ASKED]


def approval_threshold_set(
    *, institution, kind: str, currency: str, up_to: int, daily_up_to: int | None = None
) -> ApprovalThreshold:
    """The institution's threshold of `kind` in `currency` (blank for a PIN unblock) set to
    `up_to` (minor units; unblocks for a PIN unblock) and `daily_up_to` (what one staff user
    does alone in 24 hours, every target together; None: the same as `up_to`; none for a limit
    raise), made or changed. 400 for a kind, a currency or an amount that is not one."""
    if kind not in THRESHOLD_KINDS:
        raise ValidationFailed(details={"kind": f"One of {', '.join(THRESHOLD_KINDS)}."})
    if kind == ApprovalRequest.Kind.PIN_UNBLOCK:
        if currency:
            raise ValidationFailed(details={"currency": "A PIN unblock has no currency."})
    else:
        validate_currency(currency)
    for name, value in (("up_to", up_to), ("daily_up_to", daily_up_to)):
        if value is None and name == "daily_up_to":
            continue
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_AMOUNT:
            raise ValidationFailed(details={name: f"An integer from 0 to {MAX_AMOUNT}."})
    if daily_up_to is not None and kind in UNSUMMED:
        raise ValidationFailed(
            details={
                "daily_up_to": "A limit raise is measured by the limit it sets: it has no daily "
                "total."
            }
        )
    with transaction.atomic(savepoint=False):
        threshold, _ = ApprovalThreshold.objects.update_or_create(
            institution=institution,
            kind=kind,
            currency=currency,
            defaults={"up_to": up_to, "daily_up_to": daily_up_to, "updated_at": timezone.now()},
        )
    return threshold


def approval_threshold_remove(*, threshold: ApprovalThreshold) -> None:
    """Remove a threshold: every change of its kind and currency at that institution waits for
    a second staff user again (the default with no threshold)."""
    threshold.delete()
