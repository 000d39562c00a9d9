"""Reads of webhook endpoints, always scoped to one institution: another institution's
endpoint answers the same 404 as an unknown id. The secret column is never read here."""

from core.selectors import get_of_institution
from institutions.models import Institution

from .models import WebhookEndpoint


def webhook_endpoint_list(*, institution: Institution):
    return WebhookEndpoint.objects.filter(institution=institution).defer("secret_encrypted")


def webhook_endpoint_get(*, institution: Institution, endpoint_id: str) -> WebhookEndpoint:
    return get_of_institution(
        WebhookEndpoint.objects.defer("secret_encrypted"),
        institution=institution,
        id=endpoint_id,
        missing="No webhook endpoint with this id.",
    )
