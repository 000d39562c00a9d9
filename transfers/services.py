"""Transfers and their reversals. Each runs in one transaction with its journal, statement
lines and event, posted in one round trip by `accounts.posting.post`.

Two-phase transfers (docs/two-phase-transfers.md) reuse the holds' machinery as a card
authorization does: created `pending` with a hold of purpose `transfer` on the source
(`hold_place`) and an `Unsettled` line; posted by capturing the hold into the destination
(`hold_capture`, one posting), voided by releasing it, expired by the hold expiry job."""

from dataclasses import dataclass
from functools import partial

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import Account, Hold, Journal, Transaction
from accounts.posting import credit, debit, journal_new, post
from accounts.rules import check_currency
from accounts.services import hold_capture, hold_place, hold_release, holds_expire
from accounts.statement_lines import Line, statement_lines, statement_lines_record
from api.context import iso_millis
from cards.models import Card
from cards.rules import check_card_can_receive, check_card_can_send
from cards.services import check_limits, count_payment, lock_card, unspend
from core.actors import Actor
from core.exceptions import (
    AmountExceedsRemaining,
    DeclinedByMonitoring,
    DuplicateReference,
    InvalidStateTransition,
    NotFound,
    TXError,
    ValidationFailed,
)
from core.metadata import metadata_check, metadata_merge
from core.metrics import TRANSFER_BATCH, TRANSFER_SINGLE, TRANSFER_TWO_PHASE, count_on_commit
from core.operations import Outcome, changed, keep_if_refused, unchanged
from core.rows import new_row, row_update
from events.models import Event
from events.services import emit_for, event_for
from institutions.models import Institution
from monitoring.services import alerts_raise, screen

from .locks import (
    lock_pending_transfer,
    lock_transfer,
    lock_transfer_of_hold,
    lock_transfer_to_reverse,
)
from .models import Transfer, TransferBatch, TransferReversal


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
    batch: TransferBatch | None = None,
    expires_at=None,
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
    raises an alert for every monitoring rule it hits, also when it is refused. `batch`: the
    batch the transfer is an item of.

    With `expires_at` the transfer is two-phase: the same checks, but it is created `pending`,
    its amount held on the source until `expires_at` (a hold of purpose `transfer`), an
    `Unsettled` `CashDec` line on the source and nothing on the destination yet, event
    `transfer.pending` (`transfer_post_pending`, `transfer_void` and the expiry job end it).
    """
    if expires_at is not None and batch is not None:
        raise ValueError("a batch item is never two-phase")
    check_two_accounts(source, destination)
    for card, account in ((source_card, source), (destination_card, destination)):
        if card is not None and card.account_id != account.pk:
            raise ValueError("a card endpoint must be on its account")
    with transaction.atomic(savepoint=False):
        if source_card is not None:
            # The card is the operation's own row: locked before the accounts (accounts.locks),
            # so two payments of one card are serialized and cannot both pass a limit.
            source_card = lock_card(source_card.pk)
            check_card_can_send(source_card)
        if destination_card is not None:
            check_card_can_receive(destination_card)
        # An account's institution and currency never change: checked before any lock, in the
        # order of the docstring (the posting function checks them again).
        if source.institution_id != institution.pk or destination.institution_id != institution.pk:
            raise NotFound("An account of this transfer does not exist.")
        check_currency(source, currency)
        check_currency(destination, currency)
        screening = None
        if source_card is not None:
            usage = check_limits(source_card, amount)
            screening = screen(card=source_card, amount=amount, currency=currency, merchant=None)
        new = transfer_new(
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
            batch=batch,
            metadata=metadata,
        )
        transfer = new.transfer
        if expires_at is not None:
            transfer.status = Transfer.Status.PENDING
            transfer.posted_amount = 0
            transfer.journal = None
            transfer.expires_at = expires_at
            transfer.spend_day = usage.day if source_card is not None else None
        try:
            if reference is not None and references_taken(institution, [reference]):
                raise DuplicateReference(details={"reference": reference})
            if screening is not None and screening.declined:
                raise DeclinedByMonitoring(
                    details={
                        "rule_ids": [
                            rule.pk for rule, _ in screening.hits if rule.action == "decline"
                        ]
                    }
                )
            if expires_at is None:
                post(
                    institution_id=institution.pk,
                    currency=currency,
                    moves=[debit(source.pk, amount), credit(destination.pk, amount)],
                    journal=new.journal,
                    rows=[transfer],
                    lines=new.lines,
                    events=[new.event],
                )
                count_on_commit(TRANSFER_BATCH if batch is not None else TRANSFER_SINGLE)
            else:
                _pending_create(transfer, actor)
        except IntegrityError as error:
            # Another transaction took the reference between the check and the insert.
            if constraint_of(error) != "transfer_reference_unique":
                raise
            raise DuplicateReference(details={"reference": reference}) from None
        except TXError:
            if screening is not None and screening.hits:
                # The alerts about a refused payment outlive the refusal.
                keep_if_refused(
                    partial(_raise_alerts, screening, source_card, amount, currency, None)
                )
            raise
        if source_card is not None:
            count_payment(source_card, usage.day, amount, currency=currency, cash=False)
        if screening is not None and screening.hits:
            _raise_alerts(screening, source_card, amount, currency, transfer.pk)
    return transfer


def transfer_create_for(
    body: dict, ends: list, *, institution: Institution, actor: Actor, batch=None
) -> Transfer:
    """`transfer_create` for a parsed `POST /transfers` body (a batch item is one) whose two
    ends `transfers.endpoints.endpoints_resolve` found."""
    source, destination = ends
    return transfer_create(
        institution=institution,
        source=source.account,
        destination=destination.account,
        source_card=source.card,
        destination_card=destination.card,
        amount=body["amount"],
        currency=body["currency"],
        description=body.get("description", ""),
        reference=body.get("reference"),
        batch=batch,
        actor=actor,
        metadata=body.get("metadata"),
        expires_at=body["hold"]["expires_at"] if "hold" in body else None,
    )


@dataclass(frozen=True)
class NewTransfer:
    """The rows that record one transfer, not yet written: `post` (or `post_many`) writes them
    with the money."""

    journal: Journal
    transfer: Transfer
    lines: list[Transaction]
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
    """The journal, transfer, statement lines (`CashDec` on the source, `CashInc` on the
    destination) and `transfer.posted` event of a transfer (checks are the caller's, but for
    the client's `metadata`: 400 `validation_error` when invalid, `core.metadata`). Every row
    has the journal's instant, which its ledger entries get too."""
    metadata = metadata_check(metadata or {})
    journal = journal_new(
        institution_id=institution.pk, kind=Journal.Kind.TRANSFER, description=description
    )
    now = journal.created_at
    transfer = new_row(
        Transfer,
        institution=institution,
        source_account=source,
        destination_account=destination,
        source_card=source_card,
        destination_card=destination_card,
        amount=amount,
        posted_amount=amount,
        currency=currency,
        description=description,
        journal=journal,
        reference=reference,
        batch=batch,
        metadata=metadata,
        created_at=now,
        updated_at=now,
        **actor.stamp("created_by"),
    )
    lines = statement_lines(
        lines=[
            Line(source, Transaction.Type.CASH_DEC, amount, description, card=source_card),
            Line(
                destination, Transaction.Type.CASH_INC, amount, description, card=destination_card
            ),
        ],
        currency=currency,
        journal=journal,
        transfer=transfer,
        created_at=now,
    )
    data = {
        "amount": amount,
        "currency": currency,
        "sourceAccountId": source.pk,
        "destinationAccountId": destination.pk,
    }
    if source_card is not None:
        data["sourceCardId"] = source_card.pk
    if destination_card is not None:
        data["destinationCardId"] = destination_card.pk
    event = event_for(
        transfer, "transfer.posted", data=data, institution=institution, created_at=now
    )
    return NewTransfer(journal, transfer, lines, event)


def check_two_accounts(source: Account, destination: Account) -> None:
    """A transfer moves money between two accounts, not one (400 `validation_error` on
    `destination`, whether they were named by account or by card)."""
    if source.pk == destination.pk:
        raise ValidationFailed(
            details={"destination": "Must be another account than the source's."}
        )


def references_taken(institution: Institution, references) -> set[str]:
    """Which of `references` a transfer of `institution` already has."""
    return set(
        Transfer.objects.filter(institution=institution, reference__in=references).values_list(
            "reference", flat=True
        )
    )


def constraint_of(error: IntegrityError) -> str | None:
    return getattr(getattr(error.__cause__, "diag", None), "constraint_name", None)


def _raise_alerts(screening, card: Card, amount: int, currency: str, transfer_id) -> None:
    alerts_raise(
        screening=screening,
        card=card,
        amount=amount,
        currency=currency,
        merchant=None,
        subject_type="transfer",
        subject_id=transfer_id,
    )


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
            lines=statement_lines(
                lines=[
                    Line(
                        destination,
                        Transaction.Type.CASH_DEC,
                        amount,
                        description,
                        card=transfer.destination_card,
                    ),
                    Line(
                        source,
                        Transaction.Type.CASH_INC,
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
                        "reversalId": reversal.pk,
                        "amount": amount,
                        "reversedAmount": reversed_amount,
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


# --- two-phase transfers (docs/two-phase-transfers.md) ----------------------------------------
def _pending_create(transfer: Transfer, actor: Actor) -> None:
    """Write a new pending transfer: its hold on the source (the source active with the funds,
    then the destination not closed, both checked under lock in one posting), the transfer
    itself, the source's `Unsettled` line and `transfer.pending`."""
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
                Transaction.Type.CASH_DEC,
                transfer.amount,
                transfer.description,
                settlement_status=Transaction.SettlementStatus.UNSETTLED,
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


def transfer_update_metadata(*, transfer: Transfer, metadata: dict) -> Outcome[Transfer]:
    """Merge `metadata` into the transfer's (`core.metadata.metadata_merge`: null removes a
    key; 400 `validation_error` when invalid or over the limits), whatever its status. Emits
    `transfer.updated` (`changedFields: ["metadata"]`); a merge that changes nothing emits
    nothing."""
    with transaction.atomic(savepoint=False):
        transfer = lock_transfer(transfer)
        previous = row_update(transfer, {"metadata": metadata_merge(transfer.metadata, metadata)})
        if not previous:
            return unchanged(transfer)
        emit_for(transfer, "transfer.updated", data={"changedFields": ["metadata"]})
    return changed(transfer, previous["metadata"])


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
            lines=statement_lines(
                lines=[
                    Line(
                        transfer.destination_account,
                        Transaction.Type.CASH_INC,
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
        Transaction.objects.filter(hold=hold, transfer=transfer).update(
            settlement_status=Transaction.SettlementStatus.PRESENTMENT,
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
    """A two-phase transfer's event: what `transfer_new`'s `transfer.posted` says, its hold,
    and `extra`."""
    data = {
        "amount": transfer.amount,
        "currency": transfer.currency,
        "sourceAccountId": transfer.source_account_id,
        "destinationAccountId": transfer.destination_account_id,
    }
    if transfer.source_card_id is not None:
        data["sourceCardId"] = transfer.source_card_id
    if transfer.destination_card_id is not None:
        data["destinationCardId"] = transfer.destination_card_id
    data["holdId"] = transfer.hold_id
    data.update(extra)
    emit_for(transfer, event_type, data=data, institution=transfer.institution)
