"""Reads of decisioning endpoints, always scoped to one institution: another institution's
endpoint answers the same 404 as an unknown id. The secret columns are never read here."""

from django.db.models import F, Q

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


def decisioning_endpoint_for_card(card) -> DecisioningEndpoint | None:
    """The endpoint that decides `card`'s authorizations: its card product's when that one is
    enabled, else the institution's when enabled; None: TX decides alone. With its secrets
    (the call signs with them)."""
    candidates = DecisioningEndpoint.objects.filter(
        institution_id=card.institution_id, enabled=True
    ).filter(Q(card_product_id=card.product_id) | Q(card_product__isnull=True))
    # The card product's first (NULLs last), in one statement.
    return candidates.order_by(F("card_product_id").asc(nulls_last=True)).first()
