"""The sandbox's clock (docs/payments.md, "The sandbox"): days of the rails played ahead, with
the simulated bank answering; refused where SANDBOX_CLOCK is off."""

import pytest

from accounts.verification import ledger_breaches
from core.exceptions import PermissionDenied
from sandbox.rails_clock import rails_play
from tests.payments.helpers import ach_bank, local
from tests.payments.test_orders import business_day

pytestmark = pytest.mark.django_db


def test_four_days_played_settle_a_credit_and_return_a_debit(settings, rails_dir):
    settings.SANDBOX_CLOCK = True
    bank = ach_bank(load_amount=10_000)
    paid = bank.ordered(bank.external()["externalAccountId"], 2_500)
    collected = bank.ordered(bank.external("1111000001")["externalAccountId"], 1_000, "debit")

    rails_play(days=4, start=local(business_day(), 9))

    assert bank.get(paid["paymentOrderId"])["status"] == "settled"
    returned = bank.get(collected["paymentOrderId"])
    assert (returned["status"], returned["returnInfo"]["code"]) == ("returned", "R01")
    assert bank.balances() == (7_500, 0, 7_500)
    assert ledger_breaches() == []


def test_the_clock_is_refused_where_it_is_off(settings):
    settings.SANDBOX_CLOCK = False
    with pytest.raises(PermissionDenied, match="SANDBOX_CLOCK"):
        rails_play(days=1)
