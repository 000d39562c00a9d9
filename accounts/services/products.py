"""Writes on account products."""

from django.db import transaction

from institutions.models import Institution

from ..models import AccountProduct


def account_products_seed(*, institution: Institution) -> list[AccountProduct]:
    """Give an institution the three standard account types; existing ones are kept as they are.

    `AccountPrepaidAPI` and `CBSFinancialContractTypeAPI` are in the institution's currency;
    `GHSAccountPrepaidAPI` is the prepaid product held in Ghana cedi (GHS).
    """
    standard = [
        (AccountProduct.Code.PREPAID, "Prepaid account", "prepaid", institution.currency),
        (AccountProduct.Code.CURRENT, "Current account", "current", institution.currency),
        (AccountProduct.Code.GHS_PREPAID, "Prepaid account (GHS)", "prepaid", "GHS"),
    ]
    with transaction.atomic():
        products = []
        for code, name, kind, currency in standard:
            product, _ = AccountProduct.objects.get_or_create(
                institution=institution,
                code=code,
                defaults={"name": name, "kind": kind, "currency": currency},
            )
            products.append(product)
    return products
