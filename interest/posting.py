"""Posting interest to customers at period end (docs/interest.md, "Posting").

For an account and a period, its accruals of each kind (`selectors.period_accruals`, the one
place that sums them) plus the residue its last posting of the kind carried out are rounded
once, by the terms' `rounding`, to whole minor units; what is left below a minor unit is
carried to the next period (`InterestPosting.carried_out`), so over any span the postings are
the exact accruals within one minor unit. A period is posted by the terms in effect on its last
day, an account's override when one is (`posting_terms`); its sums include the adjustments of
back-valued money found on its days. One journal per account and period:

- deposit interest: `interest_payable` -> the customer, less the tax withheld
  (`withholding_tax_rate` percent of it, rounded the same way) -> `interest_withholding_tax`;
  negative (a negative rate), the customer -> payable;
- overdraft interest: the customer -> `interest_receivable`, whatever the account has available
  (`accounts.posting.FORCED`: the customer owes it; what it takes beyond the overdraft limit is
  the account's `network_overdraft`, paid back first by what comes in) and on a frozen account
  too.

A period's rows are written once (the unique constraint, `interest_posting_one_a_period`); a
batch of accounts is posted under the books' lock (`lock_book`, as the accrual job's batches),
so a run twice, or two at once, post each period once.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from fractions import Fraction
from zoneinfo import ZoneInfo

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from accounts.models import Account, Journal, StatementLine
from accounts.posting import FORCED, Move, credit, debit, journal_new, post
from accounts.services import internal_account
from accounts.statement_lines import Line, statement_lines_new
from core.exceptions import AccountNotActive, InterestNotPosted
from core.money import money
from events.services import event_for
from institutions.calendar import local_date
from institutions.models import Institution

from .accrual import _terms_by_product, interest_accrue_account
from .adjustments import account_adjustments, interest_adjust_account
from .calculation import to_places
from .daycount import day_fraction
from .locks import lock_book
from .models import AccrualBook, AccrualKind, InterestPosting, InterestTerms
from .periods import is_period_end, period_ends
from .selectors import (
    adjustments_in,
    end_of_day,
    interest_days,
    latest_postings,
    period_accruals,
    period_balances,
)
from .terms import overrides_by_account, terms_in_effect, terms_on

ONE_DAY = timedelta(days=1)
BATCH_SIZE = 500
HUNDRED = 100
Code = Account.InternalCode
Rounding = InterestTerms.Rounding
DEPOSIT, OVERDRAFT = AccrualKind.DEPOSIT, AccrualKind.OVERDRAFT


# --- the arithmetic, pure ----------------------------------------------------------------------


def round_minor(value: Fraction, rounding: str) -> int:
    """`value` (minor units) to whole minor units: `half_even`, `half_up` (a half away from
    zero), `down` (toward zero)."""
    if rounding == Rounding.HALF_EVEN:
        return round(value)
    if rounding == Rounding.HALF_UP:
        magnitude = math.floor(abs(value) + Fraction(1, 2))
        return magnitude if value >= 0 else -magnitude
    if rounding == Rounding.DOWN:
        return math.trunc(value)
    raise ValueError(f"Unknown rounding {rounding!r}")


@dataclass(frozen=True)
class Split:
    amount: int  # posted, whole minor units
    carried_out: Fraction  # the residue the next period carries in


def posting_split(accrued: Fraction, carried_in: Fraction, rounding: str) -> Split:
    """A period's posting: its accruals plus the residue carried in, rounded once; the rest is
    carried out. `amount + carried_out == accrued + carried_in`, always."""
    total = accrued + carried_in
    amount = round_minor(total, rounding)
    return Split(amount, total - amount)


def withholding_tax(amount: int, rate: Decimal, rounding: str) -> int:
    """The tax withheld of a deposit posting of `amount`: `rate` percent of it, rounded as the
    posting; none of a negative or zero posting, never more than the posting."""
    if amount <= 0 or not rate:
        return 0
    return min(amount, max(0, round_minor(Fraction(amount) * Fraction(rate) / HUNDRED, rounding)))


# What a posting's statement line says of its terms (docs/interest.md, "On statements").
METHODS = {
    InterestTerms.BalanceMethod.DAILY: "daily balance",
    InterestTerms.BalanceMethod.AVERAGE_DAILY: "average daily balance",
}
DAY_COUNTS = {
    InterestTerms.DayCount.ACT_365F: "act/365F",
    InterestTerms.DayCount.ACT_360: "act/360",
    InterestTerms.DayCount.ACT_ACT_ISDA: "act/act ISDA",
    InterestTerms.DayCount.THIRTY_360: "30/360",
}
RATE_PLACES = 4


def effective_rate(
    amount: int, balances: int, first: date, last: date, day_count: str
) -> Decimal | None:
    """A posting's effective annual rate, in percent to 4 places (half even): the posted
    `amount` (before tax) / the average of the period's days' balances that earned or owed it
    (`balances`: their sum, `selectors.period_balances`; a day of none counts 0) / the
    period's year fraction (the sum of its days' fractions under `day_count`). None when the
    average is 0 (all the amount is back-valued money of earlier days)."""
    days = (last - first).days + 1
    fraction = sum((day_fraction(day_count, first + ONE_DAY * n) for n in range(days)), Fraction(0))
    if not balances or not fraction:
        return None
    rate = Fraction(amount) * days * HUNDRED / (Fraction(balances) * fraction)
    return Decimal(round(rate * 10**RATE_PLACES)).scaleb(-RATE_PLACES)


def posting_description(
    what: str, first: date, last: date, terms: InterestTerms, rate: Decimal | None
) -> str:
    """`Interest on deposits 2027-03-01 to 2027-03-31: daily balance, act/365F, effective
    3.6500 % a year` (no rate when `effective_rate` has none)."""
    effective = f", effective {rate} % a year" if rate is not None else ""
    return (
        f"{what} {first.isoformat()} to {last.isoformat()}: "
        f"{METHODS[terms.balance_method]}, {DAY_COUNTS[terms.day_count]}{effective}"
    )


# --- posting an account's periods ---------------------------------------------------------------


@dataclass
class PostingReport:
    periods: int = 0  # account periods posted (a row of one kind or both)
    postings: int = 0  # InterestPosting rows written
    journals: int = 0


# An account's terms: (its product's, its overrides), each in effective date order.
AccountTerms = tuple[list[InterestTerms], list[InterestTerms]]
# An institution's: (the products' terms by product, the overrides by account), as the accrual
# job reads them.
Terms = tuple[dict[str, list[InterestTerms]], dict[str, list[InterestTerms]]]


def account_terms(terms: Terms, account: Account) -> AccountTerms:
    """The terms an account's postings follow (the one place posting looks them up): its
    product's and its overrides, of which `posting_terms` picks a day's."""
    by_product, overrides = terms
    return by_product.get(account.product_id, []), overrides.get(account.pk, [])


def posting_terms(terms: AccountTerms, day: date) -> InterestTerms | None:
    """The terms a period ending on `day` is posted by (its frequency, rounding and tax): those
    in effect on the day (`terms_in_effect`: an override in effect, else the product's), else,
    when none are (an override that ended, the product with no terms), the last that were: a
    period's accruals are posted by the terms that accrued its last ones (docs/interest.md,
    "Posting")."""
    product, overrides = terms
    in_effect = terms_in_effect(product, overrides, day)
    if in_effect is not None:
        return in_effect
    ended = terms_on(overrides, day)
    return ended if ended is not None else terms_on(product, day)


def interest_start(institution: Institution, account: Account, terms: AccountTerms) -> date:
    """The first day an account can accrue: its opening day (the institution's date), or its
    first terms' day (its product's or an override's) when later. A first posting starts
    there."""
    opened = local_date(institution, account.created_at)
    firsts = [rows[0].effective_date for rows in terms if rows]
    return max(opened, min(firsts)) if firsts else opened


def _post_period(
    *,
    institution: Institution,
    account: Account,
    terms: InterestTerms,
    first: date,
    last: date,
    sums: dict[str, Fraction],
    carried: dict[str, Fraction],
    balances: dict[str, int],
    trigger: str,
    report: PostingReport,
) -> list[InterestPosting]:
    """Write the period's rows (the kinds in `sums`) and its journal; `carried` the residue each
    kind carries in, `balances` the sum of the days' balances of each kind (its effective rate).
    Under the books' lock, in the caller's transaction."""
    rows = []
    for kind in (DEPOSIT, OVERDRAFT):
        if kind not in sums:
            continue
        split = posting_split(sums[kind], carried.get(kind, Fraction(0)), terms.rounding)
        tax = (
            withholding_tax(split.amount, terms.withholding_tax_rate, terms.rounding)
            if kind == DEPOSIT
            else 0
        )
        rows.append(
            InterestPosting(
                institution=institution,
                account=account,
                kind=kind,
                first_day=first,
                last_day=last,
                trigger=trigger,
                terms=terms,
                accrued=to_places(sums[kind]),
                carried_in=to_places(carried.get(kind, Fraction(0))),
                amount=split.amount,
                carried_out=to_places(split.carried_out),
                withholding_tax=tax,
            )
        )
    if not rows:
        return []
    by_kind = {row.kind: row for row in rows}
    deposit = by_kind[DEPOSIT].amount if DEPOSIT in by_kind else 0
    tax = by_kind[DEPOSIT].withholding_tax if DEPOSIT in by_kind else 0
    overdraft = by_kind[OVERDRAFT].amount if OVERDRAFT in by_kind else 0
    journal = None
    if deposit or overdraft:
        rates = {
            kind: effective_rate(row.amount, balances.get(kind, 0), first, last, terms.day_count)
            for kind, row in by_kind.items()
        }
        journal = _journal(
            institution, account, first, last, deposit, tax, overdraft, rows, terms, rates
        )
        report.journals += 1
    for row in rows:
        row.journal = journal
    InterestPosting.objects.bulk_create(rows)
    report.periods += 1
    report.postings += len(rows)
    return rows


def _journal(
    institution, account, first, last, deposit, tax, overdraft, rows, terms, rates
) -> Journal:
    currency = account.currency
    zone = ZoneInfo(institution.time_zone)

    def internal(code):
        return internal_account(institution=institution, code=code, currency=currency).pk

    net = deposit - tax - overdraft
    moves = []
    if net > 0:
        moves.append(credit(account.pk, net))
    elif net < 0:
        # Owed by the customer: taken whatever is available, frozen or not (module docstring).
        moves.append(debit(account.pk, -net, check=FORCED))
    legs = {
        Code.INTEREST_PAYABLE: -deposit,
        Code.INTEREST_WITHHOLDING_TAX: tax,
        Code.INTEREST_RECEIVABLE: overdraft,
    }
    moves += [Move(internal(code), "", amount) for code, amount in legs.items() if amount]
    period = f"{first.isoformat()} to {last.isoformat()}"
    journal = journal_new(
        institution_id=institution.pk,
        kind=Journal.Kind.INTEREST_POSTING,
        description=f"Interest posted for {period}",
    )
    # Value-dated to the period's end, the first instant of the next day: the last day's
    # end-of-day balance, which accrued, is left as it was, and the interest earns (or costs)
    # from the next day on (docs/interest.md, "Posting").
    journal.value_at = end_of_day(last, zone)
    lines = []
    if deposit - tax:
        withheld = (
            f"; {money(deposit, currency)} less {money(tax, currency)} tax withheld" if tax else ""
        )
        described = posting_description("Interest on deposits", first, last, terms, rates[DEPOSIT])
        lines.append(
            Line(
                account=account,
                type="CashInc" if deposit - tax > 0 else "CashDec",
                amount=abs(deposit - tax),
                description=f"{described}{withheld}",
            )
        )
    if overdraft:
        lines.append(
            Line(
                account=account,
                type="CashDec",
                amount=overdraft,
                description=posting_description(
                    "Overdraft interest", first, last, terms, rates[OVERDRAFT]
                ),
            )
        )
    statement_lines = statement_lines_new(lines=lines, currency=currency, journal=journal)
    for line in statement_lines:
        line.category = StatementLine.Category.INTEREST
    event = event_for(
        account,
        "interest.posted",
        data={
            "account_id": account.pk,
            "first_day": first.isoformat(),
            "last_day": last.isoformat(),
            "trigger": rows[0].trigger,
            "journal_id": journal.pk,
            "posting_ids": [row.pk for row in rows],
            "deposit_amount": deposit,
            "withholding_tax": tax,
            "overdraft_amount": overdraft,
        },
        institution=institution,
    )
    post(
        institution_id=institution.pk,
        currency=currency,
        moves=moves,
        journal=journal,
        lines=statement_lines,
        events=[event],
    )
    return journal


def _post_accounts(
    *,
    institution: Institution,
    accounts: list[Account],
    ends: dict[str, list[date]],
    terms: Terms,
    trigger: str,
    report: PostingReport,
) -> list[InterestPosting]:
    """Under the books' lock: each account's periods ending on its `ends` (account id -> last
    days, in order) not yet posted, each from the day after its last posting (or its opening
    day). Reads the accounts' last postings once, and each period's sums once for the accounts
    that end it. Returns the rows written."""
    written = []
    latest = latest_postings(account_ids=[account.pk for account in accounts])
    covered, carried = {}, {}
    for (account_id, kind), row in latest.items():
        covered[account_id] = max(covered.get(account_id, row.last_day), row.last_day)
        carried[(account_id, kind)] = Fraction(row.carried_out)
    by_id = {account.pk: account for account in accounts}
    for last in sorted({day for days in ends.values() for day in days}):
        firsts = {}
        for account_id, days in ends.items():
            if last not in days:
                continue
            done = covered.get(account_id)
            if done is not None and done >= last:
                continue  # posted already (another run; a settlement)
            account = by_id[account_id]
            firsts[account_id] = (
                done + ONE_DAY
                if done is not None
                else interest_start(institution, account, account_terms(terms, account))
            )
        if not firsts:
            continue
        sums = period_accruals(firsts=firsts, last=last)
        balances = period_balances(firsts=firsts, last=last)
        for account_id, first in firsts.items():
            kinds = {
                kind: sums[(account_id, kind)]
                for kind in (DEPOSIT, OVERDRAFT)
                if (account_id, kind) in sums
            }
            if not kinds:
                continue  # nothing accrued: the next period reaches back to `first`
            account = by_id[account_id]
            rows = _post_period(
                institution=institution,
                account=account,
                terms=posting_terms(account_terms(terms, account), last),
                first=first,
                last=last,
                sums=kinds,
                carried={kind: carried.get((account_id, kind), Fraction(0)) for kind in kinds},
                balances={kind: balances.get((account_id, kind), 0) for kind in kinds},
                trigger=trigger,
                report=report,
            )
            covered[account_id] = last
            for row in rows:
                carried[(account_id, row.kind)] = Fraction(row.carried_out)
            written += rows
    return written


def _ends_of(terms: AccountTerms, after: date, through: date) -> list[date]:
    """The period ends in (after, through] of an account's terms (a product's: no overrides): a
    day that ends a period of the frequency of the terms it is posted by (`posting_terms`), so
    an override of another frequency moves the account's period ends while it is in effect."""
    ends = set()
    for frequency in {row.posting_frequency for rows in terms for row in rows}:
        ends.update(period_ends(frequency, after, through))
    return sorted(
        day
        for day in ends
        if (row := posting_terms(terms, day)) is not None
        and is_period_end(row.posting_frequency, day)
    )


# --- the job ----------------------------------------------------------------------------------


def interest_post(
    *,
    now: datetime | None = None,
    batch_size: int = BATCH_SIZE,
    on_progress: Callable[[int, int], None] | None = None,
) -> PostingReport:
    """Post every period that has ended and whose last day the accrual job has accrued
    (`AccrualBook.accrued_through`), of every account with interest terms not closed; periods
    missed are caught up. `on_progress(done, total)` after each batch, in accounts. Safe to run
    from several processes at once (module docstring)."""
    report = PostingReport()
    work = []
    for book in AccrualBook.objects.filter(accrued_through__isnull=False).order_by("pk"):
        institution = book.institution
        by_product = _terms_by_product(institution)
        overrides = overrides_by_account(institution=institution, account__currency=book.currency)
        if not by_product and not overrides:
            continue
        after = (
            book.posted_through
            if book.posted_through is not None
            else min(rows[0].effective_date for rows in [*by_product.values(), *overrides.values()])
            - ONE_DAY
        )
        through = book.accrued_through
        # A product's accounts end their periods together; an account with overrides by its
        # own terms (an override of another frequency moves its ends).
        ends = {
            product: days
            for product, rows in by_product.items()
            if (days := _ends_of((rows, []), after, through))
        }
        own_ends = {
            pk: _ends_of((by_product.get(product, []), overrides[pk]), after, through)
            for pk, product in Account.objects.filter(pk__in=list(overrides)).values_list(
                "pk", "product_id"
            )
        }
        accounts = Account.objects.filter(
            Q(product_id__in=list(ends)) | Q(pk__in=[pk for pk, days in own_ends.items() if days]),
            institution=institution,
            kind=Account.Kind.CUSTOMER,
            currency=book.currency,
        ).exclude(status=Account.Status.CLOSED)
        work.append(
            (book, institution, (by_product, overrides), ends, own_ends, accounts, accounts.count())
        )
    total = sum(count for *_, count in work)
    done = 0
    for book, institution, terms, ends, own_ends, accounts, _ in work:
        after_id = ""
        while ends or any(own_ends.values()):
            with transaction.atomic():
                lock_book(book.pk)
                batch = list(accounts.filter(pk__gt=after_id).order_by("pk")[:batch_size])
                if batch:
                    after_id = batch[-1].pk
                    _post_accounts(
                        institution=institution,
                        accounts=batch,
                        ends={
                            account.pk: (
                                own_ends[account.pk]
                                if account.pk in own_ends
                                else ends[account.product_id]
                            )
                            for account in batch
                        },
                        terms=terms,
                        trigger=InterestPosting.Trigger.PERIOD_END,
                        report=report,
                    )
            done += len(batch)
            if on_progress is not None and batch:
                on_progress(done, total)
            if len(batch) < batch_size:
                break
        # Every period ending by then is posted: the next run starts after it.
        AccrualBook.objects.filter(
            Q(posted_through__lt=book.accrued_through) | Q(posted_through__isnull=True), pk=book.pk
        ).update(posted_through=book.accrued_through)
    return report


# --- the settlement before a close --------------------------------------------------------------


def interest_settle(*, account: Account, now: datetime | None = None) -> list[InterestPosting]:
    """Accrue `account`'s interest up to and including yesterday (the institution's date; the
    day it closes earns nothing) and post it now: the periods ended by then, and the rest of
    the current one up to yesterday (docs/interest.md, "Closing an account"). A closed account
    is 422 `account_not_active`. Returns the rows written (none: nothing to post)."""
    now = now or timezone.now()
    institution = account.institution
    yesterday = local_date(institution, now) - ONE_DAY
    terms = (_terms_by_product(institution), overrides_by_account(account=account))
    if account.status == Account.Status.CLOSED:
        raise AccountNotActive(f"Account {account.pk} is closed.")
    if not any(account_terms(terms, account)):
        return []
    book, _ = AccrualBook.objects.get_or_create(institution=institution, currency=account.currency)
    report, written = PostingReport(), []
    with transaction.atomic():
        book = lock_book(book.pk)
        latest = latest_postings(account_ids=[account.pk])
        done = max((row.last_day for row in latest.values()), default=None)
        # Back-valued money into days accrued first, found on the last day this settlement
        # posts (today when it posts none: the next posting's), so its posting pays it.
        interest_adjust_account(
            book=book,
            account=account,
            found_on=yesterday if done is None or done < yesterday else yesterday + ONE_DAY,
            now=now,
        )
        interest_accrue_account(
            institution=institution, book=book, account=account, through=yesterday
        )
        after = (
            done
            if done is not None
            else interest_start(institution, account, account_terms(terms, account)) - ONE_DAY
        )
        ends = _ends_of(account_terms(terms, account), after, yesterday)
        if yesterday > after and yesterday not in ends:
            ends.append(yesterday)
        for last in ends:
            written += _post_accounts(
                institution=institution,
                accounts=[account],
                ends={account.pk: [last]},
                terms=terms,
                trigger=(
                    InterestPosting.Trigger.SETTLEMENT
                    if last == yesterday
                    else InterestPosting.Trigger.PERIOD_END
                ),
                report=report,
            )
    return written


# --- the check before a close -------------------------------------------------------------------


def interest_close_check(account: Account) -> None:
    """Registered with `accounts.closing`: 422 `interest_not_posted` when `account` has interest
    accrued up to yesterday and not posted: rows after its last posting, adjustments found
    since, back-valued money into days accrued not caught up yet, or days the job has not
    accrued yet that earn or owe some (computed as the job would). Reads only: the account's
    row is locked, and the books' lock comes before it (the settlement catches up)."""
    institution = account.institution
    terms = (
        list(
            InterestTerms.objects.filter(product_id=account.product_id).order_by("effective_date")
        ),
        overrides_by_account(account=account).get(account.pk, []),
    )
    if not any(terms):
        return
    latest = latest_postings(account_ids=[account.pk])
    done = max((row.last_day for row in latest.values()), default=None)
    first = done + ONE_DAY if done is not None else interest_start(institution, account, terms)
    today = local_date(institution, timezone.now())
    yesterday = today - ONE_DAY
    book = AccrualBook.objects.filter(institution=institution, currency=account.currency).first()
    # Found after the last posting (up to today: the job finds them on the day it runs), or
    # there to be found.
    accrued = dict(adjustments_in(account_ids=[account.pk], first=first, last=today))
    if not accrued and book is not None:
        rows, _ = account_adjustments(book=book, account=account, found_on=today)
        if rows:
            accrued = {"adjustments": Fraction(1)}
    if not accrued and first <= yesterday:
        accrued = period_accruals(firsts={account.pk: first}, last=yesterday)
    stored_through = book.accrued_through if book is not None else None
    if not accrued and first <= yesterday:
        start = max(first, stored_through + ONE_DAY) if stored_through is not None else first
        # At most a year back: the job has not run for longer only on a new installation.
        start = max(start, yesterday - timedelta(days=365))
        if start <= yesterday:
            days = interest_days(
                account=account, first=start, last=yesterday, time_zone=institution.time_zone
            )
            if any(day.accrual for day in days):
                accrued = {"unaccrued": Fraction(1)}
    if accrued:
        raise InterestNotPosted(
            f"Account {account.pk} has interest accrued and not posted: settle it first "
            f"(POST /accounts/{account.pk}/interest/settlements).",
            details={"account_id": account.pk, "not_posted_from": first.isoformat()},
        )
