"""The daily accrual job (docs/interest.md, "Accruals" and "Booked daily"): every customer account
on a product with interest terms gets each ended day's exact interest stored (one row per
account, day and kind, a database rule), and each batch's rows are booked at once as a journal
of minor units, so the books are right every day.

A run takes each institution and currency's books (`AccrualBook`) from the day after the last
one accrued (or the first day of its terms) up to yesterday in the institution's time zone:
missed days are caught up, a day not yet ended is never accrued. A day is done in batches of
accounts by id, each in one transaction:

1. the books' row locked (`lock_book`): batches of one institution and currency, of any run,
   book one after another;
2. the batch's accounts with a row of the day already are left out (another run, or this one
   before a crash, did them; the unique constraint refuses a second row whatever happens);
3. the day's end-of-day balances by value date of the rest, one query (`value_balances_of`);
4. the rows with interest written, and one journal: what the rounded running totals moved
   (`InterestBooking`), value-dated to the day.

So a run twice, or two at once, writes each row once and books it once. Nothing locks a
customer account: the job only reads their balances.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from fractions import Fraction
from zoneinfo import ZoneInfo

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from accounts.models import Account, Journal
from accounts.posting import Move, journal_new, post
from accounts.selectors import value_balances_of
from accounts.services import internal_account
from institutions.calendar import local_date
from institutions.models import Institution

from .calculation import Kind, interest_day, to_minor_units, to_places
from .locks import lock_book
from .models import AccrualBook, AccrualKind, InterestAccrual, InterestBooking, InterestTerms
from .rates import rate_text
from .selectors import MICROSECOND, end_of_day

ONE_DAY = timedelta(days=1)
BATCH_SIZE = 500
Code = Account.InternalCode


@dataclass
class AccrualReport:
    days: int = 0  # days of books accrued (an institution and currency's day is one)
    accruals: int = 0  # rows written
    journals: int = 0


def terms_on(terms: list[InterestTerms], day: date) -> InterestTerms | None:
    """Of a product's terms in effective date order, the ones in effect on `day`."""
    current = None
    for row in terms:
        if row.effective_date > day:
            break
        current = row
    return current


def interest_accrue(
    *,
    now: datetime | None = None,
    batch_size: int = BATCH_SIZE,
    on_progress: Callable[[int, int], None] | None = None,
) -> AccrualReport:
    """Accrue and book every ended day not yet accrued of every institution's accounts with
    interest terms (module docstring). `on_progress(done, total)` is called after each day of
    books (an institution and currency's day) with those done and to do. Safe to run from
    several processes at once."""
    now = now or timezone.now()
    report = AccrualReport()
    work = []
    for institution in Institution.objects.filter(
        pk__in=InterestTerms.objects.values("institution_id")
    ).order_by("pk"):
        yesterday = local_date(institution, now) - ONE_DAY
        terms = _terms_by_product(institution)
        currencies = (
            Account.objects.filter(
                institution=institution, kind=Account.Kind.CUSTOMER, product_id__in=list(terms)
            )
            .values_list("currency", flat=True)
            .distinct()
            .order_by("currency")
        )
        for currency in currencies:
            book, _ = AccrualBook.objects.get_or_create(institution=institution, currency=currency)
            first = (
                book.accrued_through + ONE_DAY
                if book.accrued_through is not None
                else min(rows[0].effective_date for rows in terms.values())
            )
            days = [first + ONE_DAY * n for n in range(max(0, (yesterday - first).days + 1))]
            if days:
                work.append((institution, currency, book, terms, days))
    total = sum(len(days) for *_, days in work)
    for institution, currency, book, terms, days in work:
        for day in days:
            _accrue_day(institution, currency, book.pk, terms, day, batch_size, report)
            # Every account's day is done: the next run starts after it.
            AccrualBook.objects.filter(
                Q(accrued_through__lt=day) | Q(accrued_through__isnull=True), pk=book.pk
            ).update(accrued_through=day)
            report.days += 1
            if on_progress is not None:
                on_progress(report.days, total)
    return report


def _terms_by_product(institution: Institution) -> dict[str, list[InterestTerms]]:
    terms: dict[str, list[InterestTerms]] = {}
    for row in InterestTerms.objects.filter(institution=institution).order_by(
        "product_id", "effective_date"
    ):
        terms.setdefault(row.product_id, []).append(row)
    return terms


def _accrue_day(institution, currency, book_id, terms, day, batch_size, report) -> None:
    zone = ZoneInfo(institution.time_zone)
    # Just before the next day starts: money at exactly midnight is the next day's
    # (interest.selectors.interest_days reads the same instant).
    at = end_of_day(day, zone) - MICROSECOND
    products = [pk for pk, rows in terms.items() if rows[0].effective_date <= day]
    after = ""
    while True:
        with transaction.atomic():
            book = lock_book(book_id)
            batch = list(
                Account.objects.filter(
                    institution=institution,
                    kind=Account.Kind.CUSTOMER,
                    currency=currency,
                    product_id__in=products,
                    created_at__lte=at,
                    pk__gt=after,
                )
                .order_by("pk")
                .values_list("pk", "product_id")[:batch_size]
            )
            if batch:
                after = batch[-1][0]
                _accrue_batch(institution, currency, book, terms, day, at, dict(batch), report)
        if len(batch) < batch_size:
            return


def _accrue_batch(institution, currency, book, terms, day, at, products, report) -> None:
    """Under the books' lock: the batch's accounts (id -> product) not yet accrued for `day`
    get their rows and one journal."""
    done = set(
        InterestAccrual.objects.filter(account_id__in=list(products), day=day).values_list(
            "account_id", flat=True
        )
    )
    todo = [pk for pk in products if pk not in done]
    balances = value_balances_of(account_ids=todo, at=at)
    booking = InterestBooking(institution=institution, currency=currency, day=day)
    rows = []
    for account_id in todo:
        calculated = interest_day(
            day, balances[account_id], terms_on(terms[products[account_id]], day)
        )
        if calculated.kind == Kind.NONE or calculated.accrual == 0:
            continue
        rows.append(
            InterestAccrual(
                institution=institution,
                account_id=account_id,
                day=day,
                kind=calculated.kind,
                balance=calculated.balance,
                bands=[
                    {"amount": band.amount, "rate": rate_text(band.rate)}
                    for band in calculated.bands
                ],
                terms_id=calculated.terms_id,
                fraction=f"{calculated.fraction.numerator}/{calculated.fraction.denominator}",
                accrual=to_places(calculated.accrual),
                booking=booking,
            )
        )
    if not rows:
        return
    # Summed as fractions (exact: the rows have PLACES places), never in a Decimal context.
    sums = {
        kind: sum((Fraction(row.accrual) for row in rows if row.kind == kind), Fraction(0))
        for kind in AccrualKind.values
    }
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
        booking.journal = _post(institution, currency, day, at, moved)
        report.journals += 1
    booking.save(force_insert=True)
    InterestAccrual.objects.bulk_create(rows)
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
    report.accruals += len(rows)


def _post(institution, currency, day, at, moved) -> Journal:
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
        description=f"Interest accrued on {day.isoformat()}",
    )
    # The interest counts in the day it is for (docs/balances-at-an-instant.md, "Value dates").
    journal.value_at = at
    post(institution_id=institution.pk, currency=currency, moves=moves, journal=journal)
    return journal


def interest_accrue_account(
    *, institution: Institution, book: AccrualBook, account: Account, through: date
) -> AccrualReport:
    """Under the books' lock (`lock_book`, the caller's transaction): `account`'s days after
    the books' `accrued_through` up to `through` stored and booked as the job would (its rows
    then found by the job, which leaves them out): the settlement before a close does not wait
    for the job (docs/interest.md, "Closing an account")."""
    report = AccrualReport()
    terms = _terms_by_product(institution)
    if account.product_id not in terms:
        return report
    first = (
        book.accrued_through + ONE_DAY
        if book.accrued_through is not None
        else min(rows[0].effective_date for rows in terms.values())
    )
    zone = ZoneInfo(institution.time_zone)
    day = first
    while day <= through:
        at = end_of_day(day, zone) - MICROSECOND
        if account.created_at <= at:
            _accrue_batch(
                institution,
                account.currency,
                book,
                terms,
                day,
                at,
                {account.pk: account.product_id},
                report,
            )
        day += ONE_DAY
    return report
