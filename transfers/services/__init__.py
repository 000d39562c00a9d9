"""Transfers' services, one module per kind on one shared core (`common`: the checks in their
order, the rows, the refusals around the write):

- `single`: a transfer posted at once (`transfer_create`), its rows (`transfer_new`) and the
  posting of a batch's card item (`posted_create`); batches themselves are transfers/batches.py;
- `two_phase`: a transfer created pending (`transfer_pending_create`), then posted, voided or
  expired (docs/two-phase-transfers.md);
- `reversals`: a posted transfer sent back;
- `metadata`: the client's metadata of a transfer.

Each runs in one transaction with its journal, statement lines and event, posted in one round
trip by `accounts.posting.post`. Callers import from here."""

from .common import (
    Order,
    check_currencies,
    check_two_accounts,
    order_fields,
    references_taken,
)
from .metadata import transfer_update_metadata
from .reversals import transfer_reverse
from .single import NewTransfer, posted_create, posted_rows, transfer_create, transfer_new
from .two_phase import (
    transfer_pending_create,
    transfer_post_pending,
    transfer_resolve,
    transfer_void,
    transfers_expire,
)

__all__ = [
    "NewTransfer",
    "Order",
    "check_currencies",
    "check_two_accounts",
    "order_fields",
    "posted_create",
    "posted_rows",
    "references_taken",
    "transfer_create",
    "transfer_new",
    "transfer_pending_create",
    "transfer_post_pending",
    "transfer_resolve",
    "transfer_reverse",
    "transfer_update_metadata",
    "transfer_void",
    "transfers_expire",
]
