from core.exceptions import NotFound
from institutions.models import Institution

from .models import Customer


def customer_list(*, institution: Institution):
    return Customer.objects.filter(institution=institution)


def customer_get(*, institution: Institution, customer_id: str) -> Customer:
    """The institution's customer; another institution's answers the same 404 as an unknown id."""
    customer = Customer.objects.filter(institution=institution, id=customer_id).first()
    if customer is None:
        raise NotFound("No customer with this id.")
    return customer
