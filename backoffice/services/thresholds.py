"""The institutions' approval thresholds (docs/back-office.md, "Four eyes"): up to where one
staff user acts alone. Set by the bank's administrators (superusers) in the admin, recorded in
its history; no staff role may change one."""

from django.db import transaction
from django.utils import timezone

from core.exceptions import ValidationFailed
from core.money import MAX_AMOUNT
from institutions.services import validate_currency

from ..models import ApprovalRequest, ApprovalThreshold


def approval_threshold_set(
    *, institution, kind: str, currency: str, up_to: int
) -> ApprovalThreshold:
    """The institution's threshold of `kind` in `currency` (blank for a PIN unblock) set to
    `up_to` (minor units; unblocks for a PIN unblock), made or changed. 400 for a kind, a
    currency or an amount that is not one."""
    if kind not in ApprovalRequest.Kind.values:
        raise ValidationFailed(details={"kind": f"One of {', '.join(ApprovalRequest.Kind)}."})
    if kind == ApprovalRequest.Kind.PIN_UNBLOCK:
        if currency:
            raise ValidationFailed(details={"currency": "A PIN unblock has no currency."})
    else:
        validate_currency(currency)
    if not isinstance(up_to, int) or isinstance(up_to, bool) or not 0 <= up_to <= MAX_AMOUNT:
        raise ValidationFailed(details={"up_to": f"An integer from 0 to {MAX_AMOUNT}."})
    with transaction.atomic(savepoint=False):
        threshold, _ = ApprovalThreshold.objects.update_or_create(
            institution=institution,
            kind=kind,
            currency=currency,
            defaults={"up_to": up_to, "updated_at": timezone.now()},
        )
    return threshold
