from django.db.models import Q

from core.selectors import get_of_institution
from institutions.models import Institution

from .models import Transfer, TransferBatch


def transfer_list(*, institution: Institution, account_id: str | None = None):
    transfers = Transfer.objects.filter(institution=institution)
    if account_id:
        transfers = transfers.filter(
            Q(source_account_id=account_id) | Q(destination_account_id=account_id)
        )
    return transfers


def transfer_get(*, institution: Institution, transfer_id: str) -> Transfer:
    return get_of_institution(
        Transfer, institution=institution, id=transfer_id, missing="No transfer with this id."
    )


def transfer_batch_get(*, institution: Institution, batch_id: str) -> TransferBatch:
    return get_of_institution(
        TransferBatch,
        institution=institution,
        id=batch_id,
        missing="No transfer batch with this id.",
    )
