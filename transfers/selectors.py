from django.db.models import Q

from core.exceptions import NotFound
from institutions.models import Institution

from .models import Transfer


def transfer_list(*, institution: Institution, account_id: str | None = None):
    transfers = Transfer.objects.filter(institution=institution)
    if account_id:
        transfers = transfers.filter(
            Q(source_account_id=account_id) | Q(destination_account_id=account_id)
        )
    return transfers


def transfer_get(*, institution: Institution, transfer_id: str) -> Transfer:
    transfer = Transfer.objects.filter(institution=institution, id=transfer_id).first()
    if transfer is None:
        raise NotFound("No transfer with this id.")
    return transfer
