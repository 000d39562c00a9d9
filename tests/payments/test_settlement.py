"""Settlement on the effective date of the order's institution's calendar, wherever that is
against UTC."""

from datetime import UTC

import pytest

from payments.connector import deliver_pending
from payments.models import PaymentOrder
from payments.services.settlement import orders_settle
from tests.payments.helpers import ach_bank, cutoff, local
from tests.payments.test_orders import business_day

pytestmark = pytest.mark.django_db
AUCKLAND = "Pacific/Auckland"


def test_an_order_settles_on_its_institutions_date_wherever_it_is_against_utc():
    """At 00:30 on the effective date in Auckland it is the day before in UTC, and in New York:
    Auckland's order settles, New York's waits. New York's comes first (made first): one order
    a batch, the run steps past it."""
    new_york, auckland = ach_bank(), ach_bank(zone=AUCKLAND)
    day = business_day()
    waits = new_york.ordered(new_york.external()["externalAccountId"], 300)
    settles = auckland.ordered(auckland.external()["externalAccountId"], 200)
    cutoff(new_york, day), cutoff(auckland, day)
    deliver_pending()
    orders = PaymentOrder.objects.in_bulk([waits["paymentOrderId"], settles["paymentOrderId"]])
    assert len({order.effective_date for order in orders.values()}) == 1
    effective = orders[settles["paymentOrderId"]].effective_date

    now = local(effective, 0, 30, zone=AUCKLAND).astimezone(UTC)
    assert orders_settle(now=now, batch_size=1) == 1

    assert auckland.get(settles["paymentOrderId"])["status"] == "settled"
    assert new_york.get(waits["paymentOrderId"])["status"] == "sent"
