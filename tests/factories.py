"""factory-boy factories. Institutions go through the service so they get their products."""

import factory

from api.models import Institution
from api.services import api_key_create, institution_create
from customers.models import Customer


class InstitutionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Institution

    name = factory.Sequence(lambda n: f"Test Bank {n}")
    currency = "EUR"

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        institution, _ = institution_create(name=kwargs["name"], currency=kwargs["currency"])
        return institution


class CustomerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Customer

    institution = factory.SubFactory(InstitutionFactory)
    first_name = factory.Faker("first_name")
    last_name = factory.Faker("last_name")
    country_code = "276"


def issue_key(institution, *, allow=("127.0.0.1/32",), scopes=()):
    """A key for `institution`; returns (ApiKey, full secret)."""
    issued = api_key_create(institution=institution, allow=list(allow), scopes=list(scopes))
    return issued.api_key, issued.secret
