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

from accounts.models import Account
from accounts.selectors import value_balances_of
from institutions.calendar import local_date
from institutions.models import Institution

from .adjustments import interest_adjust
from .average import is_average
from .booking import book_sums
from .calculation import interest_day, to_places
from .locks import lock_book
from .models import AccrualBook, AccrualKind, InterestAccrual, InterestBooking, InterestTerms
from .rates import rate_text
from .selectors import MICROSECOND, end_of_day, interest_days
from .terms import overrides_by_account, terms_in_effect, terms_on  # noqa: F401 (terms_on: callers)

ONE_DAY = timedelta(days=1)
BATCH_SIZE = 500


@dataclass
class AccrualReport:
    days: int = 0  # days of books accrued (an institution and currency's day is one)
    accruals: int = 0  # rows written
    journals: int = 0
    adjustments: int = 0  # of back-valued money (interest.adjustments), rows written


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
        overrides = overrides_by_account(institution=institution)
        currencies = (
            Account.objects.filter(
                Q(product_id__in=list(terms)) | Q(pk__in=list(overrides)),
                institution=institution,
                kind=Account.Kind.CUSTOMER,
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
                else min(rows[0].effective_date for rows in [*terms.values(), *overrides.values()])
            )
            days = [first + ONE_DAY * n for n in range(max(0, (yesterday - first).days + 1))]
            if days:
                work.append((institution, currency, book, (terms, overrides), days))
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
    # Then the money booked since with a value date in days already accrued.
    adjusted = interest_adjust(now=now)
    report.adjustments += adjusted.adjustments
    report.journals += adjusted.journals
    return report


def _terms_by_product(institution: Institution) -> dict[str, list[InterestTerms]]:
    terms: dict[str, list[InterestTerms]] = {}
    rows = InterestTerms.objects.filter(institution=institution, product__isnull=False)
    for row in rows.order_by("product_id", "effective_date"):
        terms.setdefault(row.product_id, []).append(row)
    return terms


def _accrue_day(institution, currency, book_id, terms, day, batch_size, report) -> None:
    """`terms`: (the product's terms by product, the overrides by account)."""
    zone = ZoneInfo(institution.time_zone)
    # Just before the next day starts: money at exactly midnight is the next day's
    # (interest.selectors.interest_days reads the same instant).
    at = end_of_day(day, zone) - MICROSECOND
    products = [pk for pk, rows in terms[0].items() if rows[0].effective_date <= day]
    overridden = [pk for pk, rows in terms[1].items() if rows[0].effective_date <= day]
    after = ""
    while True:
        with transaction.atomic():
            book = lock_book(book_id)
            batch = list(
                Account.objects.filter(
                    Q(product_id__in=products) | Q(pk__in=overridden),
                    institution=institution,
                    kind=Account.Kind.CUSTOMER,
                    currency=currency,
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
    todo = {
        pk: terms_in_effect(terms[0].get(products[pk], []), terms[1].get(pk, []), day)
        for pk in products
        if pk not in done
    }
    # Under average daily balances a day needs its period's days (interest.average): read
    # account by account as the days' calculation reads them; the rest in one query.
    averaged = [pk for pk, in_effect in todo.items() if is_average(in_effect)]
    daily = [pk for pk in todo if pk not in averaged]
    balances = value_balances_of(account_ids=daily, at=at)
    calculated = [interest_day(day, balances[pk], todo[pk]) for pk in daily]
    for account in Account.objects.filter(pk__in=averaged).order_by("pk"):
        calculated += interest_days(
            account=account, first=day, last=day, time_zone=institution.time_zone
        )
    booking = InterestBooking(institution=institution, currency=currency, day=day)
    rows = []
    for account_id, one in zip(daily + sorted(averaged), calculated, strict=True):
        for kind, accrual in one.accruals().items():
            bands = one.bands if one.average is None else getattr(one.average, kind).bands
            rows.append(
                InterestAccrual(
                    institution=institution,
                    account_id=account_id,
                    day=day,
                    kind=kind,
                    balance=one.balance,
                    bands=[
                        {"amount": amount_json(band.amount), "rate": rate_text(band.rate)}
                        for band in bands
                    ],
                    terms_id=one.terms_id,
                    fraction=f"{one.fraction.numerator}/{one.fraction.denominator}",
                    accrual=to_places(accrual),
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
    book_sums(
        institution, currency, book, booking, sums, at, f"Interest accrued on {day.isoformat()}"
    )
    report.journals += booking.journal_id is not None
    InterestAccrual.objects.bulk_create(rows)
    report.accruals += len(rows)


def amount_json(amount) -> int | str:
    """A band's amount as a row keeps it: minor units, or an average's exact "n/d"."""
    amount = Fraction(amount)
    return amount.numerator if amount.denominator == 1 else str(amount)


def interest_accrue_account(
    *, institution: Institution, book: AccrualBook, account: Account, through: date
) -> AccrualReport:
    """Under the books' lock (`lock_book`, the caller's transaction): `account`'s days after
    the books' `accrued_through` up to `through` stored and booked as the job would (its rows
    then found by the job, which leaves them out): the settlement before a close does not wait
    for the job (docs/interest.md, "Closing an account")."""
    report = AccrualReport()
    by_product = _terms_by_product(institution)
    overrides = overrides_by_account(institution=institution, account=account)
    if account.product_id not in by_product and not overrides:
        return report
    first = (
        book.accrued_through + ONE_DAY
        if book.accrued_through is not None
        else min(rows[0].effective_date for rows in [*by_product.values(), *overrides.values()])
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
                (by_product, overrides),
                day,
                at,
                {account.pk: account.product_id},
                report,
            )
        day += ONE_DAY
    return report
