"""Shared set-up and checks for the money-core tests (plain functions, no fixtures)."""

import threading
from types import SimpleNamespace

from django.db import connection

from accounts.models import Account, AccountProduct, Adjustment, Entry, Hold, Journal, StatementLine
from accounts.services import account_create, adjustment_create, internal_account
from accounts.verification import ledger_breaches
from core.actors import SYSTEM
from customers.services import customer_create
from events.models import Event
from tests.factories import InstitutionFactory
from transfers.models import Transfer, TransferReversal

PREPAID = AccountProduct.Code.PREPAID  # EUR for an EUR institution
GHS_PREPAID = AccountProduct.Code.GHS_PREPAID


def institution():
    return InstitutionFactory()


def open_account(fi, *, balance: int = 0, product: str = PREPAID) -> Account:
    """A new customer's account of `product`, loaded with `balance` by a credit adjustment."""
    customer = customer_create(
        institution=fi, first_name="Ada", last_name="Lovelace", country_code="276"
    )
    product = AccountProduct.objects.get(institution=fi, code=product)
    account = account_create(
        institution=fi, customer=customer, product=product, currency=product.currency
    )
    if balance:
        load(account, balance)
    return fresh(account)


def load(account: Account, amount: int) -> Adjustment:
    return adjustment_create(
        account=account,
        direction=Adjustment.Direction.CREDIT,
        amount=amount,
        currency=account.currency,
        actor=SYSTEM,
    )


def fresh(account: Account) -> Account:
    return Account.objects.get(pk=account.pk)


def balance(account: Account) -> tuple[int, int, int]:
    """(posted, pending, available) as stored now."""
    row = Account.objects.filter(pk=account.pk).values_list("posted", "pending", "available")
    return row.get()


def internal(fi, code: str, currency: str = "EUR") -> Account | None:
    return Account.objects.filter(
        institution=fi, kind=Account.Kind.INTERNAL, internal_code=code, currency=currency
    ).first()


def posted_of(account: Account | None) -> int:
    """The posted balance of an account that may not exist yet (an internal one): 0 then."""
    return 0 if account is None else fresh(account).posted


def ledger_state() -> dict:
    """Everything a money operation may write, to prove that a refused one wrote nothing."""
    return {
        "accounts": sorted(
            Account.objects.values_list("pk", "status", "posted", "pending", "updated_at")
        ),
        "journals": sorted(Journal.objects.values_list("pk", flat=True)),
        "entries": sorted(Entry.objects.values_list("pk", "account_id", "direction", "amount")),
        "holds": sorted(
            Hold.objects.values_list("pk", "status", "captured_amount", "capture_journal_id")
        ),
        "adjustments": sorted(Adjustment.objects.values_list("pk", flat=True)),
        "transfers": sorted(Transfer.objects.values_list("pk", "status", "reversed_amount")),
        "reversals": sorted(TransferReversal.objects.values_list("pk", flat=True)),
        "statement_lines": sorted(StatementLine.objects.values_list("pk", flat=True)),
        "events": sorted(Event.objects.values_list("pk", flat=True)),
    }


def assert_ledger_ok() -> None:
    """The deferred rules (balanced journals) hold now, even inside a test transaction that
    will never commit, and `verify_ledger`'s invariants hold."""
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # fires the pending deferred triggers
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
    assert ledger_breaches() == []


def run_threads(count: int, target, *args) -> list:
    """Run `target(index, *args)` in `count` threads started together; each closes its own
    database connection. Returns the results in thread order; re-raises the first exception."""
    barrier = threading.Barrier(count)
    results: list = [None] * count
    errors: list = []

    def run(index):
        try:
            barrier.wait()
            results[index] = target(index, *args)
        except BaseException as error:  # noqa: BLE001 - reported to the test below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads), "a thread is stuck"
    if errors:
        raise errors[0]
    return results


def set_status(account: Account, status: str) -> None:
    Account.objects.filter(pk=account.pk).update(status=status)


def updated_at(account: Account):
    return Account.objects.values_list("updated_at", flat=True).get(pk=account.pk)


def bank():
    """What the posting functions' raw-SQL tests post between: an institution with a loaded
    account (1000), two empty ones, one in GHS, its funding account (-1000: it paid for the
    load) and its settlement account."""
    fi = institution()
    account = open_account(fi, balance=1000)
    empty, other = open_account(fi), open_account(fi)
    ghs = open_account(fi, product=GHS_PREPAID)
    settlement = internal_account(
        institution=fi, code=Account.InternalCode.SETTLEMENT, currency="EUR"
    )
    assert balance(account) == (1000, 0, 1000)
    return SimpleNamespace(
        fi=fi,
        account=account,
        empty=empty,
        other=other,
        ghs=ghs,
        funding=internal(fi, Account.InternalCode.FUNDING),
        settlement=settlement,
    )
