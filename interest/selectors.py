"""Reads of interest: a product's terms (docs/interest.md)."""

from accounts.models import AccountProduct

from .models import InterestTerms


def interest_terms_list(*, product: AccountProduct):
    """A product's terms, in effective date order."""
    return InterestTerms.objects.filter(product=product).order_by("effective_date", "id")
