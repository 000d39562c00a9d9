"""Amounts as people read them: integers in minor units, shown with their currency."""

from decimal import Decimal

# ISO 4217 minor units of the active currencies whose exponent is not 2 (pycountry knows the
# codes and names, not the minor units); every other currency has 2 (EUR, GHS, USD, ...).
_EXPONENTS = {
    **dict.fromkeys(
        "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF".split(), 0
    ),
    **dict.fromkeys("BHD IQD JOD KWD LYD OMR TND".split(), 3),
    **dict.fromkeys("CLF UYW".split(), 4),
}


# ISO 4217 codes with no minor unit at all ("N.A."): precious metals, bond-market units, the
# SDR, test and "no currency" codes. Nothing is counted in them, so no product holds them.
WITHOUT_MINOR_UNITS = frozenset("XAG XAU XBA XBB XBC XBD XDR XPD XPT XSU XTS XUA XXX".split())

# The most one operation moves or one limit or fee holds, in minor units: far below 2**63
# (bigint) even after summing many; above any real single movement. The API's amount fields
# refuse more (`api.serializers.AmountField`), and so do the services that check amounts the
# admin gives them.
MAX_AMOUNT = 10**15


def currency_exponent(currency: str) -> int:
    return _EXPONENTS.get(currency, 2)


def major_units(amount: int, currency: str, *, grouped: bool = False) -> str:
    """An amount in minor units written in major units, without the currency: `1050, "EUR"` ->
    `"10.50"`, `-123456, "EUR"` -> `"-1234.56"` (`"-1,234.56"` `grouped`), `5, "JPY"` -> `"5"`."""
    exponent = currency_exponent(currency)
    grouping = "," if grouped else ""
    return f"{Decimal(amount).scaleb(-exponent):{grouping}.{exponent}f}"


def money(amount: int | None, currency: str) -> str:
    """`1050, "EUR"` -> `"10.50 EUR"`; `5, "JPY"` -> `"5 JPY"`; thousands grouped."""
    if amount is None:
        return "—"
    return f"{major_units(amount, currency, grouped=True)} {currency}"


def decimal_text(value: Decimal | None) -> str | None:
    """A Decimal as the API shows it: no exponent, no trailing zeros (`0.00625`, `1.085`, `150`
    for a stored `150.00000000000000000000`); None as None."""
    if value is None:
        return None
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text
