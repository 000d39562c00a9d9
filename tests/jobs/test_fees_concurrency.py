"""The monthly fee job run twice at once charges each account once (docs/fees.md): real
threads, each with its own connection and committed transactions, as tests/jobs do."""

from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import Account, AccountProduct, Fee, StatementLine
from accounts.services import internal_account, monthly_fees_charge
from accounts.verification import ledger_breaches
from core.actors import SYSTEM
from core.operations import run_batches
from events.models import Event
from jobs import tasks
from tests.accounts.ledger.helpers import institution, internal, open_account, run_threads
from tests.accounts.ledger.test_concurrency import held_while_blocked

pytestmark = pytest.mark.django_db(transaction=True)


def accounts_owing(count: int, fee: int = 300, balance: int = 1_000) -> tuple:
    fi = institution()
    AccountProduct.objects.filter(institution=fi, code=AccountProduct.Code.PREPAID).update(
        monthly_fee=fee
    )
    accounts = [open_account(fi, balance=balance) for _ in range(count)]
    Account.objects.filter(pk__in=[a.pk for a in accounts]).update(
        created_at=timezone.now() - timedelta(days=40)
    )
    return fi, accounts


def charged_once(fi, accounts, fee: int = 300) -> None:
    ids = {account.pk for account in accounts}
    per_account = Counter(
        Fee.objects.filter(account_id__in=ids).values_list("account_id", flat=True)
    )
    assert per_account == dict.fromkeys(ids, 1)
    fees = Fee.objects.filter(account_id__in=ids)
    assert set(fees.values_list("status", "amount")) == {("charged", fee)}
    events = Counter(Event.objects.filter(type="fee.charged").values_list("object_id", flat=True))
    assert events == dict.fromkeys(fees.values_list("pk", flat=True), 1)
    assert StatementLine.objects.filter(fee__in=fees, category="fee").count() == len(ids)
    assert set(Account.objects.filter(pk__in=ids).values_list("posted", flat=True)) == {700}
    assert internal(fi, "fees").posted == fee * len(ids)
    assert ledger_breaches() == []


def test_the_monthly_fee_job_run_twice_at_once_charges_each_account_once():
    fi, accounts = accounts_owing(30)

    results = run_threads(2, lambda _: tasks.charge_monthly_fees(timestamp=0))

    assert sum(result["charged"] for result in results) == 30
    charged_once(fi, accounts)
    assert tasks.charge_monthly_fees(timestamp=0) == {"charged": 0, "declined": 0}


def test_small_batches_of_two_runs_interleave_and_still_charge_each_account_once():
    fi, accounts = accounts_owing(24)

    results = run_threads(3, lambda _: run_batches(monthly_fees_charge, actor=SYSTEM, batch_size=4))

    assert sum(result["charged"] for result in results) == 24
    charged_once(fi, accounts)


def test_the_job_locks_the_fees_account_before_the_accounts_it_charges():
    """Every fee of a batch credits the fees account. Locked by the batch's first fee, after
    the batch's accounts, it was taken against the id order whenever it was opened before them
    (the lower id): a fee charged or waived meanwhile on one of them, whose posting locks the
    fees account and then that account, would wait for the batch while the batch waits for it,
    a deadlock. Taken first (docs/money.md, "Locking"), the job holds no customer account while
    it waits for the fees account, which a third party holds here until the job waits."""
    fi = institution()
    fees = internal_account(institution=fi, code=Account.InternalCode.FEES, currency="EUR")
    AccountProduct.objects.filter(institution=fi, code=AccountProduct.Code.PREPAID).update(
        monthly_fee=300
    )
    owing = open_account(fi, balance=1_000)
    Account.objects.filter(pk=owing.pk).update(created_at=timezone.now() - timedelta(days=40))
    assert fees.pk < owing.pk  # ids are time-ordered: the fees account was opened first
    counts = []

    probe = held_while_blocked(lambda: counts.append(monthly_fees_charge()), (Account, fees.pk))

    assert probe({"owing": (Account, owing.pk)}) == {"owing": False}
    assert counts == [{"charged": 1, "declined": 0}]
    charged_once(fi, [owing])
