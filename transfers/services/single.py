"""A transfer posted at once: its rows (`transfer_new`: journal, transfer, statement lines,
`transfer.posted`) written with the money in one call of the posting function. A single transfer
(`transfer_create`) and a batch's card item (`posted_create`, transfers/batches.py) post alone;
a batch's account items post the same rows in one call for a run of them."""

from dataclasses import dataclass

from django.db import transaction

from accounts.models import Account, Journal, StatementLine
from accounts.posting import credit, debit, journal_new, post
from accounts.statement_lines import Line, statement_lines_new
from cards.models import Card
from core.actors import Actor
from core.metrics import TRANSFER_SINGLE, count_on_commit
from events.models import Event
from events.services import event_for
from institutions.models import Institution

from ..models import Transfer, TransferBatch
from .common import (
    Order,
    card_counted,
    check_ends,
    event_data,
    order_checked,
    refusals,
    transfer_row,
)


def transfer_create(
    *,
    institution: Institution,
    source: Account,
    destination: Account,
    amount: int,
    currency: str,
    description: str = "",
    actor: Actor,
    source_card: Card | None = None,
    destination_card: Card | None = None,
    reference: str | None = None,
    metadata: dict | None = None,
) -> Transfer:
    """Move `amount` from `source` to `destination`, two accounts of `institution` as loaded
    (their institution, currency and kind never change; their status and balances are read
    under lock by the posting function), through `source_card` / `destination_card` when the
    request named cards (on those accounts).

    Checked in this order: two accounts, not one (400 `validation_error` on `destination`,
    whether they were named by account or by card: the only place this is checked); the
    sending card active and within its validity, a receiving card live (422
    `card_not_active`); both accounts and the request in one currency (422
    `currency_mismatch`); the sending card's limits (422 `limit_exceeded`) and the monitoring
    rules (422 `declined_by_monitoring`); the source active with the funds (422
    `account_not_active`, `insufficient_funds`); the destination not closed (422
    `account_not_active`); the `reference` not seen before in the institution (422
    `duplicate_reference`). Posts at once: `CashDec` on the source, `CashInc` on the
    destination, event `transfer.posted`. A card transfer counts against the card's limits and
    raises an alert for every monitoring rule it hits, also when it is refused.

    A two-phase transfer is `two_phase.transfer_pending_create`; a batch's items,
    `transfers.batches.transfer_batch_create`.
    """
    transfer = posted_create(
        Order(
            institution=institution,
            source=source,
            destination=destination,
            amount=amount,
            currency=currency,
            description=description,
            actor=actor,
            source_card=source_card,
            destination_card=destination_card,
            reference=reference,
            metadata=metadata,
        )
    )
    count_on_commit(TRANSFER_SINGLE)
    return transfer


def posted_create(order: Order, *, batch: TransferBatch | None = None) -> Transfer:
    """Check `order` and post it alone (`transfer_create`'s checks and answers), as an item of
    `batch` when given (a batch's card item). The caller counts it (`core.metrics`)."""
    check_ends(order)
    with transaction.atomic(savepoint=False):
        checked = order_checked(order)
        order = checked.order
        new = posted_rows(order, batch=batch)
        with refusals(checked):
            post(
                institution_id=order.institution.pk,
                currency=order.currency,
                moves=[
                    debit(order.source.pk, order.amount),
                    credit(order.destination.pk, order.amount),
                ],
                journal=new.journal,
                rows=[new.transfer],
                lines=new.lines,
                events=[new.event],
            )
        card_counted(checked, new.transfer)
    return new.transfer


@dataclass(frozen=True)
class NewTransfer:
    """The rows that record one transfer posted at once, not yet written: `post` (or
    `post_many`) writes them with the money."""

    journal: Journal
    transfer: Transfer
    lines: list[StatementLine]
    event: Event


def transfer_new(
    *,
    institution: Institution,
    source: Account,
    destination: Account,
    amount: int,
    currency: str,
    description: str,
    actor: Actor,
    source_card: Card | None = None,
    destination_card: Card | None = None,
    reference: str | None = None,
    batch: TransferBatch | None = None,
    metadata: dict | None = None,
) -> NewTransfer:
    """`posted_rows` of the order these fields make (a batch's account items, and tests)."""
    order = Order(
        institution=institution,
        source=source,
        destination=destination,
        amount=amount,
        currency=currency,
        description=description,
        actor=actor,
        source_card=source_card,
        destination_card=destination_card,
        reference=reference,
        metadata=metadata,
    )
    return posted_rows(order, batch=batch)


def posted_rows(order: Order, *, batch: TransferBatch | None = None) -> NewTransfer:
    """The journal, transfer, statement lines (`CashDec` on the source, `CashInc` on the
    destination) and `transfer.posted` event of a transfer posted at once (checks are the
    caller's, but for the client's `metadata`: 400 `validation_error` when invalid,
    `core.metadata`). Every row has the journal's instant, which its ledger entries get too."""
    journal = journal_new(
        institution_id=order.institution.pk,
        kind=Journal.Kind.TRANSFER,
        description=order.description,
    )
    now = journal.created_at
    transfer = transfer_row(
        order, created_at=now, posted_amount=order.amount, journal=journal, batch=batch
    )
    lines = statement_lines_new(
        lines=[
            Line(
                order.source,
                StatementLine.Type.CASH_DEC,
                order.amount,
                order.description,
                card=order.source_card,
            ),
            Line(
                order.destination,
                StatementLine.Type.CASH_INC,
                order.amount,
                order.description,
                card=order.destination_card,
            ),
        ],
        currency=order.currency,
        journal=journal,
        transfer=transfer,
        created_at=now,
    )
    event = event_for(
        transfer,
        "transfer.posted",
        data=event_data(transfer),
        institution=order.institution,
        created_at=now,
    )
    return NewTransfer(journal, transfer, lines, event)
