"""Foreign currency on card authorizations (issue 31 item 4; docs/card-transactions.md,
"Foreign currency").

A card network sends a payment made in another currency with two amounts: the merchant's (DE4,
the transaction amount, in the merchant's currency) and the cardholder's billing amount (DE6, in
the card's currency), with the conversion rate the network applied (DE10). In TX `amount` and
`currency` are always the billing amount, the one held, limited and posted on the account;
`merchant_amount` and `merchant_currency` are the merchant's, carried along for the statement,
the events and the foreign-transaction fee.

The rate is not taken from the network: the two amounts are what moved and what was charged, so
TX derives the rate from them and never holds two sources of truth that could disagree.
`conversion_rate` = billing / merchant, in major units of each currency (their ISO 4217 exponents,
`core.money.currency_exponent`), computed in integers and rounded half-even once to
RATE_PLACES decimal places. With amounts of at most MAX_AMOUNT and exponents of at most 4, the
rounding error times the merchant amount stays below half a minor unit of the billing currency,
so the rate applied to the merchant amount gives the billing amount back exactly
(`amount_at_rate`). No float anywhere.
"""

from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, localcontext

from core.exceptions import ValidationFailed
from core.money import WITHOUT_MINOR_UNITS, currency_exponent

# Decimal places of a stored rate (Authorization.conversion_rate: numeric(40, 20)). 20 integer
# digits hold the largest rate two valid amounts can make (MAX_AMOUNT * 10**4 / 1 = 10**19).
RATE_PLACES = 20
RATE_DIGITS = 40
_QUANTUM = Decimal(1).scaleb(-RATE_PLACES)


@dataclass(frozen=True)
class ForeignAmount:
    """What the merchant charged, and the rate that made the billing amount of it (None when the
    merchant charged in the billing currency: nothing was converted)."""

    merchant_amount: int
    merchant_currency: str
    conversion_rate: Decimal | None

    def fields(self) -> dict:
        """The Authorization's (and its statement line's) fields."""
        return {
            "merchant_amount": self.merchant_amount,
            "merchant_currency": self.merchant_currency,
            "conversion_rate": self.conversion_rate,
        }


def foreign_amount_check(
    *,
    amount: int,
    currency: str,
    merchant_amount: int | None,
    merchant_currency: str | None,
) -> ForeignAmount | None:
    """The merchant's amount of an authorization of `amount` `currency` (the billing amount), or
    None when none is given. 400 `validation_error` when only one of the two is given, when the
    merchant's currency has no minor unit (XAU, XXX, ...), or when it is the billing currency
    and the amounts differ (nothing converted, so they are one amount)."""
    if merchant_amount is None and merchant_currency is None:
        return None
    if merchant_amount is None or merchant_currency is None:
        missing = "merchant_amount" if merchant_amount is None else "merchant_currency"
        raise ValidationFailed(
            details={missing: "Give merchantAmount and merchantCurrency together, or neither."}
        )
    if merchant_currency in WITHOUT_MINOR_UNITS:
        raise ValidationFailed(
            details={"merchant_currency": f"{merchant_currency} has no minor unit."}
        )
    if merchant_currency == currency:
        if merchant_amount != amount:
            raise ValidationFailed(
                details={"merchant_amount": "In the billing currency it must be the amount itself."}
            )
        return ForeignAmount(merchant_amount, merchant_currency, None)
    rate = conversion_rate(
        amount=amount,
        currency=currency,
        merchant_amount=merchant_amount,
        merchant_currency=merchant_currency,
    )
    return ForeignAmount(merchant_amount, merchant_currency, rate)


def conversion_rate(
    *, amount: int, currency: str, merchant_amount: int, merchant_currency: str
) -> Decimal:
    """Units of `currency` per unit of `merchant_currency` (both major units), rounded half-even
    to RATE_PLACES places: 1 EUR (100) billed for 160 JPY (160) is 0.00625; 20,000 KRW (20000,
    exponent 0) billed for 13.37 EUR (1337) is 1495.88631264023934181002 (rounded), 0.01 EUR for
    0.03 USD is 0.33333333333333333333."""
    numerator = amount * 10 ** currency_exponent(merchant_currency)
    denominator = merchant_amount * 10 ** currency_exponent(currency)
    # Exact integers in, one rounding out: the quotient in units of 10**-RATE_PLACES, rounded
    # half-even on the integer remainder; the Decimal made of it is exact (no context rounding).
    scaled, remainder = divmod(numerator * 10**RATE_PLACES, denominator)
    if 2 * remainder > denominator or (2 * remainder == denominator and scaled % 2):
        scaled += 1
    with localcontext() as context:
        context.prec = RATE_DIGITS + 10
        return Decimal(scaled).scaleb(-RATE_PLACES, context).quantize(_QUANTUM, ROUND_HALF_EVEN)


def amount_at_rate(*, merchant_amount: int, merchant_currency: str, rate: Decimal, currency: str):
    """`merchant_amount` (minor units of `merchant_currency`) at `rate`, in minor units of
    `currency`, rounded half-even: the billing amount the rate was derived from."""
    with localcontext() as context:
        context.prec = 80
        major = Decimal(merchant_amount).scaleb(-currency_exponent(merchant_currency), context)
        minor = (major * rate).scaleb(currency_exponent(currency), context)
        return int(minor.quantize(Decimal(1), ROUND_HALF_EVEN))


def foreign_event_data(authorization) -> dict:
    """The foreign amounts of an authorization's event data (domain names): none when it has
    none, so the events of an authorization in one currency stay as they were."""
    if authorization.merchant_currency is None:
        return {}
    data = {
        "merchant_amount": authorization.merchant_amount,
        "merchant_currency": authorization.merchant_currency,
    }
    if authorization.conversion_rate is not None:
        data["conversion_rate"] = authorization.conversion_rate_text
    return data


def foreign_line_fields(authorization) -> dict:
    """The statement line's fields of an authorization's foreign amount: none when there is none,
    when the merchant charged in the billing currency (the line's own amount says it all), or
    when the program approved part of it (what the merchant charges for that part is not known,
    as for a presentment of another amount)."""
    if authorization.conversion_rate is None or authorization.requested_amount is not None:
        return {}
    return {
        "merchant_amount": authorization.merchant_amount,
        "merchant_currency": authorization.merchant_currency,
    }


def is_foreign_currency(authorization) -> bool:
    """The merchant charged in another currency than the account's (the billing currency): the
    foreign-transaction fee is due (docs/fees.md)."""
    return (
        authorization.merchant_currency is not None
        and authorization.merchant_currency != authorization.currency
    )
