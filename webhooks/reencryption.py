"""Webhook endpoints' signing secrets under key rotation (`core.reencryption`; registered by
WebhooksConfig)."""

from django.db.models import QuerySet

from core.reencryption import EncryptedRows, decrypting
from webhooks.models import WebhookEndpoint


def _stale(key_id: str) -> QuerySet:
    return WebhookEndpoint.objects.exclude(secret_encrypted__startswith=f"{key_id}:")


def _reseal(endpoint: WebhookEndpoint) -> None:
    endpoint.seal(decrypting(endpoint, endpoint.secret))
    endpoint.save(update_fields=["secret_encrypted"])


WEBHOOK_ENDPOINTS = EncryptedRows(
    name="webhook_endpoints",
    describe="{n} webhook signing secret(s)",
    stale=_stale,
    reseal=_reseal,
)
