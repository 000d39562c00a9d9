"""Transfers and their reversals. Each runs in one transaction with its journal, statement
lines and event, posted in one round trip by `accounts.posting.post`."""

from dataclasses import dataclass
from functools import partial

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import Account, Journal, Transaction
from accounts.posting import credit, debit, journal_new, post
from accounts.rules import check_currency
from accounts.statement_lines import Line, statement_lines
from cards.models import Card
from cards.rules import check_card_can_receive, check_card_can_send
from cards.services import check_limits, count_payment, lock_card
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
from core.operations import keep_if_refused
from events.models import Event
from events.services import event_for
from institutions.models import Institution
from monitoring.services import alerts_raise, screen

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
    """
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
        )
        transfer = new.transfer
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
            post(
                institution_id=institution.pk,
                currency=currency,
                moves=[debit(source.pk, amount), credit(destination.pk, amount)],
                journal=new.journal,
                rows=[transfer],
                lines=new.lines,
                events=[new.event],
            )
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
) -> NewTransfer:
    """The journal, transfer, statement lines (`CashDec` on the source, `CashInc` on the
    destination) and `transfer.posted` event of a transfer (checks are the caller's)."""
    journal = journal_new(
        institution_id=institution.pk, kind=Journal.Kind.TRANSFER, description=description
    )
    transfer = Transfer(
        institution=institution,
        source_account=source,
        destination_account=destination,
        source_card=source_card,
        destination_card=destination_card,
        amount=amount,
        currency=currency,
        description=description,
        journal=journal,
        reference=reference,
        batch=batch,
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
    event = event_for(transfer, "transfer.posted", data=data, institution=institution)
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

    Reversals add up to at most the original (422 `amount_exceeds_remaining`); a fully reversed
    transfer answers 409 `invalid_state_transition`. The destination must be active with the
    funds and the source not closed (422). `CashDec` on the destination, `CashInc` on the
    source, event `transfer.reversed`; the transfer is `reversed` once nothing remains.
    """
    with transaction.atomic(savepoint=False):
        transfer = (
            Transfer.objects.select_for_update(of=("self",))
            .select_related("institution", "source_account", "destination_account")
            .get(pk=transfer.pk)
        )
        remaining = transfer.amount - transfer.reversed_amount
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
        reversal = TransferReversal(
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
        if transfer.reversed_amount == transfer.amount:
            transfer.status = Transfer.Status.REVERSED
        transfer.updated_at = timezone.now()
        transfer.save(update_fields=["reversed_amount", "status", "updated_at"])
    return reversal
