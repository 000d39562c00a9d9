"""Cut-offs on the ACH rail's calendar (docs/payments.md, "Cut-offs"): windows run, and
effective entry dates fall, on ACH days only (the institution's business days that are the
Fed's too); a window's boundary second is its local time on both sides of a change of the
clocks; return windows count ACH days.

The dates are real ones ahead of today (orders are made before their windows): Columbus Day is
Monday 2027-10-11; New York's clocks go forward on Sunday 2027-03-14 and back on Sunday
2027-11-07."""

from datetime import UTC, date, datetime

import pytest

from institutions.calendar import is_business_day
from institutions.services import holiday_add
from payments.calendar import window_instant
from payments.models import ExternalAccount, PaymentOrder
from payments.nacha.codes import return_reason
from payments.nacha.file import parse
from payments.services.returns import is_late
from tests.accounts.api.helpers import created
from tests.payments.helpers import ach_bank, cutoff, local, rails_at

pytestmark = pytest.mark.django_db

D = date.fromisoformat
COLUMBUS_DAY = D("2027-10-11")


def order(bank, rail: str = "ach", made_at: datetime | None = None) -> str:
    """A new order's id; `made_at`: when it was made, as the cut-off reads it."""
    order_id = bank.ordered(bank.external()["externalAccountId"], 100, rail=rail)["paymentOrderId"]
    if made_at is not None:
        PaymentOrder.objects.filter(pk=order_id).update(created_at=made_at)
    return order_id


def state(order_id: str) -> tuple[str, date | None]:
    got = PaymentOrder.objects.get(pk=order_id)
    return got.status, got.effective_date


def test_the_window_before_a_fed_holiday_the_institution_does_not_know_skips_it():
    bank = ach_bank()
    assert is_business_day(bank.institution, COLUMBUS_DAY)  # no Holiday row: open for it
    pay = order(bank)

    rail_file = cutoff(bank, D("2027-10-08"))  # the Friday before

    assert state(pay) == ("scheduled", D("2027-10-12"))
    headers = {header for header, _ in parse(bytes(rail_file.content)).entries()}
    assert {header.effective_entry_date for header in headers} == {D("2027-10-12")}


def test_no_window_runs_on_a_fed_holiday_the_orders_wait_for_the_next_ach_day():
    bank = ach_bank(same_day_cutoffs=["10:30"])
    next_day, same_day = order(bank), order(bank, rail="ach_same_day")

    assert rails_at(local(COLUMBUS_DAY, 23)).files_written == []
    assert state(next_day) == state(same_day) == ("approved", None)

    tuesday = D("2027-10-12")
    assert len(rails_at(local(tuesday, 10, 30)).files_written) == 1  # the same-day window
    assert state(same_day) == ("settled", tuesday)  # a same-day entry settles that day
    assert state(next_day) == ("approved", None)
    assert len(rails_at(local(tuesday, 16, 45)).files_written) == 1
    assert state(next_day) == ("sent", D("2027-10-13"))


def test_no_window_runs_on_the_institutions_own_holiday_on_a_fed_business_day():
    bank = ach_bank(same_day_cutoffs=["10:30"])
    closed = D("2027-10-13")  # a Wednesday the Fed is open
    holiday_add(institution=bank.institution, date=closed, name="Founders' Day")
    pay, same_day = order(bank), order(bank, rail="ach_same_day")

    cutoff(bank, D("2027-10-12"))  # the Tuesday's next-day window: settles after the holiday
    assert state(pay) == ("scheduled", D("2027-10-14"))
    assert rails_at(local(closed, 23)).files_written == []
    assert state(same_day) == ("approved", None)


# (window date, the 16:45 window's instant in UTC): either side of each change of the clocks.
DST = [
    (D("2027-03-12"), datetime(2027, 3, 12, 21, 45, tzinfo=UTC)),  # Friday before: EST
    (D("2027-03-15"), datetime(2027, 3, 15, 20, 45, tzinfo=UTC)),  # Monday after: EDT
    (D("2027-11-05"), datetime(2027, 11, 5, 20, 45, tzinfo=UTC)),  # Friday before: EDT
    (D("2027-11-08"), datetime(2027, 11, 8, 21, 45, tzinfo=UTC)),  # Monday after: EST
]


@pytest.mark.parametrize(("day", "instant"), DST)
def test_the_boundary_second_across_a_change_of_the_clocks(day, instant):
    bank = ach_bank()
    assert window_instant(bank.institution, day, "16:45") == instant
    early = order(bank, made_at=local(day, 16, 44, 59))
    late = order(bank, made_at=local(day, 16, 45, 0))
    assert local(day, 16, 45) == instant

    assert rails_at(local(day, 16, 44, 59)).files_written == []  # a second early: no window
    assert len(rails_at(instant).files_written) == 1

    assert state(early)[0] == "sent"  # in the 16:45 file
    assert state(late) == ("approved", None)  # waits for the next window


def test_return_windows_count_ach_days():
    """Two banking days after Friday 2027-10-08 are Tuesday and Wednesday: Columbus Day is
    none. A prenote settled that Friday is verified on the Thursday; an R01 is late then."""
    bank = ach_bank()
    external = bank.external()["externalAccountId"]
    created(bank.api.post(f"/external-accounts/{external}/prenotes", {}), "v2")
    cutoff(bank, D("2027-10-07"))
    prenote = PaymentOrder.objects.get(prenote=True)
    assert prenote.effective_date == D("2027-10-08")

    rails_at(local(D("2027-10-08"), 9))  # delivered, settled
    rails_at(local(D("2027-10-13"), 9))
    assert ExternalAccount.objects.get(pk=external).status == "verifying"
    assert is_late(prenote, return_reason("R01"), D("2027-10-13")) is False
    assert is_late(prenote, return_reason("R01"), D("2027-10-14")) is True
    rails_at(local(D("2027-10-14"), 9))
    assert ExternalAccount.objects.get(pk=external).status == "verified"
