"""The debtor's refusal of a SEPA direct debit before settlement (docs/payments.md, "Refusals of
inbound direct debits"; the EPC's SDD Core and B2B rulebooks, the R-transaction "refusal by
the debtor", reason code MS02 in the EPC's guidance on reason codes for SDD R-transactions): the
customer of an account another bank's creditor presented a collection from (a `sepa_dd` inbound
entry still `received`, "Inbound direct debits") tells TX, the debtor's bank, not to pay it, for
any reason or none, before its settlement date; TX rejects it and nothing moves.

- Only a `received` collection before its settlement date (the institution's today earlier than
  the entry's `settlement_date`): on the date the clearing settles it, and the payments job
  debits it or returns it; after, the customer's refund right is what is left
  (`debtor_refunds`). Anything else, an ACH entry or a credit too: 409
  `invalid_state_transition`.

In one transaction, under the entry's lock: the entry `rejected` MS02 (`refused_by_customer`),
TX's pacs.002 of the rejection (`inbound_debits.rejections_answer`, the writer of the rejections
made when the pacs.003 is read: validated against its XSD as it is written, kept as an outbound
rail file the payments job delivers into the `sepa` outbox), a `DebtorRefusal` (one per
collection: the unique index `debtor_refusal_once` behind the lock) and the event
`inbound_entry.rejected` with the actor. The job settles only `received` entries: a refused one
is never debited nor returned.
"""

from django.db import IntegrityError, transaction
from django.utils import timezone

from core.actors import Actor
from core.exceptions import InvalidStateTransition, ValidationFailed
from core.rows import constraint_of, new_row
from institutions.calendar import local_date

from ..locks import lock_inbound_entry
from ..models import DebtorRefusal, InboundEntry, Rail, SepaProfile
from .collection_returns import presented
from .inbound_debits import rejections_answer
from .sepa_inbound import inbound_reject
from .stop_payments import reason_checked

REFUSED = "MS02"
NOTE_LENGTH = 140


def debtor_refusal_create(*, inbound: InboundEntry, note: str = "", actor: Actor) -> DebtorRefusal:
    """The customer's refusal of the collection `inbound` (module docstring). 409
    `invalid_state_transition` unless it is a `sepa_dd` debit still `received` before its
    settlement date; 400 for a note longer than 140 characters."""
    note = reason_checked(note)
    if len(note) > NOTE_LENGTH:
        raise ValidationFailed(details={"reason": f"At most {NOTE_LENGTH} characters."})
    with transaction.atomic(savepoint=False):
        inbound = lock_inbound_entry(inbound.pk)
        _refusable(inbound)
        now = timezone.now()
        refusal = new_row(
            DebtorRefusal,
            institution=inbound.institution,
            inbound_entry=inbound,
            note=note,
            **actor.stamp("created_by"),
        )
        inbound_reject(inbound, REFUSED, at=now, actor=actor, refusal_id=refusal.pk)
        message, debit = presented(inbound)
        profile = SepaProfile.objects.select_related("institution").get(
            institution=inbound.institution
        )
        refusal.file = rejections_answer(profile, message, [(debit, inbound)], now)
        try:
            with transaction.atomic():
                refusal.save(force_insert=True)
        except IntegrityError as error:  # the entry's lock makes this the database's word only
            if constraint_of(error) != "debtor_refusal_once":
                raise
            raise _not_refusable(inbound) from None
    return refusal


def _refusable(inbound: InboundEntry) -> None:
    """409 unless the entry is a collection from the account still waiting for its date."""
    if (
        inbound.rail != Rail.SEPA_DD
        or inbound.direction != InboundEntry.Direction.DEBIT
        or inbound.status != InboundEntry.Status.RECEIVED
    ):
        raise _not_refusable(inbound)
    today = local_date(inbound.institution, timezone.now())
    if today >= inbound.settlement_date:
        raise InvalidStateTransition(
            "A collection is refused before its settlement date; from then on it is refunded.",
            from_state=inbound.status,
            to_state=InboundEntry.Status.REJECTED,
        )


def _not_refusable(inbound: InboundEntry) -> InvalidStateTransition:
    return InvalidStateTransition(
        "Only a SEPA direct debit presented from the account and still received (waiting for "
        "its settlement date) can be refused.",
        from_state=inbound.status,
        to_state=InboundEntry.Status.REJECTED,
    )
