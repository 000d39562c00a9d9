"""Alerts: raised for every hit of a screening, resolved by staff in the admin.

An alert is raised for each hit, whatever the rule's action: a decline rule's alert records
the refusal, an alert rule's the approved payment. `alerts_raise` writes in the caller's
transaction. A service that refuses a card transfer (422) asks its operation to keep them
(`core.operations.keep_if_refused`); a declined card authorization is a result, not a
refusal, and commits them with it.
"""

from django.db import transaction
from django.utils import timezone

from cards.models import Card
from core.exceptions import InvalidStateTransition, ValidationFailed
from events.services import emit_for

from ..locks import lock_alert
from ..models import MonitoringAlert
from .screening import Screening

# The alert's merchant snapshot: what it keeps of the payment's merchant.
MERCHANT_FIELDS = ("name", "mcc", "country_code", "channel")
MAX_NOTE_LENGTH = 2000


def alerts_raise(
    *,
    screening: Screening,
    card: Card,
    amount: int,
    currency: str,
    merchant: dict | None,
    subject_type: str,
    subject_id: str | None = None,
) -> list[MonitoringAlert]:
    """One open alert per hit of `screening` (a screening of this very payment), with the
    payment's snapshot (`merchant`: its MERCHANT_FIELDS) and the rule's action at the time.
    `subject_type`: "authorization" or "transfer"; `subject_id` may be None (a transfer
    refused before it had an id). Each alert emits `monitoring.alert_raised`."""
    if subject_type not in MonitoringAlert.SubjectType.values:
        raise ValueError(f"Unknown subject type {subject_type!r}")
    if not screening.hits:
        return []
    snapshot = (
        None if merchant is None else {field: merchant.get(field) for field in MERCHANT_FIELDS}
    )
    alerts = [
        MonitoringAlert(
            institution_id=card.institution_id,
            rule=rule,
            card=card,
            subject_type=subject_type,
            subject_id=subject_id,
            amount=amount,
            currency=currency,
            merchant=snapshot,
            action=rule.action,
            details=details,
        )
        for rule, details in screening.hits
    ]
    with transaction.atomic(savepoint=False):
        MonitoringAlert.objects.bulk_create(alerts)
        for alert in alerts:
            emit_for(
                alert,
                "monitoring.alert_raised",
                data={
                    "alert_id": alert.pk,
                    "rule_id": alert.rule_id,
                    "kind": alert.rule.kind,
                    "action": alert.action,
                    "card_id": card.pk,
                    "subject_type": subject_type,
                    "subject_id": subject_id,
                },
                institution=card.institution,
            )
    return alerts


def alert_raise_staff_changes(
    *, account, amount: int, currency: str, made_id: str, details: dict
) -> MonitoringAlert:
    """An open alert on `account`: several changes of money made alone by staff within the
    window (`details`: how many, the window, each change), the latest one's amount and what it
    made (`made_id`, the alert's subject). In the caller's transaction; emits
    `monitoring.alert_raised`."""
    return _ruleless_alert(
        institution=account.institution,
        account_id=account.pk,
        subject_type=MonitoringAlert.SubjectType.STAFF_CHANGES,
        subject_id=made_id,
        amount=amount,
        currency=currency,
        details=details,
    )


def alert_raise_break_ageing(
    *, institution, account_id: str, break_id: str, amount: int, currency: str, details: dict
) -> MonitoringAlert:
    """An open alert on a reconciliation break open past its business days (docs/reconciliation.md,
    "Ageing"): on the mirrored account (`account_id`), the break as its subject, |its amount|.
    Once a break (a partial unique constraint, `monitoring_alert_break_once`; the caller holds
    the break's lock). In the caller's transaction; emits `monitoring.alert_raised`."""
    return _ruleless_alert(
        institution=institution,
        account_id=account_id,
        subject_type=MonitoringAlert.SubjectType.BREAK_AGEING,
        subject_id=break_id,
        amount=amount,
        currency=currency,
        details=details,
    )


def _ruleless_alert(
    *, institution, account_id: str, subject_type: str, subject_id: str, amount, currency, details
) -> MonitoringAlert:
    """An open alert no monitoring rule raised (TX's own watches: staff changes, ageing breaks)
    on an account, and its `monitoring.alert_raised`, in one transaction."""
    with transaction.atomic(savepoint=False):
        alert = MonitoringAlert.objects.create(
            institution_id=institution.pk,
            account_id=account_id,
            subject_type=subject_type,
            subject_id=subject_id,
            amount=amount,
            currency=currency,
            action="alert",
            details=details,
        )
        emit_for(
            alert,
            "monitoring.alert_raised",
            data={
                "alert_id": alert.pk,
                "rule_id": None,
                "kind": None,
                "action": alert.action,
                "card_id": None,
                "account_id": account_id,
                "subject_type": alert.subject_type,
                "subject_id": subject_id,
            },
            institution=institution,
        )
    return alert


def alert_resolve(*, alert: MonitoringAlert, user, note: str) -> MonitoringAlert:
    """Resolve an open alert: who (`user`, a staff user), when, and why (`note`, required, 400
    when blank). An alert that is not open: 409 `invalid_state_transition`. Emits
    `monitoring.alert_resolved` (the note stays in the back office: events carry no free
    text)."""
    note = note.strip() if isinstance(note, str) else ""
    if not note:
        raise ValidationFailed(
            "A note is required to resolve an alert.", details={"note": "This field is required."}
        )
    if len(note) > MAX_NOTE_LENGTH:
        raise ValidationFailed(details={"note": f"At most {MAX_NOTE_LENGTH} characters."})
    with transaction.atomic(savepoint=False):
        alert = lock_alert(alert.pk)
        if alert.status != MonitoringAlert.Status.OPEN:
            raise InvalidStateTransition(
                f"The alert is already {alert.status}.",
                from_state=alert.status,
                to_state=MonitoringAlert.Status.RESOLVED,
            )
        alert.status = MonitoringAlert.Status.RESOLVED
        alert.resolved_by = user
        alert.resolved_at = timezone.now()
        alert.resolution_note = note
        alert.save(update_fields=["status", "resolved_by", "resolved_at", "resolution_note"])
        emit_for(
            alert,
            "monitoring.alert_resolved",
            data={"alert_id": alert.pk, "rule_id": alert.rule_id, "card_id": alert.card_id},
        )
    return alert
