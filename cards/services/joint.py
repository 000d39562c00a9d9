"""Joint accounts: one account, two holders, one card each, in one transaction (docs/design.md
section 8, spec 2.3 and its v1.1.3 rules: both cards are required)."""

from dataclasses import dataclass

from django.db import transaction

from accounts.models import Account, AccountProduct
from accounts.services import account_create
from core.actors import Actor
from core.exceptions import ValidationFailed
from customers.models import Customer
from institutions.models import Institution

from ..models import Card, CardProduct
from .issuance import card_issue, product_fit_errors

# card kind -> the account type a joint account gets when `accountTypeRid` is not given
DEFAULT_ACCOUNT_CODE = {
    CardProduct.Kind.DEBIT: AccountProduct.Code.CURRENT,
    CardProduct.Kind.PREPAID: AccountProduct.Code.PREPAID,
}


@dataclass(frozen=True)
class CardRequest:
    customer: Customer
    product: CardProduct
    form: str
    embossed_name: str | None = None
    delivery_address: dict | None = None


def joint_account_open(
    *,
    institution: Institution,
    primary: CardRequest,
    secondary: CardRequest,
    account_product: AccountProduct | None = None,
    actor: Actor,
) -> tuple[Account, Card, Card]:
    """Open an account held by both customers and issue each a card on it.

    Without `account_product`, the account type follows the primary card's kind (debit: a
    current account, prepaid: a prepaid account); it is in the product's currency. 400
    `validation_error` when the two customers are one, or a card does not fit the account.
    Emits `account.opened` and two `card.issued`.
    """
    if account_product is None:
        # The first product of the code (the seeded one): a bank may have added more of it
        # since (docs/products.md); name `accountTypeRid` to choose another.
        account_product = (
            AccountProduct.objects.filter(
                institution=institution, code=DEFAULT_ACCOUNT_CODE[primary.product.kind]
            )
            .order_by("created_at", "id")
            .first()
        )
        if account_product is None:
            raise ValidationFailed(
                details={"account_type_rid": "The institution has no product of this type."}
            )
    errors = {}
    if primary.customer.pk == secondary.customer.pk:
        errors["secondary_card.customer_id"] = "The two holders must be different customers."
    probe = Account(product=account_product)  # for the fit rules, before anything is written
    for prefix, request in (("primary_card", primary), ("secondary_card", secondary)):
        for field, message in product_fit_errors(
            request.product, probe, request.form, request.delivery_address
        ).items():
            errors[f"{prefix}.{field}"] = message
    if errors:
        raise ValidationFailed(details=errors)
    with transaction.atomic(savepoint=False):
        account = account_create(
            institution=institution,
            customer=primary.customer,
            secondary_customer=secondary.customer,
            product=account_product,
            currency=account_product.currency,
        )
        cards = [
            card_issue(
                account=account,
                customer=request.customer,
                product=request.product,
                form=request.form,
                embossed_name=request.embossed_name,
                delivery_address=request.delivery_address,
            )
            for request in (primary, secondary)
        ]
    return account, cards[0], cards[1]
