"""SEPA direct debit mandates (docs/payments.md, "Mandates and direct debits"): made, amended
(the debtor account or the reference, what the EPC lets a creditor amend: AT-01, AT-07) and
cancelled, each atomically with its event (`mandate.created`, `mandate.amended`,
`mandate.cancelled`, the actor's).

An institution collects only with an `initiation` SEPA profile that has a creditor identifier
(422 `creditor_identifier_missing` otherwise); the mandate's debtor account is one of its SEPA
external accounts; its reference is unique in the institution (a unique index: 422
`duplicate_reference`, also when two requests race). IBANs are never in an error or an event:
the debtor account is named by its id.
"""

from datetime import date, datetime, timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from cards.dates import today_of
from core.actors import Actor
from core.exceptions import (
    BusinessRuleViolation,
    DuplicateReference,
    InvalidStateTransition,
    ValidationFailed,
)
from core.metadata import metadata_check
from core.operations import Outcome, changed, unchanged
from core.rows import new_row, row_update
from events.services import emit_for
from institutions.models import Institution

from .. import sepa
from ..locks import lock_mandate
from ..models import ExternalAccount, Mandate, PaymentOrder, SepaProfile
from ..selectors import external_account_get
from .orders import MAX_DAYS_AHEAD, constraint_of

# A mandate signed more than this long ago is refused: the EPC's mandates lapse after 36 months
# without a collection, and a signature date is a date the debtor remembers.
MAX_AGE_DAYS = 36 * 31


class CreditorIdentifierMissing(BusinessRuleViolation):
    code = "creditor_identifier_missing"
    message = (
        "The institution collects SEPA direct debits only with an initiation SEPA profile that "
        "has a creditor identifier: its operators set it (manage.py sepa_profile)."
    )


class MandateNotUsable(BusinessRuleViolation):
    code = "mandate_not_usable"
    message = "The mandate allows no further collection."


def creditor_profile_of(institution: Institution) -> SepaProfile:
    """The institution's SEPA profile if it can collect (initiation, a creditor identifier)."""
    profile = SepaProfile.objects.filter(institution=institution).first()
    if (
        profile is None
        or profile.kind != SepaProfile.Kind.INITIATION
        or not profile.creditor_identifier
    ):
        raise CreditorIdentifierMissing(details={"kind": profile.kind if profile else None})
    return profile


def checked_reference(value, field: str = "mandate_reference") -> str:
    """A mandate reference (AT-01): 1 to 35 characters of the SEPA character set, the EPC's rule
    for identifiers (no '/' at either end, no '//')."""
    return sepa.checked_end_to_end_id(value, field)


def _debtor_account(institution, external_account_id: str) -> ExternalAccount:
    external = external_account_get(
        institution=institution, external_account_id=external_account_id
    )
    if external.kind != ExternalAccount.Kind.SEPA:
        raise ValidationFailed(
            details={"external_account_id": "A SEPA external account (an IBAN): the debtor's."}
        )
    return external


def _event_data(mandate: Mandate, **extra) -> dict:
    return {
        "mandate_id": mandate.pk,
        "external_account_id": mandate.external_account_id,
        "mandate_reference": mandate.reference,
        "scheme": mandate.scheme,
        "type": mandate.type,
        "status": mandate.status,
        **extra,
    }


def _saved(mandate: Mandate, save) -> None:
    """`save()` in a savepoint; the reference's unique index lost to another request: 422."""
    try:
        with transaction.atomic():
            save()
    except IntegrityError as error:
        if constraint_of(error) != "mandate_reference_once":
            raise
        raise DuplicateReference(
            "The institution has a mandate with this reference already.",
            details={"mandate_reference": mandate.reference},
        ) from None


def _reference_free(institution, reference: str, but: str | None = None) -> None:
    taken = Mandate.objects.filter(institution=institution, reference=reference)
    if but is not None:
        taken = taken.exclude(pk=but)
    if taken.exists():
        raise DuplicateReference(
            "The institution has a mandate with this reference already.",
            details={"mandate_reference": reference},
        )


def mandate_create(
    *,
    institution: Institution,
    external_account_id: str,
    reference: str,
    signature_date: date,
    scheme: str,
    type: str,  # noqa: A002 (the API's word)
    metadata: dict | None = None,
    actor: Actor,
) -> Mandate:
    """A new `active` mandate (module docstring). Emits `mandate.created`."""
    errors = {}
    try:
        reference = checked_reference(reference)
    except ValidationFailed as failed:
        errors.update(failed.details)
    if scheme not in Mandate.Scheme.values:
        errors["scheme"] = "Must be CORE or B2B."
    if type not in Mandate.Type.values:
        errors["type"] = "Must be recurrent or one_off."
    today = today_of(institution)
    if not isinstance(signature_date, date) or isinstance(signature_date, datetime):
        errors["signature_date"] = "Must be a date."
    elif signature_date > today:
        errors["signature_date"] = f"Signed on or before today ({today})."
    elif (today - signature_date).days > MAX_AGE_DAYS:
        errors["signature_date"] = "At most 36 months ago."
    if errors:
        raise ValidationFailed(details=errors)
    metadata = metadata_check(metadata or {})
    creditor_profile_of(institution)
    external = _debtor_account(institution, external_account_id)
    _reference_free(institution, reference)
    mandate = new_row(
        Mandate,
        institution=institution,
        external_account=external,
        reference=reference,
        signature_date=signature_date,
        scheme=scheme,
        type=type,
        status=Mandate.Status.ACTIVE,
        metadata=metadata,
        **actor.stamp("created_by"),
    )
    with transaction.atomic(savepoint=False):
        _saved(mandate, lambda: mandate.save(force_insert=True))
        emit_for(mandate, "mandate.created", data=_event_data(mandate), actor=actor)
    return mandate


def _collections_waiting(mandate: Mandate) -> bool:
    return PaymentOrder.objects.filter(
        mandate=mandate,
        status__in=[PaymentOrder.Status.NEEDS_APPROVAL, PaymentOrder.Status.APPROVED],
    ).exists()


def mandate_amend(
    *,
    mandate: Mandate,
    external_account_id: str | None = None,
    reference: str | None = None,
    actor: Actor,
) -> Outcome[Mandate]:
    """Amend an active mandate's debtor account (another SEPA external account of the
    institution) or its reference (unique in the institution). What the debtor's bank knew
    is kept until the next collection carries it (`AmdmntInfDtls`). 409 for a cancelled
    mandate, and for a new debtor account while a collection made for the old one waits for
    its cut-off (cancel it first). Emits `mandate.amended`, naming the fields changed."""
    if external_account_id is None and reference is None:
        raise ValidationFailed(details={"non_field_errors": "Give at least one field."})
    if reference is not None:
        reference = checked_reference(reference)
    institution = mandate.institution
    external = None
    if external_account_id is not None:
        external = _debtor_account(institution, external_account_id)
    with transaction.atomic(savepoint=False):
        mandate = lock_mandate(mandate.pk)
        if mandate.status != Mandate.Status.ACTIVE:
            raise InvalidStateTransition(
                "The mandate is cancelled.", from_state=mandate.status, to_state="amended"
            )
        values = {}
        if reference is not None and reference != mandate.reference:
            _reference_free(institution, reference, but=mandate.pk)
            values["reference"] = reference
            if not mandate.original_reference:
                values["original_reference"] = mandate.reference
        if external is not None and external.pk != mandate.external_account_id:
            if _collections_waiting(mandate):
                raise InvalidStateTransition(
                    "A collection of the mandate waits for its cut-off: cancel it before "
                    "changing the debtor account.",
                    from_state=mandate.status,
                    to_state="amended",
                )
            values["external_account"] = external
            if mandate.original_external_account_id is None:
                values["original_external_account"] = mandate.external_account
        if not values:
            return unchanged(mandate)
        values["amended_at"] = timezone.now()
        _saved(mandate, lambda: row_update(mandate, values))
        fields = sorted(
            {"reference": "mandate_reference", "external_account": "external_account_id"}[each]
            for each in values
            if each in ("reference", "external_account")
        )
        emit_for(
            mandate,
            "mandate.amended",
            data=_event_data(mandate, changed_fields=fields),
            actor=actor,
        )
    return changed(mandate, Mandate.Status.ACTIVE)


def mandate_cancel(*, mandate: Mandate, reason: str = "", actor: Actor) -> Outcome[Mandate]:
    """Cancel an active mandate: no collection under it from now on (one waiting for its
    cut-off is cancelled with it). 409 when it is cancelled already. Emits `mandate.cancelled`."""
    from .orders import payment_order_cancel

    with transaction.atomic(savepoint=False):
        mandate = lock_mandate(mandate.pk)
        if mandate.status != Mandate.Status.ACTIVE:
            raise InvalidStateTransition(
                "The mandate is cancelled already.",
                from_state=mandate.status,
                to_state=Mandate.Status.CANCELLED,
            )
        for order in PaymentOrder.objects.filter(
            mandate=mandate,
            status__in=[PaymentOrder.Status.NEEDS_APPROVAL, PaymentOrder.Status.APPROVED],
        ).order_by("pk"):
            payment_order_cancel(order=order, reason="mandate cancelled")
        row_update(
            mandate,
            {
                "status": Mandate.Status.CANCELLED,
                "cancelled_at": timezone.now(),
                "cancelled_reason": (reason or "")[:200],
            },
        )
        emit_for(mandate, "mandate.cancelled", data=_event_data(mandate), actor=actor)
    return changed(mandate, Mandate.Status.ACTIVE)


# --- collections ---------------------------------------------------------------------------


class DueDateTooEarly(BusinessRuleViolation):
    code = "due_date_too_early"
    message = (
        "The due date leaves the debtor less than the pre-notification days, or the scheme "
        "less than one SEPA day after the cut-off the collection goes in."
    )


def mandate_get(*, institution: Institution, mandate_id: str) -> Mandate:
    from core.selectors import get_of_institution

    return get_of_institution(
        Mandate.objects.select_related("institution", "external_account"),
        institution=institution,
        id=mandate_id,
        missing="No mandate with this id.",
    )


def mandate_of_collection(institution, mandate_id: str, external: ExternalAccount) -> Mandate:
    """The mandate a collection names (404 when not the institution's), its debtor account the
    order's (400 otherwise)."""
    mandate = mandate_get(institution=institution, mandate_id=mandate_id)
    if mandate.external_account_id != external.pk:
        raise ValidationFailed(
            details={"external_account_id": "Must be the mandate's debtor account."}
        )
    return mandate


def mandate_usable(mandate_id: str) -> Mandate:
    """The mandate's row locked (collections of one mandate are made one at a time) and checked:
    422 `mandate_not_usable` when it is cancelled, or a one-off one has a collection already
    (one not cancelled nor rejected)."""
    mandate = lock_mandate(mandate_id)
    if mandate.status != Mandate.Status.ACTIVE:
        raise MandateNotUsable(
            "The mandate is cancelled.", details={"mandate_id": mandate.pk, "reason": "cancelled"}
        )
    if mandate.type == Mandate.Type.ONE_OFF:
        used = PaymentOrder.objects.filter(mandate=mandate).exclude(
            status__in=[PaymentOrder.Status.CANCELLED, PaymentOrder.Status.REJECTED]
        )
        if used.exists():
            raise MandateNotUsable(
                "A one-off mandate collects once: it has a collection already.",
                details={"mandate_id": mandate.pk, "reason": "one_off_used"},
            )
    return mandate


def first_cutoff_day(profile: SepaProfile, now: datetime | None = None) -> date:
    """The day of the first direct-debit cut-off a collection made `now` goes in: today's when
    it is a SEPA day and its cut-off has not passed, else the next SEPA day's."""
    from ..calendar import is_sepa_day, sepa_days_after
    from .cutoff import window_instant

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
    from ..calendar import sepa_days_after

    institution = profile.institution
    by_scheme = sepa_days_after(institution, first_cutoff_day(profile, now), 1)
    notified = today_of(institution) + timedelta(days=profile.pre_notification_days)
    return max(by_scheme, sepa_days_after(institution, notified, 0))


def due_date(profile: SepaProfile, value) -> date:
    """A collection's due date (its requested execution date): the earliest when not given; a
    day that is not a SEPA day moves to the next that is; before the earliest: 422
    `due_date_too_early` with the earliest; more than a year ahead: 400."""
    from ..calendar import sepa_days_after

    institution = profile.institution
    earliest = earliest_due_date(profile)
    if value is None:
        return earliest
    if not isinstance(value, date) or isinstance(value, datetime):
        raise ValidationFailed(details={"requested_execution_date": "Must be a date."})
    today = today_of(institution)
    if value > today + timedelta(days=MAX_DAYS_AHEAD):
        raise ValidationFailed(
            details={"requested_execution_date": f"At most {MAX_DAYS_AHEAD} days ahead."}
        )
    day = sepa_days_after(institution, value, 0)
    if day < earliest:
        raise DueDateTooEarly(
            details={"requested_execution_date": day.isoformat(), "earliest": earliest.isoformat()}
        )
    return day
