"""Issuing cards: debit and prepaid, physical and virtual, primary and supplementary.

Every new card (also a renewal, reissue or replacement, `cards.services.lifecycle`) is made by
`new_card`: a PAN drawn from the product's BIN, Luhn-valid and held by no other card, sealed
with its CVV (`Card.seal`).
"""

import re
import unicodedata

from django.db import IntegrityError, transaction

from accounts.locks import lock_account
from accounts.models import Account
from core.exceptions import AccountNotActive, CardNotActive, ProductRetired, ValidationFailed
from core.metadata import metadata_check
from customers.models import Customer
from events.services import emit_for

from ..dates import add_months, today_of
from ..locks import lock_card
from ..models import Card, CardProduct
from ..secrets import new_cvv, new_pan, pan_fingerprint

# ISO/IEC 7813 track 1 as card printers and the network carry a name: capitals, digits, space
# and . ' - /, 2 to 26 characters, the whole string (\Z: "$" would let a trailing newline in).
EMBOSSED_NAME_RE = re.compile(r"\A[A-Z0-9 .'\-/]{2,26}\Z")
INITIAL_STATUSES = (Card.Status.INACTIVE, Card.Status.ACTIVE)
# Latin letters that Unicode does not decompose into an ASCII letter and a mark (NFKD would drop
# them: "Strauß" would become "STRAU").
_LATIN_LETTERS = str.maketrans(
    {"ß": "SS", "ẞ": "SS", "Æ": "AE", "æ": "AE", "Œ": "OE", "œ": "OE", "Ø": "O", "ø": "O"}
    | {"Ł": "L", "ł": "L", "Đ": "D", "đ": "D", "Þ": "TH", "þ": "TH", "Ð": "D", "ð": "D"}
    | {"ı": "I", "Ħ": "H", "ħ": "H"}
)
ACCOUNT_CODES = {
    "current": "CBSFinancialContractTypeAPI",
    "prepaid": "AccountPrepaidAPI or GHSAccountPrepaidAPI",
}


def card_issue(
    *,
    account: Account,
    customer: Customer,
    product: CardProduct,
    form: str,
    embossed_name: str | None = None,
    delivery_address: dict | None = None,
    primary_card: Card | None = None,
    status: str = Card.Status.INACTIVE,
    metadata: dict | None = None,
) -> Card:
    """Issue a card of `product` on `account` to `customer`, with the client's `metadata`
    (`core.metadata`: 400 `validation_error` when invalid), and emit `card.issued`.

    400 `validation_error` when the product does not fit the account (debit cards on current
    accounts, prepaid cards on prepaid accounts), the form is not one of the product's, a
    physical card has no delivery address (or a virtual one has one), or the customer is not a
    holder of the account. With `primary_card` the card is supplementary: on the primary card's
    account, for another customer. 422 `account_not_active` unless the account is active, 422
    `product_retired` when the product is retired. The card starts with the product's default
    limits and security settings as they are now (docs/products.md).
    """
    if status not in INITIAL_STATUSES:
        raise ValueError(f"a new card is inactive or active, not {status}")
    metadata = metadata_check(metadata or {})
    errors = {}
    if primary_card is not None:
        if primary_card.primary_card_id is not None:
            errors["primary_card_id"] = "A supplementary card cannot have supplementary cards."
        elif primary_card.customer_id == customer.pk:
            errors["customer_id"] = "A supplementary card is for another customer than the primary."
        if primary_card.account_id != account.pk:
            errors["account_id"] = "A supplementary card sits on its primary card's account."
    elif not account.is_held_by(customer.pk):
        errors["customer_id"] = "The customer does not hold this account."
    errors.update(product_fit_errors(product, account, form, delivery_address))
    if errors:
        raise ValidationFailed(details=errors)
    if product.status == CardProduct.Status.RETIRED:
        raise ProductRetired(
            f"Card product {product.pk} is retired: it issues no new card.",
            details={"card_product_id": product.pk, "status": product.status},
        )
    with transaction.atomic(savepoint=False):
        # A supplementary card's primary card before the account, the order of a payment with
        # that card: the new card's reference to it is checked at commit (FOR KEY SHARE), which
        # would wait for such a payment while the payment waits for the account held here.
        primary = lock_card(primary_card.pk) if primary_card is not None else None
        account = lock_account(account.pk)
        if account.status != Account.Status.ACTIVE:
            raise AccountNotActive(
                f"The account is {account.status}: no new card can be issued on it.",
                details={"account_id": account.pk, "status": account.status},
            )
        if primary is not None and primary.status not in Card.LIVE:
            raise CardNotActive(
                "The primary card is no longer live.",
                details={"primary_card_id": primary.pk, "status": primary.status},
            )
        today = today_of(account.institution)
        card = Card(
            institution=account.institution,
            product=product,
            account=account,
            customer=customer,
            primary_card=primary_card,
            form=form,
            status=status,
            metadata=metadata,
            embossed_name=embossed_name or embossed_name_of(customer),
            limit_per_transaction=product.default_per_transaction,
            limit_daily=product.default_daily,
            limit_monthly=product.default_monthly,
            limit_daily_cash=product.default_daily_cash,
            ecommerce=product.default_ecommerce,
            contactless=product.default_contactless,
            atm=product.default_atm,
            international=product.default_international,
            magstripe=product.default_magstripe,
            blocked_mccs=list(product.default_blocked_mccs),
            blocked_countries=list(product.default_blocked_countries),
        )
        card.set_delivery_address(delivery_address)
        card.set_expiry(*add_months(today.year, today.month, product.validity_months))
        new_card(card)
        emit_issued(card, "card.issued")
    return card


def product_fit_errors(
    product: CardProduct, account: Account, form: str, delivery_address: dict | None
) -> dict:
    errors = {}
    if account.product is None or account.product.kind != product.account_kind:
        errors["card_product_id"] = (
            f"A {product.kind} card needs a {product.account_kind} account "
            f"({ACCOUNT_CODES[product.account_kind]})."
        )
    if form not in product.forms:
        errors["form"] = f"This product is issued as {' or '.join(product.forms)} only."
    elif form == CardProduct.Form.PHYSICAL and not delivery_address:
        errors["delivery_address"] = "A physical card needs a delivery address."
    elif form == CardProduct.Form.VIRTUAL and delivery_address:
        errors["delivery_address"] = "A virtual card is not delivered: leave this out."
    return errors


def new_card(card: Card, *, pan: str | None = None, cvv: str | None = None) -> Card:
    """Seal and insert `card`: with `pan` (a renewal or reissue keeps it) or a new one drawn
    from the product's BIN that no card has ever had; with `cvv` or a new one."""
    for _ in range(10):
        candidate = pan or new_pan(card.product.bin, card.product.pan_length)
        if pan is None and Card.objects.filter(pan_fingerprint=pan_fingerprint(candidate)).exists():
            continue
        card.seal(pan=candidate, cvv=cvv or new_cvv())
        try:
            with transaction.atomic():
                card.save(force_insert=True)
            return card
        except IntegrityError as error:  # the same PAN drawn at once by another issuance
            if pan is not None or "card_live_pan_unique" not in str(error):
                raise
    raise RuntimeError("Could not draw an unused PAN.")


def embossed_name_clean(name: str) -> str | None:
    """`name` as a card carries it, or None when it cannot be carried.

    Letters with a conventional Latin form become it ("Strauß" -> "STRAUSS", "Łukasz" ->
    "LUKASZ", "Zoë" -> "ZOE"); anything else outside EMBOSSED_NAME_RE (other scripts, symbols,
    control characters) makes the name unfit: a name is printed as given or refused, never
    silently shortened by dropping what a printer cannot print.
    """
    decomposed = unicodedata.normalize("NFKD", name.translate(_LATIN_LETTERS))
    # Only the accents go: "é" decomposes into "e" and a combining mark.
    letters = "".join(char for char in decomposed if not unicodedata.combining(char))
    cleaned = letters.upper().strip()
    return cleaned if EMBOSSED_NAME_RE.match(cleaned) else None


def embossed_name_of(customer: Customer) -> str:
    """The customer's name as a card can carry it: ASCII capitals, at most 26 characters."""
    name = f"{customer.first_name} {customer.last_name}".translate(_LATIN_LETTERS)
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    cleaned = re.sub(r"[^A-Z0-9 .'\-/]", "", ascii_name.upper())
    return re.sub(r" +", " ", cleaned).strip()[:26].strip() or "CARDHOLDER"


def emit_issued(card: Card, event_type: str, **extra) -> None:
    emit_for(
        card,
        event_type,
        data={
            "account_id": card.account_id,
            "customer_id": card.customer_id,
            "card_product_id": card.product_id,
            "form": card.form,
            "status": card.status,
            "last4": card.pan_last4,
            **({"primary_card_id": card.primary_card_id} if card.primary_card_id else {}),
            **extra,
        },
    )
