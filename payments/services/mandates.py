"""SEPA direct debit mandates (docs/payments.md, "Mandates and direct debits"): made, amended
(the debtor account or the reference, what the EPC lets a creditor amend: AT-01, AT-07) and
cancelled, each atomically with its event (`mandate.created`, `mandate.amended`,
`mandate.cancelled`, the actor's).

An institution collects only with a SEPA profile (initiation or interbank) that has a creditor
identifier (422 `creditor_identifier_missing` otherwise); the mandate's debtor account is one of
its SEPA external accounts; its reference is unique in the institution (a unique index: 422
`duplicate_reference`, also when two requests race). IBANs are never in an error or an event:
the debtor account is named by its id.
"""

from datetime import date, datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from cards.dates import today_of
from core.actors import Actor
from core.exceptions import (
    DuplicateReference,
    InvalidStateTransition,
    ValidationFailed,
)
from core.metadata import metadata_check
from core.operations import Outcome, changed, unchanged
from core.rows import constraint_of, new_row, row_update
from events.services import emit_for
from institutions.models import Institution

from .. import sepa
from ..locks import lock_mandate
from ..models import ExternalAccount, Mandate, PaymentOrder
from ..selectors import external_account_get
from .collections import creditor_profile_of, lapse_day
from .orders import payment_order_cancel


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
        reference = sepa.checked_mandate_reference(reference)
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
    elif lapse_day(signature_date) <= today:
        # Lapsed before its first collection: 36 months without one (`collections.lapse_day`).
        errors["signature_date"] = "Less than 36 months ago."
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
        reference = sepa.checked_mandate_reference(reference)
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
