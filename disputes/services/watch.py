"""The deadline job (docs/disputes.md, "Deadlines"): each dispute deadline still watched gets
`dispute.deadline_approaching` once when it is `deadlines.APPROACHING` business days away or
less, and `dispute.deadline_missed` once the day after it, in its institution's calendar; a
draft past its network filing deadline closes `expired` (`stages.dispute_expire`). A product
crediting `by_deadline` credits an open dispute on its `provisional_credit` deadline's day; a
reversal held for the policy's notice is posted the day after the notice's last day."""

import logging
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from core.actors import current_actor
from core.exceptions import TXError
from institutions.calendar import business_days_after, local_date

from ..locks import lock_dispute_unless_busy
from ..models import Dispute, DisputeDeadline
from .deadlines import APPROACHING, HORIZON
from .records import emit
from .stages import dispute_credit_by_deadline, dispute_expire, dispute_reverse_held

logger = logging.getLogger("tx.disputes")


def disputes_watch_deadlines(*, now=None) -> dict[str, int]:
    """The deadline job (docs/disputes.md, "Deadlines"): each watched deadline that is
    approaching or missed at `now`, in the institution's calendar, gets its event once; a
    draft past its filing deadline closes `expired`; a `by_deadline` credit is given on its
    deadline's day; the reversals held for a notice that has run are posted. One transaction per
    deadline or reversal, on its
    dispute's row locked first (SKIP LOCKED: a dispute moving right now is the next run's).
    Returns how many of each."""
    now = now or timezone.now()
    counts = {"approaching": 0, "missed": 0, "expired": 0, "credited": 0, "reversed": 0}
    # A deadline warned about already has nothing to do before its own day (a `by_deadline`
    # credit) or the day after (missed): it is not locked again each hour until then. Its day
    # has come somewhere when it is on or before tomorrow in UTC (time zones run up to 14 hours
    # ahead); each institution's calendar decides below.
    candidates = (
        DisputeDeadline.objects.filter(
            met_at__isnull=True, missed_at__isnull=True, due_on__lte=now.date() + HORIZON
        )
        .filter(Q(approaching_at__isnull=True) | Q(due_on__lte=now.date() + timedelta(days=1)))
        .values_list("pk", "dispute_id")
    )
    for deadline_id, dispute_id in list(candidates):
        with transaction.atomic():
            dispute = lock_dispute_unless_busy(dispute_id)
            if dispute is None:
                continue
            deadline = DisputeDeadline.objects.get(pk=deadline_id)  # read once locked
            if deadline.met_at or deadline.missed_at:
                continue
            today = local_date(dispute.institution, now)
            if today > deadline.due_on:
                deadline.missed_at = now
                deadline.save(update_fields=["missed_at"])
                _emit(dispute, "dispute.deadline_missed", deadline)
                counts["missed"] += 1
                if (
                    deadline.name == DisputeDeadline.Name.NETWORK_FILING
                    and dispute.status == Dispute.Status.DRAFT
                ):
                    dispute_expire(dispute, current_actor())
                    counts["expired"] += 1
            elif deadline.approaching_at is None and deadline.due_on <= business_days_after(
                dispute.institution, today, APPROACHING
            ):
                deadline.approaching_at = now
                deadline.save(update_fields=["approaching_at"])
                _emit(dispute, "dispute.deadline_approaching", deadline)
                counts["approaching"] += 1
            if (
                deadline.name == DisputeDeadline.Name.PROVISIONAL_CREDIT
                and today >= deadline.due_on
                and _credited_by_deadline(dispute)
            ):
                counts["credited"] += 1
    _reverse_held(now, counts)
    return counts


def _credited_by_deadline(dispute: Dispute) -> bool:
    """A product crediting `by_deadline`: the credit given on its deadline's day (late, if the
    job could not run then). A credit refused (the account closed) leaves the deadline to be
    missed: the issuer's to act on."""
    try:
        with transaction.atomic():
            return dispute_credit_by_deadline(dispute, current_actor())
    except TXError:
        return False


def _reverse_held(now, counts: dict[str, int]) -> None:
    """The reversals held for a notice that has run (the day after its last day, in the
    institution's calendar): posted, one transaction each, the dispute's row locked first."""
    candidates = Dispute.objects.filter(
        provisional_credit_reverses_on__lt=now.date() + timedelta(days=1)
    ).values_list("pk", flat=True)
    for dispute_id in list(candidates):
        try:
            with transaction.atomic():
                dispute = lock_dispute_unless_busy(dispute_id)
                if dispute is None or dispute.provisional_credit_reverses_on is None:
                    continue
                if local_date(dispute.institution, now) <= dispute.provisional_credit_reverses_on:
                    continue
                dispute_reverse_held(dispute, current_actor())
                counts["reversed"] += 1
        except TXError as error:
            # The cardholder's account was closed meanwhile: the reversal stays held, tried
            # again each run, for staff to settle (the dispute shows it).
            logger.warning(
                "dispute reversal refused",
                extra={"dispute_id": dispute_id, "code": error.code},
            )


def _emit(dispute: Dispute, event_type: str, deadline: DisputeDeadline) -> None:
    emit(dispute, event_type, {"deadline": deadline.name, "due_on": deadline.due_on.isoformat()})
