"""The locks transfers take, each built here (accounts.locks is the model: small functions
building the locking querysets, rows by primary key).

The order, outermost first, so two operations never wait for each other in a cycle:

1. a batch: the institution's batch queue (`lock_batch_queue`, an advisory lock), then every
   card of the batch (`lock_cards`, by id), then every account (`accounts.locks.lock_accounts`,
   by id), or, posted in one call, the accounts alone, locked by `tx_post_many`;
2. a transfer created (single or two-phase): its sending card (cards' `lock_card`),
   then its accounts, by id, in `tx_post`;
3. a two-phase transfer resolved: its hold (`accounts.locks.lock_hold`), then the transfer
   (`lock_pending_transfer`), then the accounts in `tx_post`; the expiry job takes the hold
   (SKIP LOCKED), the accounts, then the transfer (`lock_transfer_of_hold`): both start at the
   hold, so whoever has it decides;
4. a reversal or a metadata update: the transfer (`lock_transfer_to_reverse`,
   `lock_transfer`), then the accounts in `tx_post`.

Only the transfer's own row is locked (`of=("self",)`): a FOR UPDATE over the joined rows would
lock the institution and the accounts out of their order.
"""

from django.db import connection

from accounts.locks import lock_hold
from cards.models import Card
from institutions.models import Institution

from .models import Transfer


def lock_transfer(transfer: Transfer) -> Transfer:
    """The transfer's row, locked (its metadata changes)."""
    return Transfer.objects.select_for_update().get(pk=transfer.pk)


def lock_transfer_to_reverse(transfer: Transfer) -> Transfer:
    """The transfer, locked, with its institution and accounts (not locked here: `tx_post`
    locks them)."""
    return (
        Transfer.objects.select_for_update(of=("self",))
        .select_related("institution", "source_account", "destination_account")
        .get(pk=transfer.pk)
    )


def lock_pending_transfer(transfer: Transfer) -> Transfer:
    """A two-phase transfer to resolve: its hold locked first, then the transfer, with what its
    resolution reads. The order of the expiry job (which takes the hold, then the transfer), so
    the two never wait for each other."""
    if transfer.hold_id is not None:
        lock_hold(transfer.hold_id)
    return (
        Transfer.objects.select_for_update(of=("self",))
        .select_related(
            "institution",
            "source_account",
            "destination_account",
            "source_card",
            "destination_card",
            "hold",
        )
        .get(pk=transfer.pk)
    )


def lock_transfer_of_hold(hold) -> Transfer:
    """The transfer of a hold the expiry job holds locked, with what its expiry reads."""
    return (
        Transfer.objects.select_for_update(of=("self",))
        .select_related("institution", "source_card")
        .get(hold=hold)
    )


def lock_cards(card_ids) -> None:
    """The cards, locked in id order (a batch's cards, before its accounts)."""
    ids = sorted(set(card_ids))
    if ids:
        list(
            Card.objects.select_for_update(of=("self",))
            .filter(pk__in=ids)
            .order_by("pk")
            .values_list("pk")
        )


def lock_batch_queue(institution: Institution) -> None:
    """The institution's batches post one at a time (a transaction-level advisory lock, taken
    before any row lock and held to the end). Two batches share most of their accounts more
    often than not, and queueing them on one lock costs PostgreSQL one wake-up instead of one
    per row the later batch waits for (measured in bench/README.md). Single transfers do not
    take it: they are never behind a whole batch but for their own two accounts."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            [f"transfers.batch:{institution.pk}"],
        )
