"""The card products every institution starts with."""

from django.db import transaction

from institutions.models import Institution

from ..models import CardProduct

# Test BINs of the sandbox (no network routes them). A bank's own products are not editable
# through the API or the admin yet (docs/cards.md).
STANDARD_PRODUCTS = [
    {
        "code": "DEBIT_STANDARD",
        "name": "Debit card",
        "kind": CardProduct.Kind.DEBIT,
        "forms": [CardProduct.Form.PHYSICAL, CardProduct.Form.VIRTUAL],
        "bin": "400001",
        "validity_years": 4,
        "default_per_transaction": 500_000,
        "default_daily": 1_000_000,
        "default_monthly": 5_000_000,
        "default_daily_cash": 100_000,
    },
    {
        "code": "PREPAID_STANDARD",
        "name": "Prepaid card",
        "kind": CardProduct.Kind.PREPAID,
        "forms": [CardProduct.Form.PHYSICAL, CardProduct.Form.VIRTUAL],
        "bin": "400002",
        "validity_years": 3,
        "default_per_transaction": 100_000,
        "default_daily": 200_000,
        "default_monthly": 1_000_000,
        "default_daily_cash": 50_000,
    },
    {
        "code": "PREPAID_VIRTUAL",
        "name": "Virtual prepaid card",
        "kind": CardProduct.Kind.PREPAID,
        "forms": [CardProduct.Form.VIRTUAL],
        "bin": "40000300",
        "validity_years": 2,
        "default_per_transaction": 50_000,
        "default_daily": 100_000,
        "default_monthly": 500_000,
        "default_daily_cash": 0,
    },
]


def card_products_seed(*, institution: Institution) -> list[CardProduct]:
    """Give an institution the standard card products; existing ones are kept as they are."""
    with transaction.atomic():
        return [
            CardProduct.objects.get_or_create(
                institution=institution,
                code=fields["code"],
                defaults={key: value for key, value in fields.items() if key != "code"},
            )[0]
            for fields in STANDARD_PRODUCTS
        ]
