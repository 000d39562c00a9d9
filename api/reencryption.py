"""Idempotency records' stored responses under key rotation (`core.reencryption`; registered by
ApiConfig). A response stored in clear before encryption began is stale under every key: a run
encrypts it too."""

from django.db.models import BinaryField, QuerySet
from django.db.models.functions import Substr

from api import idempotency
from api.models import IdempotencyRecord
from core.reencryption import EncryptedRows, decrypting


def _stale(key_id: str) -> QuerySet:
    current = idempotency.SEALED + f"{key_id}:".encode()
    return (
        IdempotencyRecord.objects.filter(response_body__isnull=False)
        .alias(head=Substr("response_body", 1, len(current), output_field=BinaryField()))
        .exclude(head=current)
    )


def _reseal(record: IdempotencyRecord) -> None:
    body = decrypting(record, lambda: idempotency.opened(record.pk, bytes(record.response_body)))
    record.response_body = idempotency.sealed(record.pk, body)
    record.save(update_fields=["response_body"])


IDEMPOTENCY_RECORDS = EncryptedRows(
    name="idempotency_records",
    describe="{n} stored idempotent response(s)",
    stale=_stale,
    reseal=_reseal,
)
