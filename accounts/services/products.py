"""Writes on account products: the three every institution starts with, and the bank's own
(made and changed through the API's v2 and the admin, docs/products.md)."""

import pycountry
from django.db import transaction

from core.exceptions import ValidationFailed
from core.money import MAX_AMOUNT, WITHOUT_MINOR_UNITS
from core.operations import Outcome, changed, unchanged
from core.rows import row_update
from core.text import CONTROL_CHARACTER_MESSAGE, FORBIDDEN_CHARACTERS
from core.timestamps import iso_millis
from events.services import emit_for
from institutions.models import Institution

from ..locks import lock_product
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
            # The first of the code (the bank may have added more of it since).
            product = (
                AccountProduct.objects.filter(institution=institution, code=code)
                .order_by("created_at", "id")
                .first()
            )
            if product is None:
                product = AccountProduct.objects.create(
                    institution=institution, code=code, name=name, kind=kind, currency=currency
                )
            products.append(product)
    return products


# --- the bank's own products (docs/products.md) ---------------------------------------------
# What an account product's change may name (the API's names of these: `api.names`).
UPDATABLE = frozenset(
    {
        "code",
        "name",
        "currency",
        "allows_overdraft",
        "max_overdraft_limit",
        "monthly_fee",
        "debit_hold_days",
        "status",
    }
)
# Fixed when the product is made: the kind of its accounts and the currency of their money.
IMMUTABLE = ("code", "currency")
MAX_NAME_LENGTH = 200


def account_product_data(product: AccountProduct) -> dict:
    """The product as its events record it, in the domain's names (`GET /products/accounts`
    shows the same fields; `api.names` renders these)."""
    return {
        "id": product.pk,
        "code": product.code,
        "name": product.name,
        "kind": product.kind,
        "currency": product.currency,
        "allows_overdraft": product.allows_overdraft,
        "max_overdraft_limit": product.max_overdraft_limit,
        "monthly_fee": product.monthly_fee,
        "debit_hold_days": product.debit_hold_days,
        "status": product.status,
        "created_at": iso_millis(product.created_at),
        "updated_at": iso_millis(product.updated_at),
    }


def account_product_errors(values: dict, *, product: AccountProduct | None = None) -> dict:
    """What is wrong with `values` (domain names) for a new product, or as changes of
    `product`: {field: message}, empty when nothing is. The API's serializers and the admin's
    form check the formats first; this is every rule, whoever calls."""
    errors: dict[str, str] = {}
    if product is None:
        for field in ("code", "name", "currency"):
            if field not in values:
                errors[field] = "This field is required."
    else:
        for field in IMMUTABLE:
            if field in values and values[field] != getattr(product, field):
                errors[field] = (
                    f"Cannot change after the product is made (it is {getattr(product, field)}): "
                    "create a new product and retire this one."
                )
    if "code" in values and values["code"] not in AccountProduct.Code.values:
        errors["code"] = f"Must be one of {', '.join(AccountProduct.Code.values)}."
    if "name" in values:
        message = _name_error(values["name"])
        if message:
            errors["name"] = message
    if "currency" in values and not _is_currency(values["currency"]):
        errors["currency"] = 'Must be an ISO 4217 alpha-3 currency code, e.g. "EUR".'
    elif values.get("currency") in WITHOUT_MINOR_UNITS:
        errors["currency"] = f"{values['currency']} has no minor unit: accounts cannot hold it."
    if "allows_overdraft" in values and not isinstance(values["allows_overdraft"], bool):
        errors["allows_overdraft"] = "Must be true or false."
    if "max_overdraft_limit" in values:
        limit = values["max_overdraft_limit"]
        if isinstance(limit, bool) or not isinstance(limit, int) or not 0 <= limit <= MAX_AMOUNT:
            errors["max_overdraft_limit"] = (
                f"Must be an integer number of minor units from 0 to {MAX_AMOUNT}."
            )
    if "monthly_fee" in values:
        fee = values["monthly_fee"]
        if isinstance(fee, bool) or not isinstance(fee, int) or not 0 <= fee <= MAX_AMOUNT:
            errors["monthly_fee"] = (
                f"Must be an integer number of minor units from 0 to {MAX_AMOUNT}."
            )
    if "debit_hold_days" in values:
        days = values["debit_hold_days"]
        if days is not None and (
            isinstance(days, bool) or not isinstance(days, int) or not 0 <= days <= 60
        ):
            errors["debit_hold_days"] = (
                "Must be 0 to 60 banking days, or null for the ACH profile's."
            )
    if "status" in values and values["status"] not in AccountProduct.Status.values:
        errors["status"] = f"Must be one of {', '.join(AccountProduct.Status.values)}."
    if "allows_overdraft" not in errors and "max_overdraft_limit" not in errors:
        allows = values.get("allows_overdraft", product.allows_overdraft if product else False)
        cap = values.get("max_overdraft_limit", product.max_overdraft_limit if product else 0)
        if cap and not allows:
            errors["max_overdraft_limit"] = (
                "Must be 0 on a product that does not allow overdraft (allowsOverdraft false)."
            )
    return errors


def _name_error(name) -> str | None:
    if not isinstance(name, str) or not name.strip():
        return "Must be a non-empty string."
    if FORBIDDEN_CHARACTERS.search(name):
        return CONTROL_CHARACTER_MESSAGE
    if len(name.strip()) > MAX_NAME_LENGTH:
        return f"At most {MAX_NAME_LENGTH} characters."
    return None


def _is_currency(value) -> bool:
    return (
        isinstance(value, str)
        and len(value) == 3
        and value.isascii()
        and value.isupper()
        and pycountry.currencies.get(alpha_3=value) is not None
    )


def account_product_create(
    *,
    institution: Institution,
    code: str,
    name: str,
    currency: str,
    allows_overdraft: bool = False,
    max_overdraft_limit: int = 0,
    monthly_fee: int = 0,
    debit_hold_days: int | None = None,
) -> AccountProduct:
    """Make an account product of the financial contract type `code` in `currency` (any ISO
    4217 code; its minor units are `core.money.currency_exponent`'s), `active`.

    `max_overdraft_limit` (minor units, 0 to MAX_AMOUNT) is the most an account of the product
    may be given as its overdraft limit, and must be 0 unless `allows_overdraft`. 400
    `validation_error` otherwise. `monthly_fee` (minor units, 0 to MAX_AMOUNT, 0: none) is
    charged to each active account of the product every month (docs/fees.md). Its kind follows
    the code (prepaid or current). `debit_hold_days` (0 to 60; None: the ACH profile's) is
    how long money collected from another bank stays held for its returns (docs/payments.md).
    Emits `product.created` with the product.
    """
    values = {
        "code": code,
        "name": name,
        "currency": currency,
        "allows_overdraft": allows_overdraft,
        "max_overdraft_limit": max_overdraft_limit,
        "monthly_fee": monthly_fee,
        "debit_hold_days": debit_hold_days,
    }
    errors = account_product_errors(values)
    if errors:
        raise ValidationFailed(details=errors)
    product = AccountProduct(
        institution=institution,
        code=code,
        name=name.strip(),
        kind=AccountProduct.KIND_OF_CODE[code],
        currency=currency,
        allows_overdraft=allows_overdraft,
        max_overdraft_limit=max_overdraft_limit,
        monthly_fee=monthly_fee,
        debit_hold_days=debit_hold_days,
    )
    with transaction.atomic(savepoint=False):
        product.save(force_insert=True)
        emit_for(
            product,
            "product.created",
            data={"product_type": "account", "product": account_product_data(product)},
        )
    return product


def account_product_update(*, product: AccountProduct, changes: dict) -> Outcome[AccountProduct]:
    """Change an account product: `name`, `allows_overdraft`, `max_overdraft_limit`,
    `monthly_fee` (from the next month charged), `debit_hold_days` (debits settled from now
    on), `status`
    (`active` | `retired`, both ways). `code` and `currency` may be named only with their
    current value (400 otherwise: the accounts on the product hold its money in its currency).

    A retired product opens no new account (422 `product_retired` from `account_create`); its
    accounts go on. A lower `max_overdraft_limit` (or overdraft no longer allowed) caps the
    overdraft limits set from now on; the accounts keep the limits they have. Emits
    `product.updated` with the product and the API names of what changed; no change emits
    nothing (`Outcome.changed` false). `Outcome.previous` has the old values of what changed.
    """
    unknown = set(changes) - UPDATABLE
    if unknown:
        raise ValueError(f"Not account product fields: {sorted(unknown)}")
    with transaction.atomic(savepoint=False):
        product = lock_product(product)
        errors = account_product_errors(changes, product=product)
        if errors:
            raise ValidationFailed(details=errors)
        values = {**changes}
        if "name" in values:
            values["name"] = values["name"].strip()
        return product_change(product, values, product_type="account", data=account_product_data)


# --- What an account product's and a card product's changes share (cards.services.products).
def product_change(
    product, values: dict, *, product_type: str, data, field_paths=lambda fields: fields
) -> Outcome:
    """Write `values` (valid, cleaned) on the locked `product` and emit `product.updated` with
    `data(product)` and what changed (`field_paths`: where the snapshot has each changed model
    field); no change writes and emits nothing."""
    previous = row_update(product, values)
    if not previous:
        return unchanged(product)
    emit_for(
        product,
        "product.updated",
        data={
            "product_type": product_type,
            "product": data(product),
            "changed_fields": sorted(field_paths(previous)),
        },
    )
    return changed(product, previous)
