"""Reads of webhook endpoints, always scoped to one institution: another institution's
endpoint answers the same 404 as an unknown id. The secret column is never read here."""

from core.exceptions import NotFound
from institutions.models import Institution

from .models import WebhookEndpoint


def webhook_endpoint_list(*, institution: Institution):
    return WebhookEndpoint.objects.filter(institution=institution).defer("secret_encrypted")


def webhook_endpoint_get(*, institution: Institution, endpoint_id: str) -> WebhookEndpoint:
    endpoint = (
        WebhookEndpoint.objects.filter(institution=institution, id=endpoint_id)
        .defer("secret_encrypted")
        .first()
    )
    if endpoint is None:
        raise NotFound("No webhook endpoint with this id.")
    return endpoint
