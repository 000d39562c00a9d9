"""What every kind of transfer shares: the transfer as asked (`Order`), its checks in their one
order, its row and its events' data, and the refusals around its write.

Each kind is a service of its own on these steps, in this order:

1. `check_ends` (outside the transaction): two accounts, each card on its account;
2. `order_checked` (in it): the sending card locked and able to send, the receiving card live,
   the institution, the currency, the card's limits and the monitoring rules;
3. the kind's rows, built as what they are (`transfer_row`, `event_data`);
4. `with refusals(checked)`: the reference and the monitoring verdict, then the kind's write;
5. `card_counted`: a card transfer's limits and alerts, once written.

The kinds: a transfer posted at once (`single.transfer_create`), a two-phase transfer created
pending (`two_phase.transfer_pending_create`), and a batch's items (`transfers.batches`: a run
of account items posted together, a card item posted alone by `single.posted_create`).
"""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import date, datetime
from functools import partial

from django.db import IntegrityError

from accounts.models import Account
from accounts.rules import check_currency
from cards.models import Card
from cards.rules import check_card_can_receive, check_card_can_send
from cards.services import check_limits, count_payment, lock_card
from core.actors import Actor
from core.exceptions import (
    DeclinedByMonitoring,
    DuplicateReference,
    NotFound,
    TXError,
    ValidationFailed,
)
from core.metadata import metadata_check
from core.operations import keep_if_refused
from core.rows import constraint_of, new_row
from institutions.models import Institution
from monitoring.services import Screening, alerts_raise, screen

from ..models import Transfer


# Not frozen: a frozen dataclass sets each field through object.__setattr__, 4x the cost of
# building one (1.1 against 4.9 us for these 11 fields), paid by every item of a batch.
@dataclass(slots=True)
class Order:
    """A transfer as asked: `amount` from `source` to `destination`, two accounts of
    `institution` as loaded (their institution, currency and kind never change; their status and
    balances are read under lock by the posting function), through `source_card` /
    `destination_card` when the request named cards (on those accounts). Never changed once
    built (`dataclasses.replace` makes the checked one)."""

    institution: Institution
    source: Account
    destination: Account
    amount: int
    currency: str
    description: str
    actor: Actor
    source_card: Card | None = None
    destination_card: Card | None = None
    reference: str | None = None
    metadata: dict | None = None


def order_fields(body: dict, ends: list) -> dict:
    """An order's fields but its institution and actor, from a parsed `POST /transfers` body (a
    batch item is one) and its two ends as `transfers.endpoints` resolved them."""
    source, destination = ends
    return {
        "source": source.account,
        "destination": destination.account,
        "source_card": source.card,
        "destination_card": destination.card,
        "amount": body["amount"],
        "currency": body["currency"],
        "description": body.get("description", ""),
        "reference": body.get("reference"),
        "metadata": body.get("metadata"),
    }


@dataclass(frozen=True)
class Checked:
    """An order that passed the checks before its write: its sending card (if any) locked, the
    day the card's limits counted it on, and the monitoring rules' verdict."""

    order: Order
    spend_day: date | None = None
    screening: Screening | None = None


def check_ends(order: Order) -> None:
    """Two accounts, not one (400 `validation_error`, `check_two_accounts`); a card endpoint on
    its own account (`transfers.endpoints` resolves it so: anything else is a bug)."""
    check_two_accounts(order.source, order.destination)
    for card, account in (
        (order.source_card, order.source),
        (order.destination_card, order.destination),
    ):
        if card is not None and card.account_id != account.pk:
            raise ValueError("a card endpoint must be on its account")


def check_two_accounts(source: Account, destination: Account) -> None:
    """A transfer moves money between two accounts, not one (400 `validation_error` on
    `destination`, whether they were named by account or by card)."""
    if source.pk == destination.pk:
        raise ValidationFailed(
            details={"destination": "Must be another account than the source's."}
        )


def check_currencies(source: Account, destination: Account, currency: str) -> None:
    """Both accounts in the transfer's currency (422 `currency_mismatch`). An account's currency
    never changes: no lock needed (the posting function checks it again)."""
    check_currency(source, currency)
    check_currency(destination, currency)


def order_checked(order: Order) -> Checked:
    """The checks of the transaction, in this order: the sending card locked, active and within
    its validity, a receiving card live (422 `card_not_active`); both accounts of the
    institution (404); both in the order's currency (422 `currency_mismatch`); the sending
    card's limits (422 `limit_exceeded`); the monitoring rules screened (their verdict is
    refused by `refusals`)."""
    source_card = order.source_card
    if source_card is not None:
        # The card is the operation's own row: locked before the accounts (transfers.locks),
        # so two payments of one card are serialized and cannot both pass a limit.
        source_card = lock_card(source_card.pk)
        check_card_can_send(source_card)
        order = replace(order, source_card=source_card)
    if order.destination_card is not None:
        check_card_can_receive(order.destination_card)
    # An account's institution and currency never change: checked before any lock, in the
    # order of the docstring (the posting function checks them again).
    institution_id = order.institution.pk
    if order.source.institution_id != institution_id or (
        order.destination.institution_id != institution_id
    ):
        raise NotFound("An account of this transfer does not exist.")
    check_currencies(order.source, order.destination, order.currency)
    if source_card is None:
        return Checked(order)
    usage = check_limits(source_card, order.amount)
    screening = screen(
        card=source_card, amount=order.amount, currency=order.currency, merchant=None
    )
    return Checked(order, usage.day, screening)


def transfer_row(order: Order, *, created_at: datetime, **state) -> Transfer:
    """The transfer's row, not yet written, with what its kind sets (`state`: status, amounts,
    journal, batch, expiry) and the client's `metadata` (400 `validation_error` when invalid,
    `core.metadata`)."""
    return new_row(
        Transfer,
        institution=order.institution,
        source_account=order.source,
        destination_account=order.destination,
        source_card=order.source_card,
        destination_card=order.destination_card,
        amount=order.amount,
        currency=order.currency,
        description=order.description,
        reference=order.reference,
        metadata=metadata_check(order.metadata or {}),
        created_at=created_at,
        updated_at=created_at,
        **order.actor.stamp("created_by"),
        **state,
    )


def event_data(transfer: Transfer) -> dict:
    """What every event of a transfer's money says: its amount, currency, accounts and the
    cards it went through (each only when named)."""
    data = {
        "amount": transfer.amount,
        "currency": transfer.currency,
        "source_account_id": transfer.source_account_id,
        "destination_account_id": transfer.destination_account_id,
    }
    if transfer.source_card_id is not None:
        data["source_card_id"] = transfer.source_card_id
    if transfer.destination_card_id is not None:
        data["destination_card_id"] = transfer.destination_card_id
    return data


@contextmanager
def refusals(checked: Checked) -> Iterator[None]:
    """Around the write of a checked order: first the last checks, the `reference` not seen
    before in the institution (422 `duplicate_reference`) and the monitoring rules' verdict (422
    `declined_by_monitoring`); a reference another transaction took between that check and the
    insert is `duplicate_reference` too; the alerts of a refused card transfer outlive the
    refusal (`core.operations.keep_if_refused`)."""
    order, screening = checked.order, checked.screening
    try:
        if order.reference is not None and references_taken(order.institution, [order.reference]):
            raise DuplicateReference(details={"reference": order.reference})
        if screening is not None and screening.declined:
            raise DeclinedByMonitoring(
                details={
                    "rule_ids": [rule.pk for rule, _ in screening.hits if rule.action == "decline"]
                }
            )
        yield
    except IntegrityError as error:
        # Another transaction took the reference between the check and the insert.
        if constraint_of(error) != "transfer_reference_unique":
            raise
        raise DuplicateReference(details={"reference": order.reference}) from None
    except TXError:
        if screening is not None and screening.hits:
            keep_if_refused(
                partial(
                    _raise_alerts, screening, order.source_card, order.amount, order.currency, None
                )
            )
        raise


def card_counted(checked: Checked, transfer: Transfer) -> None:
    """A card transfer written: counted against the sending card's limits (and in its payment
    log), an alert raised for every monitoring rule it hit."""
    order, screening = checked.order, checked.screening
    if order.source_card is not None:
        count_payment(
            order.source_card, checked.spend_day, order.amount, currency=order.currency, cash=False
        )
    if screening is not None and screening.hits:
        _raise_alerts(screening, order.source_card, order.amount, order.currency, transfer.pk)


def references_taken(institution: Institution, references) -> set[str]:
    """Which of `references` a transfer of `institution` already has."""
    return set(
        Transfer.objects.filter(institution=institution, reference__in=references).values_list(
            "reference", flat=True
        )
    )


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
