"""Decisioning endpoints' signing secrets under key rotation (`core.reencryption`; registered
by DecisioningConfig): the current secret and, during a rotation's overlap, the previous one."""

from django.db.models import Q, QuerySet

from core.reencryption import EncryptedRows, decrypting
from decisioning.models import DecisioningEndpoint


def _stale(key_id: str) -> QuerySet:
    prefix = f"{key_id}:"
    return DecisioningEndpoint.objects.filter(
        ~Q(secret_encrypted__startswith=prefix)
        | (~Q(previous_secret_encrypted="") & ~Q(previous_secret_encrypted__startswith=prefix))
    )


def _reseal(endpoint: DecisioningEndpoint) -> None:
    endpoint.seal(decrypting(endpoint, endpoint.secret))
    endpoint.seal_previous(decrypting(endpoint, endpoint.previous_secret))
    endpoint.save(update_fields=["secret_encrypted", "previous_secret_encrypted"])


DECISIONING_ENDPOINTS = EncryptedRows(
    name="decisioning_endpoints",
    describe="{n} decisioning signing secret(s)",
    stale=_stale,
    reseal=_reseal,
)
