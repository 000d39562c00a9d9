"""A collection under a mandate (docs/payments.md, "Mandates and direct debits"): what a
`sepa_dd` payment order asks of its mandate and of the institution's SEPA profile when it is
made (`payments.services.orders`): the institution collects (a SEPA profile with a creditor
identifier: an initiation profile's collections go to its partner bank in a pain.008, an
interbank one's to the clearing in a pacs.003), the mandate is the order's and usable (its row
locked: collections of one mandate are made one at a time), and the due date leaves the debtor
their pre-notification days and the scheme its SEPA day after the cut-off."""

from calendar import monthrange
from datetime import date, datetime, timedelta

from django.db.models import Max
from django.utils import timezone

from cards.dates import add_months, today_of
from core.exceptions import BusinessRuleViolation, ValidationFailed
from institutions.models import Institution

from ..calendar import is_sepa_day, sepa_days_after, window_instant
from ..locks import lock_mandate
from ..models import ExternalAccount, Mandate, PaymentOrder, SepaProfile
from ..selectors import mandate_get


class CreditorIdentifierMissing(BusinessRuleViolation):
    code = "creditor_identifier_missing"
    message = (
        "The institution collects SEPA direct debits only with a SEPA profile that has a "
        "creditor identifier: its operators set it (manage.py sepa_profile)."
    )


class MandateNotUsable(BusinessRuleViolation):
    code = "mandate_not_usable"
    message = "The mandate allows no further collection."


def creditor_profile_of(institution: Institution) -> SepaProfile:
    """The institution's SEPA profile if it can collect (a creditor identifier)."""
    profile = SepaProfile.objects.filter(institution=institution).first()
    if profile is None or not profile.creditor_identifier:
        raise CreditorIdentifierMissing(details={"kind": profile.kind if profile else None})
    return profile


class DueDateTooEarly(BusinessRuleViolation):
    code = "due_date_too_early"
    message = (
        "The due date leaves the debtor less than the pre-notification days, or the scheme "
        "less than one SEPA day after the cut-off the collection goes in."
    )


def mandate_of_collection(
    institution, mandate_id: str, external: ExternalAccount, final: bool = False
) -> Mandate:
    """The mandate a collection names (404 when not the institution's), its debtor account the
    order's (400 otherwise); a final collection (FNAL) under a recurrent mandate only (a one-off
    mandate's one collection is OOFF: 400)."""
    mandate = mandate_get(institution=institution, mandate_id=mandate_id)
    if mandate.external_account_id != external.pk:
        raise ValidationFailed(
            details={"external_account_id": "Must be the mandate's debtor account."}
        )
    if final and mandate.type != Mandate.Type.RECURRENT:
        raise ValidationFailed(
            details={"final_collection": "Under a recurrent mandate only: a one-off is OOFF."}
        )
    return mandate


# The EPC rulebooks: a mandate under which no collection was presented for 36 months lapses
# (counted from the latest collection presented, even one rejected, returned or refunded; from
# the signature when there was none). The creditor may not collect under it again.
LAPSE_MONTHS = 36


def lapse_day(start: date) -> date:
    """The first day a mandate whose last collection (or signature) was on `start` has lapsed:
    the same day 36 months later (the month's last day when it has fewer days)."""
    year, month = add_months(start.year, start.month, LAPSE_MONTHS)
    return date(year, month, min(start.day, monthrange(year, month)[1]))


def mandate_lapses_on(mandate: Mandate) -> date:
    """When the mandate lapses: 36 months after the due date of its latest collection put in
    a file, or after its signature when none was."""
    last = PaymentOrder.objects.filter(mandate=mandate, file__isnull=False).aggregate(
        last=Max("requested_execution_date")
    )["last"]
    return lapse_day(max(filter(None, (last, mandate.signature_date))))


def mandate_usable(mandate_id: str) -> Mandate:
    """The mandate's row locked (collections of one mandate are made one at a time) and checked:
    422 `mandate_not_usable` when it is cancelled, has lapsed (`mandate_lapses_on`), or has its
    last collection already: a one-off one any collection, a recurrent one its final (FNAL)
    collection (one not cancelled nor rejected)."""
    mandate = lock_mandate(mandate_id)
    if mandate.status != Mandate.Status.ACTIVE:
        raise MandateNotUsable(
            "The mandate is cancelled.", details={"mandate_id": mandate.pk, "reason": "cancelled"}
        )
    lapses_on = mandate_lapses_on(mandate)
    if today_of(mandate.institution) >= lapses_on:
        raise MandateNotUsable(
            "No collection was presented under the mandate for 36 months: it has lapsed.",
            details={
                "mandate_id": mandate.pk,
                "reason": "lapsed",
                "lapsed_on": lapses_on.isoformat(),
            },
        )
    used = PaymentOrder.objects.filter(mandate=mandate).exclude(
        status__in=[PaymentOrder.Status.CANCELLED, PaymentOrder.Status.REJECTED]
    )
    if mandate.type == Mandate.Type.ONE_OFF and used.exists():
        raise MandateNotUsable(
            "A one-off mandate collects once: it has a collection already.",
            details={"mandate_id": mandate.pk, "reason": "one_off_used"},
        )
    if used.filter(final_collection=True).exists():
        raise MandateNotUsable(
            "The mandate's final collection (FNAL) was made: none may follow it.",
            details={"mandate_id": mandate.pk, "reason": "final_collected"},
        )
    return mandate


def first_cutoff_day(profile: SepaProfile, now: datetime | None = None) -> date:
    """The day of the first direct-debit cut-off a collection made `now` goes in: today's when
    it is a SEPA day and its cut-off has not passed, else the next SEPA day's."""
    institution = profile.institution
    now = now or timezone.now()
    today = today_of(institution)
    instant = window_instant(institution, today, profile.direct_debit_cutoff)
    if is_sepa_day(institution, today) and now < instant:
        return today
    return sepa_days_after(institution, today + timedelta(days=1), 0)


def earliest_due_date(profile: SepaProfile, now: datetime | None = None) -> date:
    """The first due date a collection made `now` may have: a SEPA day, at least one SEPA day
    after the cut-off it goes in (Core and B2B alike since the 2016 rulebooks: D-1), and at
    least the profile's pre-notification days (calendar days) after today."""
    institution = profile.institution
    by_scheme = sepa_days_after(institution, first_cutoff_day(profile, now), 1)
    notified = today_of(institution) + timedelta(days=profile.pre_notification_days)
    return max(by_scheme, sepa_days_after(institution, notified, 0))


def due_date(profile: SepaProfile, value) -> date:
    """A collection's due date (its requested execution date): the earliest when not given; a
    day that is not a SEPA day moves to the next that is; before the earliest: 422
    `due_date_too_early` with the earliest; more than a year ahead: 400."""
    institution = profile.institution
    earliest = earliest_due_date(profile)
    if value is None:
        return earliest
    if not isinstance(value, date) or isinstance(value, datetime):
        raise ValidationFailed(details={"requested_execution_date": "Must be a date."})
    today = today_of(institution)
    if value > today + timedelta(days=PaymentOrder.MAX_DAYS_AHEAD):
        raise ValidationFailed(
            details={
                "requested_execution_date": f"At most {PaymentOrder.MAX_DAYS_AHEAD} days ahead."
            }
        )
    day = sepa_days_after(institution, value, 0)
    if day < earliest:
        raise DueDateTooEarly(
            details={"requested_execution_date": day.isoformat(), "earliest": earliest.isoformat()}
        )
    return day
