"""factory-boy factories. Institutions go through the service so they get their products."""

import factory

from customers.models import Customer
from institutions import scopes as api_scopes
from institutions.models import Institution
from institutions.services import api_key_create, institution_create


class InstitutionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Institution

    # Zero-padded: a bare number in a name could be taken for a CVV by the tests that scan
    # pages for secrets (tests/backoffice/cards/test_admin.py: "Test Bank 739" on a page after the
    # 739th institution of a run).
    name = factory.Sequence(lambda n: f"Test Bank {n:06d}")
    currency = "EUR"

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        name, currency = kwargs.pop("name"), kwargs.pop("currency")
        institution, _ = institution_create(name=name, currency=currency)
        if kwargs:  # the rest (a time zone...) as given
            for field, value in kwargs.items():
                setattr(institution, field, value)
            institution.save(update_fields=list(kwargs))
        return institution


class CustomerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Customer

    institution = factory.SubFactory(InstitutionFactory)
    first_name = factory.Faker("first_name")
    last_name = factory.Faker("last_name")
    country_code = "276"


# Every scope but full card details: tests of other behaviour are not about scopes, and
# `cards:sensitive` is the one a test must ask for (scope tests narrow keys further).
DEFAULT_TEST_SCOPES = tuple(s for s in api_scopes.ALL if s != api_scopes.CARDS_SENSITIVE)


def issue_key(institution, *, allow=("127.0.0.1/32",), scopes=DEFAULT_TEST_SCOPES):
    """A key for `institution`; returns (ApiKey, full secret)."""
    issued = api_key_create(institution=institution, allow=list(allow), scopes=list(scopes))
    return issued.api_key, issued.secret
