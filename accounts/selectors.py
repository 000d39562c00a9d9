"""Reads of accounts, products, holds and fees, always scoped to one institution: another
institution's object answers the same 404 as an unknown id."""

from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.db import connection
from django.db.models import Case, F, Q, Sum, When
from django.utils import timezone

from core import pg_array, rows
from core.exceptions import NotFound
from core.selectors import get_of_institution
from institutions.models import Institution

from . import ibans
from .models import Account, AccountProduct, Entry, Fee, Hold, HoldChange


def account_product_list(*, institution: Institution):
    return AccountProduct.objects.filter(institution=institution)


def account_product_get(*, institution: Institution, product_id: str) -> AccountProduct:
    return get_of_institution(
        AccountProduct,
        institution=institution,
        id=product_id,
        missing="No account product with this rid.",
    )


def account_list(*, institution: Institution, customer_id: str | None = None):
    accounts = Account.objects.filter(institution=institution, kind=Account.Kind.CUSTOMER)
    if customer_id:
        accounts = accounts.filter(customer_id=customer_id)
    return accounts.select_related("product")


def _customer_accounts():
    return Account.objects.select_related("product").filter(kind=Account.Kind.CUSTOMER)


def account_get(*, institution: Institution, account_id: str) -> Account:
    """The institution's customer account, with its product and what its representation reads
    beside it (`accounts.ibans.related`: its institution's SEPA profile, for the v2 `iban`),
    in one plain statement: every account read and most writes start here, and the ORM would
    compile the joined query again on each (bench/README.md). Another institution's account
    answers the same 404 as an unknown one."""
    found = rows.select(
        Account,
        "id = %s AND institution_id = %s AND kind = %s",
        [account_id, institution.pk, Account.Kind.CUSTOMER],
        related=("product", *ibans.related()),
    )
    if not found:
        raise NotFound("No account with this id.")
    return found[0]


def account_by_number(*, institution: Institution, account_number: str) -> Account:
    return get_of_institution(
        _customer_accounts(),
        institution=institution,
        account_number=account_number,
        missing="No account with this account number.",
    )


def accounts_of_endpoints(
    *, institution: Institution, endpoints: list[dict], refuse: bool = True
) -> list[Account | NotFound]:
    """The accounts named by `{"account_id"}` or `{"account_number"}` objects, in their order, in
    one query (the transfer path is hot; a batch names up to 2,000). 404 when one does not exist
    in the institution; with `refuse=False`, that 404 in its place instead."""
    ids = [endpoint["account_id"] for endpoint in endpoints if "account_id" in endpoint]
    numbers = [e["account_number"] for e in endpoints if "account_number" in e]
    # The hot path's one read: a plain statement, not an ORM query compiled on every request.
    found = rows.select(
        Account,
        "institution_id = %s AND kind = %s "
        "AND (id = ANY(%s::varchar[]) OR account_number = ANY(%s::varchar[]))",
        [institution.pk, Account.Kind.CUSTOMER, pg_array.literal(ids), pg_array.literal(numbers)],
    )
    by_id = {account.pk: account for account in found}
    by_number = {account.account_number: account for account in found}
    accounts = []
    for endpoint in endpoints:
        if "account_id" in endpoint:
            account = by_id.get(endpoint["account_id"])
            missing = "No account with this id."
        else:
            account = by_number.get(endpoint["account_number"])
            missing = "No account with this account number."
        if account is None:
            if refuse:
                raise NotFound(missing)
            account = NotFound(missing)
        accounts.append(account)
    return accounts


def hold_list(
    *, institution: Institution, account_id: str | None = None, status: str | None = None
):
    holds = Hold.objects.filter(institution=institution)
    if account_id:
        holds = holds.filter(account_id=account_id)
    if status:
        holds = holds.filter(status=status)
    return holds


def hold_get(*, institution: Institution, hold_id: str) -> Hold:
    return get_of_institution(
        Hold, institution=institution, id=hold_id, missing="No hold with this id."
    )


def balance_at(*, account: Account, at: datetime, value: bool = False) -> tuple[int, int]:
    """The account's `(posted, pending)` at the instant `at` (docs/balances-at-an-instant.md).
    `value`: the posted balance by value date instead, the back-valued money posted after `at`
    that counts from `at` or before included (`value_posted_after`).

    `posted`: the `balance_after` of the account's last entry created at or before `at` (0 when
    there is none), one lookup on the index (account, created_at, id); an account's entries'
    `created_at` never go back in id order (a database rule), so that entry is the last one
    posted by then. `pending`: likewise the `pending_after` of the account's last hold change
    (a hold placed or closed) at or before `at`, one lookup on (account, at, id): the holds
    placed by then and not yet captured, released or expired then."""
    last = (
        Entry.objects.filter(account_id=account.pk, created_at__lte=at)
        .order_by("-created_at", "-id")
        .values_list("balance_after", flat=True)
        .first()
    )
    pending = (
        HoldChange.objects.filter(account_id=account.pk, at__lte=at)
        .order_by("-at", "-id")
        .values_list("pending_after", flat=True)
        .first()
    )
    posted = last or 0
    if value:
        posted += value_posted_after(account=account, at=at)
    return (posted, pending or 0)


def value_posted_after(*, account: Account, at: datetime) -> int:
    """What the account's entries posted after `at` add to its balance while their journals'
    value dates are at or before `at` (`Journal.value_at`: money that counts from an earlier
    instant than its posting). One range of the account's entries posted after `at` (the index
    of `balance_at`), each joined to its journal: its cost grows with what the account posted
    since `at`, which is why it is asked for (`basis=value`), not the default."""
    total = (
        Entry.objects.filter(account_id=account.pk, created_at__gt=at, journal__value_at__lte=at)
        .annotate(signed=Case(When(direction="credit", then=F("amount")), default=-F("amount")))
        .aggregate(total=Sum("signed"))["total"]
    )
    return total or 0


# The balances by value date at many instants, in one statement: the booking at the first, the
# entries posted after it that count by the last, each put in the bucket of the first instant at
# or after its value instant (`width_bucket` on the instants plus one microsecond: instants are
# inclusive, as in `balance_at`).
def value_balances_at(*, account: Account, instants: list[datetime]) -> list[int]:
    """The account's posted balance by value date at each of `instants` (aware, increasing),
    as `balance_at(..., value=True)` answers each (docs/balances-at-an-instant.md, "Value
    dates"), in one query: a range of days' end-of-day balances (interest, docs/interest.md).
    `value_balances_over` for one account: its cost grows with what the account posted since
    the first instant, not with the number of instants."""
    return value_balances_over(account_ids=[account.pk], instants=instants)[account.pk]


# The balances by value date of many accounts at one instant, in one statement: each account's
# booking at the instant (one lookup on (account, created_at, id)) plus what its entries posted
# after it add with a value instant at or before it, as `balance_at(..., value=True)` reads.
VALUE_BALANCES_OF_SQL = """
SELECT a.id,
       (COALESCE((SELECT balance_after FROM accounts_entry
                   WHERE account_id = a.id AND created_at <= %(at)s
                   ORDER BY created_at DESC, id DESC LIMIT 1), 0)
        + COALESCE((SELECT SUM(CASE WHEN e.direction = 'credit' THEN e.amount ELSE -e.amount END)
                      FROM accounts_entry e JOIN accounts_journal j ON j.id = e.journal_id
                     WHERE e.account_id = a.id AND e.created_at > %(at)s
                       AND j.value_at <= %(at)s), 0))::bigint
  FROM unnest(%(accounts)s::text[]) AS a(id)
"""


def value_balances_of(*, account_ids: list[str], at: datetime) -> dict[str, int]:
    """Each account's posted balance by value date at the instant `at`, as `balance_at(...,
    value=True)` answers it, in one query (a batch of the interest accrual job, docs/interest.md).
    Per account: one lookup on (account, created_at, id) and the range of its entries posted
    after `at`: the cost grows with the accounts and what they posted since, not their history."""
    if not account_ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(VALUE_BALANCES_OF_SQL, {"accounts": list(account_ids), "at": at})
        return dict(cursor.fetchall())


# The balances by value date of many accounts at many instants, in one statement: each account's
# booking at the first instant (one lookup on (account, created_at, id)) as bucket 0, and its
# entries posted after it that count by the last, each in the bucket of the first instant at or
# after its value instant (`width_bucket` over the instants plus a microsecond: bucket k holds
# (instants[k-1], instants[k]]), one range of the same index per account: `account_id = ANY(...)`
# with `created_at >`.
VALUE_BALANCES_OVER_SQL = """
SELECT a.id, 0, COALESCE((SELECT balance_after FROM accounts_entry
                           WHERE account_id = a.id AND created_at <= %(first)s
                           ORDER BY created_at DESC, id DESC LIMIT 1), 0)
  FROM unnest(%(accounts)s::text[]) AS a(id)
UNION ALL
SELECT e.account_id, width_bucket(COALESCE(j.value_at, e.created_at), %(bounds)s::timestamptz[]),
       SUM(CASE WHEN e.direction = 'credit' THEN e.amount ELSE -e.amount END)
  FROM accounts_entry e JOIN accounts_journal j ON j.id = e.journal_id
 WHERE e.account_id = ANY(%(accounts)s::text[]) AND e.created_at > %(first)s
   AND COALESCE(j.value_at, e.created_at) <= %(last)s
 GROUP BY 1, 2
"""


def value_balances_over(
    *, account_ids: list[str], instants: list[datetime]
) -> dict[str, list[int]]:
    """Each account's posted balance by value date at each of `instants` (aware, increasing), as
    `balance_at(..., value=True)` answers each, for many accounts in one query (an interest
    preview over a product's book, a range of one account's days: docs/interest.md). Its cost
    is one lookup per account on (account, created_at, id) plus the entries the accounts posted
    after the first instant: it grows with the accounts and what they posted since, not with
    their history or the number of instants."""
    if not account_ids or not instants:
        return {account_id: [] for account_id in account_ids}
    if any(later <= earlier for earlier, later in zip(instants, instants[1:], strict=False)):
        raise ValueError("instants must increase.")
    bounds = "{" + ",".join((at + timedelta(microseconds=1)).isoformat() for at in instants) + "}"
    moved: dict[str, list[int]] = {account_id: [0] * len(instants) for account_id in account_ids}
    with connection.cursor() as cursor:
        cursor.execute(
            VALUE_BALANCES_OVER_SQL,
            {
                "accounts": list(account_ids),
                "first": instants[0],
                "last": instants[-1],
                "bounds": bounds,
            },
        )
        for account_id, bucket, amount in cursor.fetchall():
            moved[account_id][bucket] += amount
    balances = {}
    for account_id, amounts in moved.items():
        running, series = 0, []
        for amount in amounts:
            running += amount
            series.append(running)
        balances[account_id] = series
    return balances


def fee_list(*, account: Account, kind: str | None = None, status: str | None = None):
    """An account's fees (docs/fees.md), newest first; `kind` and `status` narrow them."""
    fees = Fee.objects.filter(account=account)
    if kind:
        fees = fees.filter(kind=kind)
    if status:
        fees = fees.filter(status=status)
    return fees


def fee_get(*, institution: Institution, fee_id: str) -> Fee:
    return get_of_institution(
        Fee, institution=institution, id=fee_id, missing="No fee with this id."
    )


def holds_expiring_today(holds, *, now: datetime | None = None):
    """The active ones of `holds` whose `expires_at` falls on today's date in their
    institution's time zone (`Institution.time_zone`, as card limits and statements count
    days): still to expire today, or past their time and not yet swept by `expire_holds`.

    One range on the partial index of active holds' expiry (from the earliest zone's midnight
    to the latest zone's next midnight), narrowed per zone; a zone is one of the few the
    institutions use."""
    now = now or timezone.now()
    days = {}
    for zone in Institution.objects.order_by().values_list("time_zone", flat=True).distinct():
        today = timezone.localdate(now, ZoneInfo(zone))
        start = datetime.combine(today, time.min, tzinfo=ZoneInfo(zone))
        days[zone] = (start, datetime.combine(today + timedelta(days=1), time.min, ZoneInfo(zone)))
    if not days:
        return holds.none()
    each_zone = Q()
    for zone, (start, end) in days.items():
        each_zone |= Q(institution__time_zone=zone, expires_at__gte=start, expires_at__lt=end)
    return holds.filter(
        each_zone,
        status=Hold.Status.ACTIVE,
        expires_at__gte=min(start for start, _ in days.values()),
        expires_at__lt=max(end for _, end in days.values()),
    )


def program_funding_accounts(*, institution: Institution):
    """The institution's just-in-time program funding accounts (one per currency), newest
    first."""
    return Account.objects.filter(
        institution=institution,
        kind=Account.Kind.INTERNAL,
        internal_code=Account.InternalCode.PROGRAM_FUNDING,
    ).order_by("-pk")


def program_funding_account_get(*, institution: Institution, account_id: str) -> Account:
    return get_of_institution(
        program_funding_accounts(institution=institution),
        institution=institution,
        id=account_id,
        missing="No program funding account with this id.",
    )
