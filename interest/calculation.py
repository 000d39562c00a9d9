"""The exact daily interest of one day (docs/interest.md, "The daily calculation"): pure
functions of a day's end-of-day balance by value date, the terms in effect that day and the
day's fraction of a year. Exact: `Fraction` throughout (rates are `Decimal` percent per year,
read exactly), never rounded to minor units; rounding is posting's, once a period.

Deposit interest on a positive balance (at or above the terms' minimum balance), overdraft
interest on a negative one, never netted: a day is one or the other (or neither). A deposit
accrual is owed to the customer (negative under a negative rate); an overdraft accrual is owed
by the customer, its amount positive.
"""

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from fractions import Fraction

from .daycount import day_fraction
from .models import InterestTerms

HUNDRED = 100
# The exact figures kept and shown as decimals: this many places of a minor unit, half even
# (docs/interest.md, "Accruals"; `models.ACCRUAL_PLACES`).
PLACES = 12


class Kind:
    DEPOSIT = "deposit"
    OVERDRAFT = "overdraft"
    NONE = "none"
    # A day under average daily balances: its accruals are `Day.average`'s sides
    # (interest.average), `Day.accruals()`.
    AVERAGE = "average"


@dataclass(frozen=True)
class Band:
    """A part of a day's balance and its rate (percent per year)."""

    amount: int
    rate: Decimal


@dataclass(frozen=True)
class Day:
    day: date
    balance: int
    kind: str
    bands: tuple[Band, ...]
    fraction: Fraction | None
    accrual: Fraction  # 0 on an average day: see `accruals()`
    terms_id: str | None
    # An average day's sides: an `interest.average.Average` (not imported: it builds on this).
    average: object | None = None

    def accruals(self) -> dict[str, Fraction]:
        """The day's accrual of each kind it has, not 0, {kind: accrual}: none, one, or on an
        average day both sides (never netted)."""
        if self.average is not None:
            sides = {Kind.DEPOSIT: self.average.deposit, Kind.OVERDRAFT: self.average.overdraft}
            return {kind: side.accrual for kind, side in sides.items() if side.accrual}
        return {self.kind: self.accrual} if self.kind != Kind.NONE and self.accrual else {}


def deposit_bands(balance: int, tiers: list[dict], tiering: str) -> tuple[Band, ...]:
    """The parts of a positive `balance` and their rates: `whole`, the whole balance at the rate
    of the highest tier it reaches; `banded`, each tier's band (from its `from_balance` to the
    next tier's) at that tier's rate."""
    starts = [(tier["from_balance"], Decimal(tier["rate"])) for tier in tiers]
    if tiering == InterestTerms.Tiering.WHOLE:
        rate = next(rate for start, rate in reversed(starts) if balance >= start)
        return (Band(balance, rate),)
    bands = []
    for index, (start, rate) in enumerate(starts):
        if balance <= start:
            break
        end = starts[index + 1][0] if index + 1 < len(starts) else balance
        bands.append(Band(min(balance, end) - start, rate))
    return tuple(bands)


def accrual_of(bands: tuple[Band, ...], fraction: Fraction) -> Fraction:
    """Sum of amount * rate / 100 * fraction over the bands, exactly."""
    return sum(
        (Fraction(band.amount) * Fraction(band.rate) / HUNDRED * fraction for band in bands),
        Fraction(0),
    )


def interest_day(day: date, balance: int, terms: InterestTerms | None) -> Day:
    """The calculation of `day` from its end-of-day `balance` (minor units, by value date) and
    the `terms` in effect that day (None: the product had none yet, nothing accrues)."""
    if terms is None:
        return Day(day, balance, Kind.NONE, (), None, Fraction(0), None)
    fraction = day_fraction(terms.day_count, day)
    if balance > 0 and balance >= terms.minimum_balance:
        kind = Kind.DEPOSIT
        bands = deposit_bands(balance, terms.deposit_tiers, terms.tiering)
    elif balance < 0:
        kind = Kind.OVERDRAFT
        bands = (Band(-balance, Decimal(terms.overdraft_rate)),)
    else:
        kind, bands = Kind.NONE, ()
    return Day(day, balance, kind, bands, fraction, accrual_of(bands, fraction), terms.pk)


def to_places(value: Fraction) -> Decimal:
    """`value` (minor units) to PLACES decimal places, half even, exactly: `round` of a
    `Fraction` is exact and half even, and a Decimal made from a string is not rounded."""
    return Decimal(f"{round(value * 10**PLACES)}E-{PLACES}")


def to_minor_units(value: Fraction) -> int:
    """`value` to whole minor units, half even, exactly."""
    return round(value)
