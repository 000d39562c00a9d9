"""A posted transfer sent back, all or part of it: a new journal the other way."""

from django.db import transaction
from django.utils import timezone

from accounts.models import Journal, StatementLine
from accounts.posting import credit, debit, journal_new, post
from accounts.statement_lines import Line, statement_lines_new
from core.actors import Actor
from core.exceptions import AmountExceedsRemaining, InvalidStateTransition
from core.rows import new_row
from events.services import event_for

from ..locks import lock_transfer_to_reverse
from ..models import Transfer, TransferReversal


def transfer_reverse(
    *, transfer: Transfer, amount: int | None = None, actor: Actor
) -> TransferReversal:
    """Send back `amount` (default: all that is not yet reversed) of a posted transfer.

    Reversals add up to at most what was posted (422 `amount_exceeds_remaining`); a fully
    reversed transfer, and a two-phase transfer that is not posted (pending, voided, expired),
    answer 409 `invalid_state_transition`. The destination must be active with the
    funds and the source not closed (422). `CashDec` on the destination, `CashInc` on the
    source, event `transfer.reversed`; the transfer is `reversed` once nothing remains.
    """
    with transaction.atomic(savepoint=False):
        transfer = lock_transfer_to_reverse(transfer)
        if transfer.status not in (Transfer.Status.POSTED, Transfer.Status.REVERSED):
            raise InvalidStateTransition(
                f"A {transfer.status} transfer moved no money: it cannot be reversed.",
                from_state=transfer.status,
                to_state=Transfer.Status.REVERSED,
            )
        remaining = transfer.posted_amount - transfer.reversed_amount
        if remaining == 0:
            raise InvalidStateTransition(
                "This transfer is already fully reversed.",
                from_state=transfer.status,
                to_state=Transfer.Status.REVERSED,
            )
        amount = remaining if amount is None else amount
        if amount > remaining:
            raise AmountExceedsRemaining(details={"amount": amount, "remaining": remaining})
        source, destination = transfer.source_account, transfer.destination_account
        description = f"Reversal of {transfer.pk}"
        journal = journal_new(
            institution_id=transfer.institution_id,
            kind=Journal.Kind.TRANSFER_REVERSAL,
            description=description,
        )
        reversal = new_row(
            TransferReversal,
            transfer=transfer,
            amount=amount,
            currency=transfer.currency,
            journal=journal,
            **actor.stamp("created_by"),
        )
        reversed_amount = transfer.reversed_amount + amount
        post(
            institution_id=transfer.institution_id,
            currency=transfer.currency,
            moves=[debit(destination.pk, amount), credit(source.pk, amount)],
            journal=journal,
            rows=[reversal],
            lines=statement_lines_new(
                lines=[
                    Line(
                        destination,
                        StatementLine.Type.CASH_DEC,
                        amount,
                        description,
                        card=transfer.destination_card,
                    ),
                    Line(
                        source,
                        StatementLine.Type.CASH_INC,
                        amount,
                        description,
                        card=transfer.source_card,
                    ),
                ],
                currency=transfer.currency,
                journal=journal,
                transfer=transfer,
            ),
            events=[
                event_for(
                    transfer,
                    "transfer.reversed",
                    data={
                        "reversal_id": reversal.pk,
                        "amount": amount,
                        "reversed_amount": reversed_amount,
                        "currency": transfer.currency,
                    },
                )
            ],
        )
        transfer.reversed_amount = reversed_amount
        if transfer.reversed_amount == transfer.posted_amount:
            transfer.status = Transfer.Status.REVERSED
        transfer.updated_at = timezone.now()
        transfer.save(update_fields=["reversed_amount", "status", "updated_at"])
    return reversal
