"""Rates as the terms hold them: percent per year, a `Decimal` read from a decimal string
("2.5", "-0.25", "12.345678"), never a float (docs/interest.md, "Rates")."""

import re
from decimal import Decimal

from .models import RATE_PLACES

# ASCII digits only, at most 3 before the point and RATE_PLACES after: no exponent, no sign
# but a leading minus, no spaces.
RATE = re.compile(rf"-?[0-9]{{1,3}}(\.[0-9]{{1,{RATE_PLACES}}})?", re.ASCII)
MAX_RATE = Decimal(100)
RATE_FORMAT = (
    f'Must be a decimal string of percent per year, e.g. "2.5", at most {RATE_PLACES} decimal '
    "places, from -100 to 100."
)


def parse_rate(value) -> Decimal | None:
    """The rate of `value`, or None when it is not one (the caller says why: RATE_FORMAT)."""
    if not isinstance(value, str) or not RATE.fullmatch(value):
        return None
    rate = Decimal(value)
    if abs(rate) > MAX_RATE:
        return None
    return rate + 0  # "-0" is 0


def rate_text(rate: Decimal) -> str:
    """A rate as the API and the events show it: its decimal string without trailing zeros
    ("2.5", "0", "-0.25"), never an exponent."""
    text = format(rate.normalize(), "f")
    return "0" if text in ("-0", "0") else text
