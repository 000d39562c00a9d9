"""Holds: place, release, capture, expire. `active -> captured | released | expired`.

A hold adds its amount to the account's `pending`, so `available` drops at once. A capture
moves the captured amount to the institution's settlement account (a standalone hold has no
other destination) and releases the rest; a release or an expiry gives the amount back.
"""

from django.db import transaction
from django.utils import timezone

from core.actors import Actor
from core.exceptions import AmountExceedsRemaining, InvalidStateTransition
from core.metadata import metadata_check, metadata_merge
from core.operations import Outcome, changed, unchanged
from core.rows import new_row, row_update
from core.timestamps import iso_millis
from events.models import Event
from events.services import emit_for, event_for

from ..locks import lock_accounts, lock_due_holds, lock_hold
from ..models import Account, Hold, Journal, StatementLine
from ..posting import DEBIT, FORCED, Move, credit, journal_new, post
from ..statement_lines import Line, statement_lines_new
from .accounts import internal_account


def hold_place(
    *,
    account: Account,
    amount: int,
    currency: str,
    expires_at,
    reason: str = "",
    actor: Actor,
    purpose: str = Hold.Purpose.HOLD,
    destination: Account | None = None,
    metadata: dict | None = None,
    forced: bool = False,
) -> Hold:
    """Hold `amount` on an active account that has it available (422 `account_not_active`,
    `insufficient_funds`, `currency_mismatch`). `destination`: the account the held money is
    meant for (a two-phase transfer's), checked in the same posting, after the account: not
    closed (422 `account_not_active`), in `currency`. `metadata`: the client's
    (`core.metadata`; 400 `validation_error` when invalid). `forced`: a card network's advice,
    held whatever is available on an account that is not closed (`accounts.posting.FORCED`).
    Emits `hold.created`."""
    metadata = metadata_check(metadata or {})
    moves = [
        Move(account.pk, FORCED, pending=amount)
        if forced
        else Move(account.pk, DEBIT, pending=amount, needs=amount)
    ]
    if destination is not None:
        moves.append(credit(destination.pk, 0))
    with transaction.atomic(savepoint=False):
        hold = new_row(
            Hold,
            institution=account.institution,
            account=account,
            amount=amount,
            currency=currency,
            reason=reason,
            expires_at=expires_at,
            purpose=purpose,
            metadata=metadata,
            **actor.stamp("placed_by"),
        )
        post(
            institution_id=account.institution_id,
            currency=currency,
            moves=moves,
            rows=[hold],
            events=[_event(hold, "hold.created")],
        )
    return hold


def hold_release(*, hold: Hold, purpose: str = Hold.Purpose.HOLD) -> Hold:
    """Release an active hold of `purpose` (409 `invalid_state_transition` otherwise: a card
    authorization's hold is released by reversing the authorization). A hold past its
    `expires_at` that the expiry job has not closed yet may still be released: it gives the
    amount back, as the expiry would. Emits `hold.released`."""
    return _close(hold.pk, Hold.Status.RELEASED, "hold.released", purpose=purpose)


def hold_expire(*, hold: Hold, purpose: str = Hold.Purpose.HOLD) -> Hold:
    """Expire one active hold of `purpose` (the batch job is `holds_expire`). Emits
    `hold.expired`."""
    return _close(hold.pk, Hold.Status.EXPIRED, "hold.expired", purpose=purpose)


def hold_capture(
    *,
    hold: Hold,
    amount: int | None = None,
    purpose: str = Hold.Purpose.HOLD,
    counterparty: str = Account.InternalCode.SETTLEMENT,
    max_amount: int | None = None,
    statement_line: bool = True,
    destination: Account | None = None,
    journal: Journal | None = None,
    lines: list[StatementLine] = (),
    forced: bool = False,
) -> Hold:
    """Capture `amount` (default: all) of an active hold; the rest is released. `forced`: a
    card network's force post, captured on an account that is not closed, whatever is
    available (`accounts.posting.FORCED`).

    The captured amount moves from the account to the institution's internal `counterparty`
    account (settlement; card network clearing for a card presentment), with a `CashDec`
    statement line unless the caller records its own. 409 `invalid_state_transition` unless
    active (or not of `purpose`), and for a standalone hold (purpose `hold`) past its
    `expires_at` even before the expiry job closed it (`from: expired`); 422
    `amount_exceeds_remaining` above `max_amount` (default: the held amount), 422
    `account_not_active` when the account is no longer active, 422 `insufficient_funds` when
    what is captured above the held amount is not available. Emits `hold.captured`.

    A two-phase transfer's hold (purpose `transfer`) is captured into its `destination`, a
    customer account that must not be closed (422 `account_not_active`), recorded by the
    caller's `journal` and statement `lines` (written in the same posting).
    """
    with transaction.atomic(savepoint=False):
        hold = lock_hold(hold.pk)
        _require_active(hold, Hold.Status.CAPTURED, purpose)
        if hold.purpose != Hold.Purpose.CARD_AUTHORIZATION and hold.expires_at <= timezone.now():
            # Past `expiresAt` the hold is over, whether or not the expiry job has run yet: the
            # answer must not depend on the job's timing. A card authorization's hold is not
            # refused here: a network may present after the authorization's expiry (force post),
            # docs/card-transactions.md.
            raise InvalidStateTransition(
                f"This hold expired at {iso_millis(hold.expires_at)}; it cannot be captured.",
                from_state=Hold.Status.EXPIRED,
                to_state=Hold.Status.CAPTURED,
            )
        amount = hold.amount if amount is None else amount
        max_amount = hold.amount if max_amount is None else max_amount
        if amount > max_amount:
            details = {"amount": amount, "held": hold.amount}
            if max_amount != hold.amount:
                details["maximum"] = max_amount
            raise AmountExceedsRemaining(details=details)
        if destination is None:
            settlement = internal_account(
                institution=hold.institution, code=counterparty, currency=hold.currency
            )
            counterparty_move = credit(settlement.pk, amount, check="")
        else:
            counterparty_move = credit(destination.pk, amount)
        journal = journal or journal_new(
            institution_id=hold.institution_id,
            kind=Journal.Kind.HOLD_CAPTURE,
            description=hold.reason,
        )
        hold.status = Hold.Status.CAPTURED
        hold.captured_amount = amount
        hold.capture_journal = journal
        hold.updated_at = hold.closed_at = journal.created_at
        post(
            institution_id=hold.institution_id,
            currency=hold.currency,
            moves=[
                # The held amount is given back and the captured one leaves: only what is
                # captured above the hold must still be available.
                Move(
                    hold.account_id,
                    FORCED if forced else DEBIT,
                    posted=-amount,
                    pending=-hold.amount,
                    needs=0 if forced else max(amount - hold.amount, 0),
                ),
                counterparty_move,
            ],
            journal=journal,
            lines=[
                *statement_lines_new(
                    lines=[Line(hold.account, StatementLine.Type.CASH_DEC, amount, hold.reason)]
                    if statement_line
                    else [],
                    currency=hold.currency,
                    journal=journal,
                    hold=hold,
                ),
                *lines,
            ],
            events=[_event(hold, "hold.captured")],
        )
        hold.save(
            update_fields=[
                "status",
                "captured_amount",
                "capture_journal",
                "updated_at",
                "closed_at",
            ]
        )
    return hold


def holds_expire(
    *, now=None, batch_size: int = 500, purpose: str = Hold.Purpose.HOLD, on_expired=None
) -> int:
    """Expire the active holds of `purpose` whose time has come; return how many. Safe to run
    from several processes at once: each batch takes only rows no one else has locked (SKIP
    LOCKED). `on_expired(hold)` runs in the hold's transaction (a card authorization gives its
    limit usage back)."""
    now = now or timezone.now()
    expired = 0
    while True:
        with transaction.atomic():
            batch = lock_due_holds(now=now, purpose=purpose, size=batch_size)
            ids = [hold_id for hold_id, _ in batch]
            # The batch is one transaction: lock all its accounts now, in id order, not one by
            # one in expiry order (which can deadlock with a transfer between two of them).
            lock_accounts(account_id for _, account_id in batch)
            for hold_id in ids:
                hold = _close(hold_id, Hold.Status.EXPIRED, "hold.expired", purpose=purpose)
                if on_expired is not None:
                    on_expired(hold)
        expired += len(ids)
        if len(ids) < batch_size:
            return expired


def hold_update_metadata(*, hold: Hold, metadata: dict) -> Outcome[Hold]:
    """Merge `metadata` into the hold's (`core.metadata.metadata_merge`: null removes a key;
    400 `validation_error` when invalid or over the limits), whatever its status. Emits
    `hold.updated` (`changedFields: ["metadata"]`); a merge that changes nothing emits
    nothing."""
    with transaction.atomic(savepoint=False):
        hold = lock_hold(hold.pk)
        previous = row_update(hold, {"metadata": metadata_merge(hold.metadata, metadata)})
        if not previous:
            return unchanged(hold)
        emit_for(hold, "hold.updated", data={"changed_fields": ["metadata"]})
    return changed(hold, previous["metadata"])


def _close(hold_id: str, status: str, event_type: str, *, purpose: str) -> Hold:
    with transaction.atomic(savepoint=False):
        hold = lock_hold(hold_id)
        _require_active(hold, status, purpose)
        hold.status = status
        hold.updated_at = hold.closed_at = timezone.now()
        post(
            institution_id=hold.institution_id,
            currency=hold.currency,
            moves=[Move(hold.account_id, pending=-hold.amount)],
            events=[_event(hold, event_type)],
        )
        hold.save(update_fields=["status", "updated_at", "closed_at"])
    return hold


# Whose hold it is, when it is not a standalone hold: what to do instead.
_OWNED_BY = {
    Hold.Purpose.CARD_AUTHORIZATION: (
        "This hold belongs to a card authorization: reverse or present the authorization."
    ),
    Hold.Purpose.TRANSFER: "This hold belongs to a pending transfer: post or void the transfer.",
}


def _require_active(hold: Hold, to_status: str, purpose: str) -> None:
    if hold.purpose != purpose:
        raise InvalidStateTransition(
            _OWNED_BY.get(hold.purpose, "This hold cannot be changed this way."),
            from_state=hold.status,
            to_state=to_status,
        )
    if hold.status != Hold.Status.ACTIVE:
        raise InvalidStateTransition(
            f"A {hold.status} hold cannot become {to_status}.",
            from_state=hold.status,
            to_state=to_status,
        )


def _event(hold: Hold, event_type: str) -> Event:
    return event_for(
        hold,
        event_type,
        data={
            "account_id": hold.account_id,
            "amount": hold.amount,
            "captured_amount": hold.captured_amount,
            "currency": hold.currency,
        },
    )
