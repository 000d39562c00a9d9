"""A dispute's deadlines (docs/disputes.md, "Deadlines"): set when it is filed, from its card
product's dispute policy and its institution's calendar (`institutions.calendar`), met by its
moves, watched by the deadline job.

- `regE`: the provisional credit 10 business days after the cardholder's contact, the
  resolution 45 days after it;
- `psd2`: the provisional credit 1 business day after it, the resolution 15 business days
  after it;
- `none`: neither;
- every policy: the network filing 120 days after the presentment.

A count of days (not business days) that ends on a day off moves to the next business day. The
filing's deadline is met when the dispute is submitted, the provisional credit's when the credit
is given (at submission, or on the deadline's day by the job for a product crediting
`by_deadline`, or by staff), the resolution's when it closes; closing meets them all. A policy's
REVERSAL_NOTICE holds a closing's reversal of the credit that many business days. The job
(`watch`) emits `dispute.deadline_approaching` once when a deadline is APPROACHING business days
away or less, and `dispute.deadline_missed` once the day after it; a draft that misses its
filing deadline can no longer be filed: it closes `expired`.
"""

from datetime import timedelta

from django.utils import timezone

from cards.models import CardProduct
from institutions.calendar import business_days_after, local_date

from ..models import Dispute, DisputeDeadline

Name = DisputeDeadline.Name
Policy = CardProduct.DisputePolicy

BUSINESS, CALENDAR = "business", "calendar"
# policy -> {deadline: (kind of days, how many), counted from the cardholder's contact}
POLICIES = {
    Policy.REG_E: {Name.PROVISIONAL_CREDIT: (BUSINESS, 10), Name.RESOLUTION: (CALENDAR, 45)},
    Policy.PSD2: {Name.PROVISIONAL_CREDIT: (BUSINESS, 1), Name.RESOLUTION: (BUSINESS, 15)},
    Policy.NONE: {},
}
# policy -> business days of notice before a closed dispute's credit is taken back: Reg E
# 1005.11(d)(2)(ii) has the issuer honour the cardholder's payments for five business days after
# it notifies them of the debit; PSD2 and `none` set no such period.
REVERSAL_NOTICE = {Policy.REG_E: 5, Policy.PSD2: 0, Policy.NONE: 0}
# The schemes' common time limit for a chargeback, in days after the presentment.
NETWORK_FILING_DAYS = 120
APPROACHING = 2  # business days
# The job's first filter, before each institution's own calendar decides: a deadline further
# than this is not approaching (APPROACHING business days never span more than a month).
HORIZON = timedelta(days=31)


def deadlines_set(dispute: Dispute, policy: str) -> list[DisputeDeadline]:
    """Write the deadlines of a dispute just filed, under `policy`."""
    institution = dispute.institution
    contacted = local_date(institution, dispute.cardholder_contacted_at)
    presented = local_date(institution, dispute.authorization.presented_at)
    due = {Name.NETWORK_FILING: _after(institution, presented, CALENDAR, NETWORK_FILING_DAYS)}
    for name, (kind, days) in POLICIES[policy].items():
        due[name] = _after(institution, contacted, kind, days)
    return DisputeDeadline.objects.bulk_create(
        DisputeDeadline(dispute=dispute, name=name, due_on=day) for name, day in due.items()
    )


def deadlines_met(dispute: Dispute, *names: str) -> None:
    """The deadlines `names` (all, when none is named) are met now (in the caller's
    transaction, the dispute's row locked)."""
    deadlines = DisputeDeadline.objects.filter(dispute=dispute, met_at__isnull=True)
    if names:
        deadlines = deadlines.filter(name__in=names)
    deadlines.update(met_at=timezone.now())


def _after(institution, start, kind: str, days: int):
    if kind == BUSINESS:
        return business_days_after(institution, start, days)
    return business_days_after(institution, start + timedelta(days=days), 0)
