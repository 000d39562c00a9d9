"""What staff do to transfers: reverse them (docs/back-office.md, "Actions on a page")."""

from backoffice.actions.base import Confirmation, Reason, StaffAction, said
from core.money import money
from transfers.models import Transfer
from transfers.services import transfer_reverse

reverse_transfers = StaffAction(
    name="reverse_transfers",
    label="Reverse selected transfers (full remaining amount; asks for a reason)",
    model=Transfer,
    # What remains of each (a transfer reversed in full already is refused by the service).
    service=transfer_reverse,
    arguments=lambda transfer, asked: {"transfer": transfer},
    # `transfer_reverse` and `transfer.reversed` take no reason; its statement lines' text
    # ("Reversal of ...") is the customer's, not the place for a staff note.
    reason=Reason(help_text="Written in the admin history with the action."),
    confirmation=Confirmation(
        template="admin/transfers/transfer/reverse_confirmation.html",
        title="Reverse transfers",
        submit="Reverse {n} transfer(s)",
        rows=lambda transfer: {
            "transfer": transfer,
            "amount": money(transfer.amount, transfer.currency),
            "reversed": money(transfer.reversed_amount, transfer.currency),
            "remaining": money(
                transfer.posted_amount - transfer.reversed_amount, transfer.currency
            ),
        },
    ),
    history=lambda outcome, asked: (
        f"Reversed {money(outcome.value.amount, outcome.value.currency)} "
        f"(reversal {outcome.value.pk}; admin action “Reverse”; {said(asked.reason)})."
    ),
    done="Reversed {n} transfer(s).",
    already="Not reversed, left as they were: {ids}.",
    # Money moved, and some of it is not reversed yet.
    applies=lambda transfer, user: (
        transfer.status in (Transfer.Status.POSTED, Transfer.Status.REVERSED)
        and transfer.posted_amount > transfer.reversed_amount
    ),
)
