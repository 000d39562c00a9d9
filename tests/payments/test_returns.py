"""A settled debit returned at the edge of what its account has (docs/payments.md, "Money":
returns are facts, never refused): exactly the amount available, one cent short (the cent to
returns receivable), and a frozen account; the account never below zero available (its USD
product allows no overdraft). And a frozen account's collected debit: settled and held."""

from datetime import timedelta

import pytest

from accounts.models import Account
from accounts.verification import ledger_breaches
from payments.models import PaymentOrder
from tests.accounts.api.helpers import created, set_status
from tests.payments.helpers import ach_bank, bank_answers, local, rails_at
from tests.payments.test_orders import business_day, internal

pytestmark = pytest.mark.django_db
AMOUNT = 5_000


def settled_debit(bank, account_number: str = "1111000001") -> PaymentOrder:
    """A debit of AMOUNT through its file to its settlement (the simulated bank returns R01 the
    day after, for the account number 1111000001)."""
    made = bank.ordered(bank.external(account_number)["externalAccountId"], AMOUNT, "debit")
    rails_at(local(business_day(), 17))
    order = PaymentOrder.objects.get(pk=made["paymentOrderId"])
    rails_at(local(order.effective_date, 9))
    assert bank.get(order.pk)["status"] == "settled"
    return order


def returned(bank, order: PaymentOrder) -> dict:
    """The bank's R01 the day after the settlement, read by the payments job."""
    day = order.effective_date + timedelta(days=1)
    assert len(bank_answers(bank, day)) == 1
    rails_at(local(day, 10))
    body = bank.get(order.pk)
    assert (body["status"], body["returnInfo"]["code"]) == ("returned", "R01")
    return body


def spend(bank, amount: int) -> None:
    created(
        bank.api.post(
            f"/accounts/{bank.account_id}/adjustments",
            {"direction": "debit", "amount": amount, "currency": "USD"},
        ),
        "v2",
    )


@pytest.mark.parametrize(
    ("hold_days", "spent", "left", "owed"),
    [
        (2, 0, 0, 0),  # the returns hold still on: released, then all of it taken
        (0, 0, 0, 0),  # nothing held: exactly the amount available
        (0, 1, 0, 1),  # one cent spent: the cent owed
        (0, AMOUNT, 0, AMOUNT),  # all spent: all owed
    ],
    ids=["held", "exactly available", "one cent short", "all spent"],
)
def test_a_returned_debit_takes_what_is_available_and_books_the_rest_as_owed(
    hold_days, spent, left, owed
):
    bank = ach_bank(load_amount=0, debit_hold_days=hold_days)
    order = settled_debit(bank)
    assert bank.balances() == (AMOUNT, AMOUNT if hold_days else 0, 0 if hold_days else AMOUNT)
    if spent:
        spend(bank, spent)

    returned(bank, order)

    assert bank.balances() == (left, 0, left)
    assert internal(bank, "returns_receivable") == -owed
    assert internal(bank, "rail_settlement") == 0
    assert ledger_breaches() == []


@pytest.mark.parametrize(("hold_days", "spent"), [(2, 0), (0, 1)], ids=["held", "one cent short"])
def test_a_frozen_accounts_returned_debit_is_taken_all_the_same(hold_days, spent):
    bank = ach_bank(load_amount=0, debit_hold_days=hold_days)
    order = settled_debit(bank)
    if spent:
        spend(bank, spent)
    assert set_status(bank.api, bank.account_id, "frozen").status_code == 200

    returned(bank, order)

    assert bank.balances() == (0, 0, 0)
    assert internal(bank, "returns_receivable") == -spent
    assert Account.objects.get(pk=bank.account_id).status == "frozen"
    assert ledger_breaches() == []


def test_a_debit_collected_into_a_frozen_account_settles_and_is_held_for_its_returns():
    """Money may come into a frozen account (docs/money.md), and the returns hold holds what
    came in: the settlement was refused (`account_not_active`), failing the job's batch."""
    bank = ach_bank(load_amount=1_000)
    made = bank.ordered(bank.external()["externalAccountId"], AMOUNT, "debit")
    rails_at(local(business_day(), 17))
    order = PaymentOrder.objects.get(pk=made["paymentOrderId"])
    assert set_status(bank.api, bank.account_id, "frozen").status_code == 200

    rails_at(local(order.effective_date, 9))

    assert bank.get(order.pk)["status"] == "settled"
    assert bank.balances() == (1_000 + AMOUNT, AMOUNT, 1_000)
    assert ledger_breaches() == []
