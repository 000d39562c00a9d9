"""The client's metadata of a transfer (core.metadata, docs/metadata.md)."""

from django.db import transaction

from core.metadata import metadata_merge
from core.operations import Outcome, changed, unchanged
from core.rows import row_update
from events.services import emit_for

from ..locks import lock_transfer
from ..models import Transfer


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
        emit_for(transfer, "transfer.updated", data={"changed_fields": ["metadata"]})
    return changed(transfer, previous["metadata"])
