"""Two-phase transfers (docs/two-phase-transfers.md), on the holds' machinery as a card
authorization is: created `pending` with a hold of purpose `transfer` on the source
(`hold_place`) and an `Unsettled` line (`transfer_pending_create`); posted by capturing the hold
into the destination (`hold_capture`, one posting: `transfer_post_pending`), voided by releasing
it (`transfer_void`), expired by the hold expiry job (`transfers_expire`)."""

from django.db import transaction
from django.utils import timezone

from accounts.models import Account, Hold, Journal, StatementLine
from accounts.posting import journal_new
from accounts.services import hold_capture, hold_place, hold_release, holds_expire
from accounts.statement_lines import Line, statement_lines_new, statement_lines_record
from cards.models import Card
from cards.services import unspend
from core.actors import Actor
from core.exceptions import AmountExceedsRemaining, InvalidStateTransition
from core.metrics import TRANSFER_TWO_PHASE, count_on_commit
from core.timestamps import iso_millis
from events.services import emit_for
from institutions.models import Institution

from ..locks import lock_pending_transfer, lock_transfer_of_hold
from ..models import Transfer
from .common import (
    Order,
    card_counted,
    check_ends,
    event_data,
    order_checked,
    refusals,
    transfer_row,
)


def transfer_pending_create(
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
    expires_at,
) -> Transfer:
    """A two-phase transfer: the checks of `single.transfer_create`, in its order and with its
    answers, but it is created `pending`: its amount held on the source until `expires_at` (a
    hold of purpose `transfer`; the source active with the funds, then the destination not
    closed, both checked under lock in the hold's posting), an `Unsettled` `CashDec` line on
    the source and nothing on the destination yet, events `hold.created` and
    `transfer.pending`. A card source's limits count the amount on today (`spend_day`, given
    back when voided or expired). `transfer_post_pending`, `transfer_void` and the expiry job
    end it."""
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
    check_ends(order)
    with transaction.atomic(savepoint=False):
        checked = order_checked(order)
        transfer = transfer_row(
            checked.order,
            created_at=timezone.now(),
            status=Transfer.Status.PENDING,
            posted_amount=0,
            expires_at=expires_at,
            spend_day=checked.spend_day,
        )
        with refusals(checked):
            _pending_write(transfer, actor)
        card_counted(checked, transfer)
    return transfer


def _pending_write(transfer: Transfer, actor: Actor) -> None:
    """Write a new pending transfer: its hold on the source (one posting), the transfer itself,
    the source's `Unsettled` line and `transfer.pending`."""
    source, destination = transfer.source_account, transfer.destination_account
    transfer.hold = hold_place(
        account=source,
        amount=transfer.amount,
        currency=transfer.currency,
        expires_at=transfer.expires_at,
        reason=transfer.description or f"Transfer {transfer.pk}",
        actor=actor,
        purpose=Hold.Purpose.TRANSFER,
        destination=destination,
    )
    transfer.save(force_insert=True)
    statement_lines_record(
        lines=[
            Line(
                source,
                StatementLine.Type.CASH_DEC,
                transfer.amount,
                transfer.description,
                settlement_status=StatementLine.SettlementStatus.UNSETTLED,
                card=transfer.source_card,
            )
        ],
        currency=transfer.currency,
        hold=transfer.hold,
        transfer=transfer,
    )
    _emit(transfer, "transfer.pending", expiresAt=iso_millis(transfer.expires_at))


def transfer_resolve(
    *, transfer: Transfer, status: str, amount: int | None = None, actor: Actor
) -> Transfer:
    """`PATCH /transfers/{id}`: post (`amount` optional) or void a pending transfer."""
    if status == Transfer.Status.POSTED:
        return transfer_post_pending(transfer=transfer, amount=amount, actor=actor)
    if status == Transfer.Status.VOIDED and amount is None:
        return transfer_void(transfer=transfer, actor=actor)
    raise ValueError(f"not a resolution: {status} (amount {amount})")


def transfer_post_pending(
    *, transfer: Transfer, amount: int | None = None, actor: Actor
) -> Transfer:
    """Post a pending transfer for `amount` (default: all of it; at most the held amount, 422
    `amount_exceeds_remaining`), releasing the rest: the money moves from the source to the
    destination in one posting (the held amount given back and `amount` debited, no funds
    check: they were held; the source active and the destination not closed, 422
    `account_not_active`). The source's `Unsettled` line becomes `Presentment` for `amount`,
    the destination gets its `CashInc` line; a card source's limits keep only `amount`.
    409 `invalid_state_transition` unless pending, and past `expiresAt` even before the expiry
    job ran (`from: expired`). Emits `hold.captured` and `transfer.posted`."""
    with transaction.atomic(savepoint=False):
        transfer = _lock_pending(transfer, Transfer.Status.POSTED)
        if transfer.expires_at <= timezone.now():
            # As for a standalone hold: past `expiresAt` it is over, whether or not the job ran.
            raise InvalidStateTransition(
                f"This transfer expired at {iso_millis(transfer.expires_at)}; it cannot be posted.",
                from_state=Transfer.Status.EXPIRED,
                to_state=Transfer.Status.POSTED,
            )
        amount = transfer.amount if amount is None else amount
        if amount > transfer.amount:
            raise AmountExceedsRemaining(details={"amount": amount, "held": transfer.amount})
        journal = journal_new(
            institution_id=transfer.institution_id,
            kind=Journal.Kind.TRANSFER,
            description=transfer.description,
        )
        hold = hold_capture(
            hold=transfer.hold,
            amount=amount,
            purpose=Hold.Purpose.TRANSFER,
            statement_line=False,
            destination=transfer.destination_account,
            journal=journal,
            lines=statement_lines_new(
                lines=[
                    Line(
                        transfer.destination_account,
                        StatementLine.Type.CASH_INC,
                        amount,
                        transfer.description,
                        card=transfer.destination_card,
                    )
                ],
                currency=transfer.currency,
                journal=journal,
                transfer=transfer,
            ),
        )
        StatementLine.objects.filter(hold=hold, transfer=transfer).update(
            settlement_status=StatementLine.SettlementStatus.PRESENTMENT,
            amount=amount,
            journal=journal,
        )
        if transfer.source_card is not None and amount < transfer.amount:
            unspend(transfer.source_card, transfer.spend_day, transfer.amount - amount)
        transfer.hold = hold
        transfer.status = Transfer.Status.POSTED
        transfer.posted_amount = amount
        transfer.journal = journal
        transfer.updated_at = journal.created_at
        transfer.save(update_fields=["status", "posted_amount", "journal", "updated_at"])
        _emit(transfer, "transfer.posted", amount=amount, heldAmount=transfer.amount)
        count_on_commit(TRANSFER_TWO_PHASE)
    return transfer


def transfer_void(*, transfer: Transfer, actor: Actor) -> Transfer:
    """Void a pending transfer: its hold is released (also past `expiresAt` if the expiry job
    has not run yet, as a standalone hold's release), a card source's limits get the amount
    back, the source's line stays `Unsettled` with its hold released (status `reversed`, as a
    reversed card authorization's). 409 `invalid_state_transition` unless pending. Emits
    `hold.released` and `transfer.voided`."""
    with transaction.atomic(savepoint=False):
        transfer = _lock_pending(transfer, Transfer.Status.VOIDED)
        transfer.hold = hold_release(hold=transfer.hold, purpose=Hold.Purpose.TRANSFER)
        _end(transfer, Transfer.Status.VOIDED)
    return transfer


def transfers_expire(*, now=None, batch_size: int = 500) -> int:
    """Expire the pending transfers past `expiresAt` (the hold expiry job); return how many.
    Their holds expire (`hold.expired`), a card source's limits get the amount back, event
    `transfer.expired`. Safe from several processes at once: `holds_expire` takes each hold
    with SKIP LOCKED, and a resolution locks the hold first too (`_lock_pending`)."""
    return holds_expire(
        now=now, batch_size=batch_size, purpose=Hold.Purpose.TRANSFER, on_expired=_expired
    )


def _expired(hold: Hold) -> None:
    # The job holds the hold's lock, and the hold was active: the transfer is pending and no
    # resolution can reach it (each locks the hold first).
    transfer = lock_transfer_of_hold(hold)
    transfer.hold = hold
    _end(transfer, Transfer.Status.EXPIRED)


def _end(transfer: Transfer, status: str) -> None:
    """A pending transfer voided or expired (its hold already closed)."""
    if transfer.source_card is not None:
        unspend(transfer.source_card, transfer.spend_day, transfer.amount)
    transfer.status = status
    transfer.updated_at = timezone.now()
    transfer.save(update_fields=["status", "updated_at"])
    _emit(transfer, f"transfer.{status}")


def _lock_pending(transfer: Transfer, to_state: str) -> Transfer:
    """The transfer, locked and pending (409 `invalid_state_transition` otherwise), its hold
    locked first (`transfers.locks.lock_pending_transfer`)."""
    locked = lock_pending_transfer(transfer)
    if locked.status != Transfer.Status.PENDING:
        raise InvalidStateTransition(
            f"A {locked.status} transfer cannot be {to_state}.",
            from_state=locked.status,
            to_state=to_state,
        )
    return locked


def _emit(transfer: Transfer, event_type: str, **extra) -> None:
    """A two-phase transfer's event: what every transfer event says (`event_data`), its hold,
    and `extra`."""
    data = event_data(transfer)
    data["hold_id"] = transfer.hold_id
    data.update(extra)
    emit_for(transfer, event_type, data=data, institution=transfer.institution)
