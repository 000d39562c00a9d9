"""Card products: the standard ones every institution starts with, and the bank's own (made
and changed through the API's v2 and the admin, docs/products.md)."""

import re

import pycountry
from django.db import IntegrityError, transaction

from accounts.locks import lock_product
from accounts.services.fees import BPS_SCALE
from accounts.services.products import product_change
from core.exceptions import ValidationFailed
from core.money import MAX_AMOUNT
from core.operations import Outcome
from core.text import CONTROL_CHARACTER_MESSAGE, FORBIDDEN_CHARACTERS
from core.timestamps import iso_millis
from events.services import emit_for
from institutions.models import Institution

from ..models import CardProduct

# Test BINs of the sandbox (no network routes them). A bank adds its own products and changes
# these through the API (v2) and the admin (docs/products.md). `validity_years` stays in years
# here: migration cards/0002 seeds from this list with the model of its time (which had
# `validity_years`); `card_products_seed` turns it into `validity_months`.
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
                defaults=_seed_fields(fields),
            )[0]
            for fields in STANDARD_PRODUCTS
        ]


def _seed_fields(fields: dict) -> dict:
    values = {key: value for key, value in fields.items() if key not in ("code", "validity_years")}
    return {**values, "validity_months": 12 * fields["validity_years"]}


# --- the bank's own products (docs/products.md) ---------------------------------------------
LIMIT_FIELDS = ("default_per_transaction", "default_daily", "default_monthly", "default_daily_cash")
SWITCH_FIELDS = (
    "default_ecommerce",
    "default_contactless",
    "default_atm",
    "default_international",
    "default_magstripe",
)
# Fixed when the product is made: what its cards are and where their PANs come from.
IMMUTABLE = ("code", "kind", "bin", "pan_length")
# What a product's creation or change may name (the API's names of these: `api.names`).
UPDATABLE = frozenset(
    {
        "code",
        "name",
        "kind",
        "forms",
        "bin",
        "pan_length",
        "validity_months",
        "status",
        *LIMIT_FIELDS,
        *SWITCH_FIELDS,
        "default_blocked_mccs",
        "default_blocked_countries",
        "atm_fee",
        "replacement_fee",
        "foreign_transaction_fee_bps",
        "dispute_policy",
        "dispute_provisional_credit",
    }
)
REQUIRED = ("name", "kind", "forms", "bin", "validity_months", *LIMIT_FIELDS)
# The cards' own defaults, for what a new product does not say.
DEFAULTS = {
    "pan_length": 16,
    "default_ecommerce": True,
    "default_contactless": True,
    "default_atm": True,
    "default_international": True,
    "default_magstripe": False,
    "default_blocked_mccs": [],
    "default_blocked_countries": [],
    "atm_fee": 0,
    "replacement_fee": 0,
    "foreign_transaction_fee_bps": 0,
    "dispute_policy": CardProduct.DisputePolicy.NONE,
    "dispute_provisional_credit": CardProduct.ProvisionalCredit.AT_SUBMISSION,
}
MAX_NAME_LENGTH = 200
MAX_VALIDITY_MONTHS = 120
MAX_MCCS = 200
MAX_COUNTRIES = 250
BIN_RE = re.compile(r"\A[0-9]{6}([0-9]{2})?\Z")
CODE_RE = re.compile(r"\A[A-Za-z0-9_.\-]{1,64}\Z")
MCC_RE = re.compile(r"\A[0-9]{4}\Z")
DUPLICATE_BIN = "Another card product of the institution has this BIN."
DUPLICATE_CODE = "Another card product of the institution has this code."


def card_product_data(product: CardProduct) -> dict:
    """The product as its events record it, in the domain's names (`GET /products/cards` shows
    the same fields; `api.names` renders these): the default limits and security settings
    grouped as the cards have them (`field_path`)."""
    data = {
        "id": product.pk,
        "code": product.code,
        "name": product.name,
        "kind": product.kind,
        "account_kind": product.account_kind,
        "forms": list(product.forms),
        "bin": product.bin,
        "pan_length": product.pan_length,
        "validity_months": product.validity_months,
        "validity_years": product.validity_years,
        "status": product.status,
        "default_limits": {},
        "default_security_settings": {},
        "atm_fee": product.atm_fee,
        "replacement_fee": product.replacement_fee,
        "foreign_transaction_fee_bps": product.foreign_transaction_fee_bps,
        "dispute_policy": product.dispute_policy,
        "dispute_provisional_credit": product.dispute_provisional_credit,
        "created_at": iso_millis(product.created_at),
        "updated_at": iso_millis(product.updated_at),
    }
    for field in (
        *LIMIT_FIELDS,
        *SWITCH_FIELDS,
        "default_blocked_mccs",
        "default_blocked_countries",
    ):
        group, name = field_path(field).split(".")
        value = getattr(product, field)
        data[group][name] = list(value) if isinstance(value, list) else value
    return data


def card_product_errors(
    values: dict, *, institution: Institution, product: CardProduct | None = None
) -> dict:
    """What is wrong with `values` (domain names) for a new product of `institution`, or as
    changes of `product`: {field: message}, empty when nothing is. Formats, ranges, and a BIN
    or code another product of the institution has. The API's serializers and the admin's form
    check the formats first; this is every rule, whoever calls."""
    errors: dict[str, str] = {}
    if product is None:
        for field in REQUIRED:
            if field not in values:
                errors[field] = "This field is required."
    else:
        for field in IMMUTABLE:
            if field in values and values[field] != getattr(product, field):
                errors[field] = (
                    f"Cannot change after the product is made (it is {getattr(product, field)}): "
                    "create a new product and retire this one."
                )
    for field, value in values.items():
        if field in errors:
            continue
        message = _CHECKS[field](value) if field in _CHECKS else None
        if message:
            errors[field] = message
    if product is None:
        others = CardProduct.objects.filter(institution=institution)
        if "bin" not in errors and "bin" in values and others.filter(bin=values["bin"]).exists():
            errors["bin"] = DUPLICATE_BIN
        if values.get("code") and "code" not in errors:
            if others.filter(code=values["code"]).exists():
                errors["code"] = DUPLICATE_CODE
    return errors


def _name(value) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return "Must be a non-empty string."
    if FORBIDDEN_CHARACTERS.search(value):
        return CONTROL_CHARACTER_MESSAGE
    if len(value.strip()) > MAX_NAME_LENGTH:
        return f"At most {MAX_NAME_LENGTH} characters."
    return None


def _integer(low: int, high: int, what: str):
    def check(value) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            return f"Must be {what}: an integer from {low} to {high}."
        return None

    return check


def _boolean(value) -> str | None:
    return None if isinstance(value, bool) else "Must be true or false."


def _forms(value) -> str | None:
    choices = CardProduct.Form.values
    if not isinstance(value, list | tuple) or not value:
        return f"Must be a non-empty list of {' and '.join(choices)}."
    if any(form not in choices for form in value):
        return f"Each form must be one of {', '.join(choices)}."
    if len(set(value)) != len(value):
        return "Each form at most once."
    return None


def _codes(value, *, valid, most: int, what: str) -> str | None:
    if not isinstance(value, list | tuple):
        return f"Must be a list of {what}."
    if len(value) > most:
        return f"At most {most} {what}."
    bad = [code for code in value if not isinstance(code, str) or not valid(code)]
    if bad:
        return f"Not {what}: {', '.join(map(str, bad))}."
    return None


def _is_country(code: str) -> bool:
    return len(code) == 3 and code.isdigit() and pycountry.countries.get(numeric=code) is not None


_CHECKS = {
    "code": lambda value: (
        None
        if isinstance(value, str) and CODE_RE.match(value)
        else "1 to 64 of A-Z, a-z, 0-9, _ . -"
    ),
    "name": _name,
    "kind": lambda value: (
        None
        if value in CardProduct.Kind.values
        else f"Must be one of {', '.join(CardProduct.Kind.values)}."
    ),
    "forms": _forms,
    "bin": lambda value: (
        None if isinstance(value, str) and BIN_RE.match(value) else "Must be 6 or 8 digits."
    ),
    "pan_length": _integer(13, 19, "the number of digits of the cards' PANs"),
    "validity_months": _integer(1, MAX_VALIDITY_MONTHS, "months"),
    "status": lambda value: (
        None
        if value in CardProduct.Status.values
        else f"Must be one of {', '.join(CardProduct.Status.values)}."
    ),
    **dict.fromkeys(LIMIT_FIELDS, _integer(0, MAX_AMOUNT, "an amount in minor units")),
    **dict.fromkeys(SWITCH_FIELDS, _boolean),
    "default_blocked_mccs": lambda value: _codes(
        value,
        valid=lambda code: bool(MCC_RE.match(code)),
        most=MAX_MCCS,
        what="merchant category codes (4 digits)",
    ),
    "default_blocked_countries": lambda value: _codes(
        value,
        valid=_is_country,
        most=MAX_COUNTRIES,
        what="ISO 3166-1 numeric country codes (3 digits)",
    ),
    # The fee schedule (docs/fees.md).
    "atm_fee": _integer(0, MAX_AMOUNT, "an amount in minor units"),
    "replacement_fee": _integer(0, MAX_AMOUNT, "an amount in minor units"),
    "foreign_transaction_fee_bps": _integer(0, BPS_SCALE, "basis points"),
    "dispute_policy": lambda value: (
        None
        if value in CardProduct.DisputePolicy.values
        else f"Must be one of {', '.join(CardProduct.DisputePolicy.values)}."
    ),
    "dispute_provisional_credit": lambda value: (
        None
        if value in CardProduct.ProvisionalCredit.values
        else f"Must be one of {', '.join(CardProduct.ProvisionalCredit.values)}."
    ),
}


def _cleaned(values: dict) -> dict:
    """Names trimmed, code lists sorted without repeats (as a card's own settings are)."""
    cleaned = dict(values)
    if "name" in cleaned:
        cleaned["name"] = cleaned["name"].strip()
    if "forms" in cleaned:
        cleaned["forms"] = list(cleaned["forms"])
    for field in ("default_blocked_mccs", "default_blocked_countries"):
        if field in cleaned:
            cleaned[field] = sorted(set(cleaned[field]))
    return cleaned


def field_path(field: str) -> str:
    """Where a field of the model is in the product's data (its snapshot, its errors, its
    changes): a default limit is in `default_limits` (`default_daily` is
    `default_limits.daily`), a default security setting in `default_security_settings`, as
    each card has its own `limits` and security settings; the rest as it is."""
    if field in LIMIT_FIELDS:
        return "default_limits." + field.removeprefix("default_")
    if field.startswith("default_"):
        return "default_security_settings." + field.removeprefix("default_")
    return field


def _error_paths(errors: dict) -> dict:
    """Errors keyed by the fields of the model keyed by where the product's data has them."""
    return {field_path(field): message for field, message in errors.items()}


def _save_unique(product: CardProduct, **save) -> None:
    """Save, turning a BIN or code taken meanwhile by another product (the constraints)
    into the 400 the check gives."""
    try:
        with transaction.atomic():
            product.save(**save)
    except IntegrityError as error:
        if "card_product_bin_unique" in str(error):
            raise ValidationFailed(details={"bin": DUPLICATE_BIN}) from None
        if "card_product_code_unique" in str(error):
            raise ValidationFailed(details={"code": DUPLICATE_CODE}) from None
        raise


def card_product_create(*, institution: Institution, **values) -> CardProduct:
    """Make a card product of `institution`, `active`. `values` in domain names: `name`,
    `kind` (debit | prepaid), `forms` (physical and/or virtual), `bin` (6 or 8 digits, unique
    among the institution's card products), `validity_months` (1 to 120), the four default
    limits (`default_per_transaction`, `default_daily`, `default_monthly`,
    `default_daily_cash`: minor units of each card's account currency, 0 to MAX_AMOUNT);
    optional: `code` (unique in the institution; default: the product's rid), `pan_length`
    (13 to 19, default 16) and the default security settings (`default_ecommerce` ...
    `default_blocked_countries`; default: the cards' own defaults) and the fee schedule
    (`atm_fee`, `replacement_fee`: minor units, 0 to MAX_AMOUNT; `foreign_transaction_fee_bps`:
    0 to 10000; default 0, no fee; docs/fees.md).

    400 `validation_error` with every field that is wrong. Emits `product.created`.
    """
    unknown = set(values) - UPDATABLE
    if unknown:
        raise ValueError(f"Not card product fields: {sorted(unknown)}")
    errors = card_product_errors(values, institution=institution)
    if errors:
        raise ValidationFailed(details=_error_paths(errors))
    values = _cleaned({**DEFAULTS, **values})
    values.pop("status", None)
    product = CardProduct(institution=institution, **values)
    if not product.code:
        product.code = product.pk
    with transaction.atomic(savepoint=False):
        _save_unique(product, force_insert=True)
        emit_for(
            product,
            "product.created",
            data={"product_type": "card", "product": card_product_data(product)},
        )
    return product


def card_product_update(*, product: CardProduct, changes: dict) -> Outcome[CardProduct]:
    """Change a card product: `name`, `forms`, `validity_months`, the default limits and
    security settings, the fee schedule (charged from then on), `status` (`active` |
    `retired`, both ways). `code`, `kind`, `bin` and `pan_length` may be named only with their
    current value (400 otherwise: the cards on the product are what they are).

    New values apply to the cards issued afterwards (and to renewals and replacements after
    that, which take the product's validity); a card keeps the limits and settings it was
    issued with. A retired product issues no new card (422 `product_retired` from
    `card_issue`); its cards go on. Emits `product.updated` with the product and the paths
    of what changed (`field_path`); no change emits nothing (`Outcome.changed` false).
    `Outcome.previous` has the old values of what changed.
    """
    unknown = set(changes) - UPDATABLE
    if unknown:
        raise ValueError(f"Not card product fields: {sorted(unknown)}")
    with transaction.atomic(savepoint=False):
        product = lock_product(product)
        errors = card_product_errors(changes, institution=product.institution, product=product)
        if errors:
            raise ValidationFailed(details=_error_paths(errors))
        return product_change(
            product,
            _cleaned(changes),
            product_type="card",
            data=card_product_data,
            field_paths=lambda fields: [field_path(field) for field in fields],
        )
