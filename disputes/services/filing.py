"""Filing a dispute (docs/disputes.md, "What may be disputed", "The resource"): a draft on a
presented card payment, its evidence and note while it is a draft.

What may be disputed: a presented authorization's presented amount, less what its returns
credited back and what its other disputes contest (several partial disputes per presentment).
The authorization's row counts both (`returned_amount`, `disputed_amount`) and PostgreSQL
refuses more than was presented (`authorization_returned_and_disputed_at_most_presented`), so
two disputes racing for the last of it cannot both pass: the second is 422
`amount_exceeds_remaining`.
"""

from django.db import transaction
from django.utils import timezone

from authorizations.locks import lock_authorization
from authorizations.models import Authorization
from core.actors import Actor
from core.exceptions import AmountExceedsRemaining, InvalidStateTransition, ValidationFailed
from core.metadata import metadata_check, metadata_merge
from core.rows import new_row

from ..locks import lock_dispute
from ..models import Dispute, DisputeStep
from .deadlines import deadlines_set
from .records import emit, record_step

DISPUTED = "disputed"  # the state a dispute takes its authorization to (409 names it)


def dispute_create(
    *,
    authorization: Authorization,
    amount: int,
    reason: str,
    cardholder_contacted_at,
    actor: Actor,
    note: str = "",
    evidence: dict | None = None,
    metadata: dict | None = None,
) -> Dispute:
    """A draft dispute of `amount` of a presented authorization. 409 `invalid_state_transition`
    unless the authorization is presented; 422 `amount_exceeds_remaining` beyond what is left
    to dispute; 400 when the cardholder's contact is in the future. Emits `dispute.created`."""
    metadata = metadata_check(metadata or {})
    if cardholder_contacted_at > timezone.now():
        raise ValidationFailed(
            details={"cardholder_contacted_at": "The cardholder's contact cannot be in the future."}
        )
    with transaction.atomic(savepoint=False):
        authorization = lock_authorization(
            authorization.pk, "hold", "card__institution", "card__product"
        )
        if authorization.status != Authorization.Status.PRESENTED:
            raise InvalidStateTransition(
                f"Only a presented card payment can be disputed; this one is "
                f"{authorization.status}.",
                from_state=authorization.status,
                to_state=DISPUTED,
            )
        remaining = (
            authorization.presented_amount
            - authorization.returned_amount
            - authorization.disputed_amount
        )
        if amount > remaining:
            raise AmountExceedsRemaining(details={"amount": amount, "remaining": remaining})
        authorization.disputed_amount += amount
        authorization.save(update_fields=["disputed_amount"])
        dispute = new_row(
            Dispute,
            institution=authorization.card.institution,
            authorization=authorization,
            card=authorization.card,
            account_id=authorization.account_id,
            amount=amount,
            currency=authorization.currency,
            reason=reason,
            cardholder_contacted_at=cardholder_contacted_at,
            note=note,
            evidence=evidence or {},
            metadata=metadata,
            remaining=amount,
            **actor.stamp("created_by"),
        )
        dispute.save(force_insert=True)
        deadlines_set(dispute, authorization.card.product.dispute_policy)
        record_step(dispute, DisputeStep.Kind.CREATED, "", actor)
        emit(dispute, "dispute.created")
    return dispute


def dispute_update(
    *,
    dispute: Dispute,
    actor: Actor,
    note: str | None = None,
    evidence: dict | None = None,
    metadata: dict | None = None,
) -> Dispute:
    """Change a dispute's `note` and `evidence` (replaced whole) while it is a draft (409
    `invalid_state_transition` after), and merge `metadata` at any stage. Emits
    `dispute.updated` (`changedFields`) when something changed."""
    with transaction.atomic(savepoint=False):
        dispute = lock_dispute(dispute.pk)
        changed = []
        if (note is not None or evidence is not None) and dispute.status != Dispute.Status.DRAFT:
            raise InvalidStateTransition(
                f"The evidence and note of a {dispute.status} dispute are those it was "
                "submitted with.",
                from_state=dispute.status,
                to_state=Dispute.Status.DRAFT,
            )
        for name, value in (("note", note), ("evidence", evidence)):
            if value is not None and getattr(dispute, name) != value:
                setattr(dispute, name, value)
                changed.append(name)
        if metadata is not None:
            merged = metadata_merge(dispute.metadata, metadata)
            if merged != dispute.metadata:
                dispute.metadata = merged
                changed.append("metadata")
        if not changed:
            return dispute
        dispute.updated_at = timezone.now()
        dispute.save(update_fields=[*changed, "updated_at"])
        emit(dispute, "dispute.updated", {"changed_fields": changed})
    return dispute
