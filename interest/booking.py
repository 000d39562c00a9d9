"""Booking interest (docs/interest.md, "Booked daily"): exact sums added to an institution and
currency's running totals, and what the totals rounded to minor units moved posted as one journal.
The accrual job's batches (`interest.accrual`) and the adjustments of back-valued money
(`interest.adjustments`) book this way."""

from datetime import datetime
from fractions import Fraction

from django.utils import timezone

from accounts.models import Account, Journal
from accounts.posting import Move, journal_new, post
from accounts.services import internal_account

from .calculation import to_minor_units, to_places
from .models import AccrualKind

Code = Account.InternalCode


def book_sums(
    institution, currency, book, booking, sums: dict, at: datetime | None, description: str
) -> None:
    """Under the books' lock: `sums` ({kind: Fraction}, exact to PLACES) added to the books'
    running totals and `booking`'s, and what the rounded totals moved booked as one journal
    value-dated `at` (None: from its posting; no journal when they did not move); `booking`
    and `book` saved. The accrual job's batches and the adjustments of back-valued money
    (`interest.adjustments`) book the same way."""
    # The running totals, exact to their places, rounded half even to minor units: what was
    # booked before is taken off, so the residue is carried to the next batch, never lost.
    moved = {}
    for kind in AccrualKind.values:
        accrued = Fraction(getattr(book, f"{kind}_accrued")) + sums[kind]
        booked = to_minor_units(accrued)
        moved[kind] = booked - getattr(book, f"{kind}_booked")
        setattr(book, f"{kind}_accrued", to_places(accrued))
        setattr(book, f"{kind}_booked", booked)
        setattr(booking, f"{kind}_accrued", to_places(sums[kind]))
        setattr(booking, f"{kind}_amount", moved[kind])
    if moved["deposit"] or moved["overdraft"]:
        booking.journal = _post(institution, currency, at, moved, description)
    booking.save(force_insert=True)
    book.updated_at = timezone.now()
    book.save(
        update_fields=[
            "deposit_accrued",
            "deposit_booked",
            "overdraft_accrued",
            "overdraft_booked",
            "updated_at",
        ]
    )


def _post(institution, currency, at, moved, description) -> Journal:
    """The journal of what the rounded totals moved: deposit interest from expense to payable,
    overdraft interest from receivable to income (a negative amount the other way)."""
    legs = {
        Code.INTEREST_EXPENSE: -moved["deposit"],
        Code.INTEREST_PAYABLE: moved["deposit"],
        Code.INTEREST_RECEIVABLE: -moved["overdraft"],
        Code.INTEREST_INCOME: moved["overdraft"],
    }
    moves = [
        Move(internal_account(institution=institution, code=code, currency=currency).pk, "", amount)
        for code, amount in legs.items()
        if amount
    ]
    journal = journal_new(
        institution_id=institution.pk,
        kind=Journal.Kind.INTEREST_ACCRUAL,
        description=description,
    )
    # The interest counts in the day it is for (docs/balances-at-an-instant.md, "Value dates").
    journal.value_at = at
    post(institution_id=institution.pk, currency=currency, moves=moves, journal=journal)
    return journal
