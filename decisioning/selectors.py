"""Reads of decisioning endpoints, always scoped to one institution: another institution's
endpoint answers the same 404 as an unknown id. The secret columns are never read here."""

from core.selectors import get_of_institution
from institutions.models import Institution

from .models import DecisioningEndpoint

SECRET_FIELDS = ("secret_encrypted", "previous_secret_encrypted")


def decisioning_endpoint_list(*, institution: Institution):
    return DecisioningEndpoint.objects.filter(institution=institution).defer(*SECRET_FIELDS)


def decisioning_endpoint_get(*, institution: Institution, endpoint_id: str) -> DecisioningEndpoint:
    return get_of_institution(
        DecisioningEndpoint.objects.defer(*SECRET_FIELDS),
        institution=institution,
        id=endpoint_id,
        missing="No decisioning endpoint with this id.",
    )
