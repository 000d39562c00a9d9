"""Expected payments (docs/reconciliation.md, "Expected payments"): money announced but not yet
seen on a statement, `unmatched` until a run matches it to a statement line (`matched`), or
`cancelled` by the API before."""

from django.db import transaction

from core.actors import Actor
from core.exceptions import InvalidStateTransition, ValidationFailed
from core.metadata import metadata_check
from core.operations import Outcome, changed
from core.rows import row_update
from events.services import emit_for

from ..locks import lock_expected_payment
from ..models import ExpectedPayment

Status = ExpectedPayment.Status


def _event_data(expected: ExpectedPayment) -> dict:
    return {
        "expected_payment_id": expected.pk,
        "currency": expected.currency,
        "direction": expected.direction,
        "amount_min": expected.amount_min,
        "amount_max": expected.amount_max,
        "status": expected.status,
    }


def expected_payment_create(
    *,
    institution,
    currency: str,
    direction: str,
    amount: int | None = None,
    amount_min: int | None = None,
    amount_max: int | None = None,
    date_from=None,
    date_to=None,
    reference: str = "",
    end_to_end_id: str = "",
    trace_number: str = "",
    metadata: dict | None = None,
    actor: Actor | None = None,
) -> ExpectedPayment:
    """An amount, or its bounds (both, minor units); 400 `validation_error` naming the field
    when they contradict each other."""
    if amount is not None:
        if amount_min is not None or amount_max is not None:
            raise ValidationFailed(details={"amount": "An amount, or its bounds."})
        amount_min = amount_max = amount
    if amount_min is None or amount_max is None:
        raise ValidationFailed(details={"amount": "An amount, or its bounds."})
    if amount_max < amount_min:
        raise ValidationFailed(details={"amount_max": "Below the lower bound."})
    if date_from is not None and date_to is not None and date_to < date_from:
        raise ValidationFailed(details={"date_to": "Before the first date."})
    metadata = metadata_check(metadata or {})
    with transaction.atomic():
        expected = ExpectedPayment.objects.create(
            institution=institution,
            currency=currency,
            direction=direction,
            amount_min=amount_min,
            amount_max=amount_max,
            date_from=date_from,
            date_to=date_to,
            reference=reference,
            end_to_end_id=end_to_end_id,
            trace_number=trace_number,
            metadata=metadata,
        )
        emit_for(expected, "expected_payment.created", data=_event_data(expected), actor=actor)
    return expected


def expected_payment_cancel(
    *, expected: ExpectedPayment, actor: Actor | None = None
) -> Outcome[ExpectedPayment]:
    """409 `invalid_state_transition` once matched or cancelled."""
    with transaction.atomic():
        expected = lock_expected_payment(expected.pk)
        if expected.status != Status.UNMATCHED:
            raise InvalidStateTransition(
                f"The expected payment is {expected.status}.",
                from_state=expected.status,
                to_state=Status.CANCELLED,
            )
        row_update(expected, {"status": Status.CANCELLED})
        emit_for(expected, "expected_payment.cancelled", data=_event_data(expected), actor=actor)
    return changed(expected, Status.UNMATCHED)
