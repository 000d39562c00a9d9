"""Ageing of the breaks (docs/reconciliation.md, "Ageing"): a break still open (or assigned)
more than `AGEING_BUSINESS_DAYS` business days after it was opened, in its institution's
calendar (`institutions.calendar`: weekends and holidays are not counted), raises one
monitoring alert (`monitoring.services.alerts.alert_raise_break_ageing`), whatever how often the
job runs: the break's row is locked while its alert is looked for and raised, and a partial
unique constraint keeps one alert a break.

A constant, not an institution's setting: a reconciliation team's service level is days, the
same for every institution the project has; a setting per institution would be a column and a
page for a number nobody asked to differ. A break of amount 0 has no difference standing and is
not watched."""

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from institutions.calendar import business_days_after, local_date
from monitoring.models import MonitoringAlert
from monitoring.services.alerts import alert_raise_break_ageing

from ..locks import lock_break
from ..models import OPEN_STATES, ReconciliationBreak

AGEING_BUSINESS_DAYS = 3


def breaks_watch_ageing(*, now=None) -> dict[str, int]:
    """The ageing job: each open break past `AGEING_BUSINESS_DAYS` business days with no alert
    yet gets one, in its own transaction. Returns how many were raised."""
    now = now or timezone.now()
    alerted = MonitoringAlert.objects.filter(
        subject_type=MonitoringAlert.SubjectType.BREAK_AGEING
    ).values("subject_id")
    # N business days are at least N calendar days: older ones only, the calendar decides below.
    candidates = (
        ReconciliationBreak.objects.filter(
            state__in=OPEN_STATES, created_at__lte=now - timedelta(days=AGEING_BUSINESS_DAYS)
        )
        .exclude(amount=0)
        .exclude(pk__in=alerted)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    raised = 0
    for break_id in list(candidates):
        with transaction.atomic():
            brk = lock_break(break_id)
            if brk.state not in OPEN_STATES or _alerted(brk.pk):
                continue
            institution = brk.institution
            opened = local_date(institution, brk.created_at)
            due = business_days_after(institution, opened, AGEING_BUSINESS_DAYS)
            if local_date(institution, now) <= due:
                continue
            alert_raise_break_ageing(
                institution=institution,
                account_id=brk.statement.account_id,
                break_id=brk.pk,
                amount=abs(brk.amount),
                currency=brk.currency,
                details={
                    "kind": brk.kind,
                    "amount": brk.amount,
                    "opened_on": opened.isoformat(),
                    "business_days": AGEING_BUSINESS_DAYS,
                },
            )
            raised += 1
    return {"raised": raised}


def _alerted(break_id: str) -> bool:
    return MonitoringAlert.objects.filter(
        subject_type=MonitoringAlert.SubjectType.BREAK_AGEING, subject_id=break_id
    ).exists()
