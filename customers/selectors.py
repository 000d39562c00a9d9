from core.selectors import get_of_institution
from institutions.models import Institution

from .models import Customer


def customer_list(*, institution: Institution):
    return Customer.objects.filter(institution=institution)


def customer_get(*, institution: Institution, customer_id: str) -> Customer:
    """The institution's customer; another institution's answers the same 404 as an unknown id."""
    return get_of_institution(
        Customer, institution=institution, id=customer_id, missing="No customer with this id."
    )
