"""Back-valued money caught up (docs/interest.md, "Back-valued money"): a dispute's provisional
credit, booked after its days were accrued and valued on the day of the payment it disputes,
makes one adjustment row per day it changes, of exactly the difference, found and booked on the
day of the run (the current period); the accrual rows are never changed; a second run, or a run
over the same window again, writes nothing more; verify_ledger holds with the adjustments in
the books.

Europe/Berlin (UTC+1 in November). 10,000 at 3.65 %, act/365F, earns 1 a day; 6,000 earns 3/5."""

from datetime import date
from decimal import Decimal
from fractions import Fraction

import pytest

from accounts.models import Account, Journal
from accounts.posting import Move, credit, debit, journal_new, post
from accounts.services import internal_account
from accounts.verification import ledger_breaches
from interest.accrual import interest_accrue
from interest.models import AccrualBook, InterestAccrual, InterestAdjustment
from interest.selectors import adjustments_in
from tests.accounts.api.helpers import created
from tests.accounts.api.test_statements import Clock
from tests.authorizations.helpers import START, approved, funded, presented
from tests.conftest import error_of
from tests.disputes.helpers import filed, moved

from .accruing import accruing_world, utc
from .helpers import days_of, terms_created

pytestmark = pytest.mark.django_db


def test_a_back_valued_credit_is_caught_up_once_by_adjustments(api_v2, institution):
    institution.time_zone = "Europe/Berlin"
    institution.save(update_fields=["time_zone"])
    with Clock(utc("2026-11-02T09:00:00")) as clock:
        card = funded(api_v2)  # 100.00 on the 2nd
        # Opened on the 2nd too (the card helpers' account keeps the real clock's instant).
        Account.objects.filter(pk=card.account_id).update(created_at=utc("2026-11-02T09:00:00"))
        rid = Account.objects.get(pk=card.account_id).product_id
        terms_created(
            api_v2,
            rid,
            effectiveDate="2026-11-02",
            dayCount="act_365f",
            tiering="whole",
            depositTiers=[{"fromBalance": 0, "rate": "3.65"}],
            minimumBalance=0,
        )
        clock.set(utc("2026-11-05T10:00:00"))
        payment = approved(api_v2, card.card_id, 4_000)
        presented(api_v2, payment["authorizationId"])  # 60.00 left from the 5th

        # The 2nd to the 9th accrued: 3 * 1 + 5 * 3/5 = 6.
        clock.set(utc("2026-11-10T00:30:00"))
        first = interest_accrue()
        # On the 10th the dispute's provisional credit, valued on the 5th.
        clock.set(utc("2026-11-10T12:00:00"))
        dispute_id = filed(
            api_v2, payment["authorizationId"], cardholderContactedAt="2026-11-10T09:30:00.000Z"
        )["disputeId"]
        moved(api_v2, dispute_id, "submitted")

        # After the 10th: its day accrued (1), then the 5th to the 9th caught up.
        clock.set(utc("2026-11-11T00:30:00"))
        second = interest_accrue()
        again = interest_accrue()
        # The same window looked at again (two runs racing, a crash): nothing more.
        book = AccrualBook.objects.get(institution=institution)
        watermark = book.adjusted_until
        AccrualBook.objects.filter(pk=book.pk).update(adjusted_until=utc("2026-11-10T00:00:00"))
        rerun = interest_accrue()
        shown = days_of(api_v2, card.account_id, "2026-11-02", "2026-11-10")

    assert (first.days, first.accruals, first.adjustments) == (8, 8, 0), first
    assert (second.days, second.accruals, second.adjustments, second.journals) == (1, 1, 5, 2)
    assert (again.adjustments, rerun.adjustments, rerun.journals) == (0, 0, 0)
    assert AccrualBook.objects.get(pk=book.pk).adjusted_until == utc("2026-11-11T00:20:00")
    assert watermark == utc("2026-11-11T00:20:00")  # the run's instant less SETTLE

    # The rows keep the balance they were accrued on; each adjustment is the difference, 2/5.
    rows = InterestAccrual.objects.filter(account_id=card.account_id).order_by("day")
    assert [(r.day.day, r.balance, r.accrual) for r in rows] == [
        (2, START, 1),
        (3, START, 1),
        (4, START, 1),
        *[(day, START - 4_000, Decimal("0.6")) for day in range(5, 10)],
        (10, START, 1),
    ]
    adjustments = InterestAdjustment.objects.order_by("day")
    assert [(a.day.day, a.kind, a.balance, a.difference, a.found_on) for a in adjustments] == [
        (day, "deposit", START, Decimal("0.4"), date(2026, 11, 11)) for day in range(5, 10)
    ]
    # Rows plus adjustments are the days as they are computed now: 9 days of 1.
    assert shown["depositTotal"] == "9.000000000000"

    # Found on the 11th (the run's day in Berlin: in the period being accrued, never one already
    # posted), booked in one journal from then: 6 + 1 + 2 = 9 accrued, 9 booked.
    booking = adjustments[0].booking
    assert {a.booking_id for a in adjustments} == {booking.pk}
    assert (booking.day, booking.deposit_accrued, booking.deposit_amount) == (
        date(2026, 11, 11),
        Decimal("2"),
        2,
    )
    assert booking.journal.value_at is None
    book = AccrualBook.objects.get(pk=book.pk)
    assert (book.deposit_accrued, book.deposit_booked) == (Decimal("9"), 9)
    payable = Account.objects.get(institution=institution, internal_code="interest_payable")
    assert payable.posted == 9

    # What posting adds to a period's accruals: the adjustments found in it.
    assert adjustments_in(
        account_ids=[card.account_id], first=date(2026, 11, 1), last=date(2026, 11, 30)
    ) == {(card.account_id, "deposit"): Fraction(2)}
    assert (
        adjustments_in(
            account_ids=[card.account_id], first=date(2026, 11, 12), last=date(2026, 11, 30)
        )
        == {}
    )
    assert ledger_breaches() == []


def test_a_back_valued_debit_turns_a_deposit_day_into_an_overdraft_day(api_v2, institution):
    """tests/interest/accruing.py: `a` holds 1,000 (0.1 a day at 3.65 %), overdrafts at 7.3 %.
    A debit of 3,000 booked on the 3rd, valued on the 2nd: the 2nd was a deposit day of 0.1 and
    is an overdraft day of 2,000 * 7.3 % / 365 = 0.4; its deposit row stays, an adjustment takes
    the 0.1 back and another adds the 0.4."""
    with Clock(utc("2027-03-01T09:00:00")) as clock:
        world = accruing_world(api_v2)
        clock.set(utc("2027-03-03T01:00:00"))
        interest_accrue()  # the 1st and 2nd
        clock.set(utc("2027-03-03T12:00:00"))
        journal = journal_new(institution_id=institution.pk, kind=Journal.Kind.ADJUSTMENT)
        journal.value_at = utc("2027-03-02T10:00:00")
        funding = internal_account(institution=institution, code="funding", currency="EUR")
        post(
            institution_id=institution.pk,
            currency="EUR",
            moves=[debit(world["a"], 3_000), Move(funding.pk, "", 3_000)],
            journal=journal,
        )
        clock.set(utc("2027-03-04T01:00:00"))
        report = interest_accrue()  # the 3rd, then the 2nd caught up

    assert (report.days, report.accruals, report.adjustments) == (1, 2, 2)
    assert sorted(
        InterestAdjustment.objects.values_list("account_id", "day", "kind", "difference")
    ) == [
        (world["a"], date(2027, 3, 2), "deposit", Decimal("-0.1")),
        (world["a"], date(2027, 3, 2), "overdraft", Decimal("0.4")),
    ]
    row = InterestAccrual.objects.get(account_id=world["a"], day=date(2027, 3, 2))
    assert (row.kind, row.balance, row.accrual) == ("deposit", 1_000, Decimal("0.1"))
    # Deposits 1.1 + 1.1 + 1 (b) - 0.1 = 3.1, 3 booked; overdrafts 0.4 (3rd) + 0.4 = 0.8, 1.
    book = AccrualBook.objects.get(institution=institution)
    assert (book.deposit_accrued, book.deposit_booked) == (Decimal("3.1"), 3)
    assert (book.overdraft_accrued, book.overdraft_booked) == (Decimal("0.8"), 1)
    assert ledger_breaches() == []


def test_the_settlement_catches_back_valued_money_up_first(api_v2, institution):
    """tests/interest/accruing.py: `b` holds 10,000 (1 a day). The 1st to the 4th accrued (4);
    on the 5th a credit of 10,000 valued on the 2nd (b earns 2 a day from then: 1 more on the
    2nd, 3rd and 4th), and at once the settlement, minutes after the credit (the job would
    leave it to its next run): it finds the 3 adjustments, on the 4th, and posts 4 + 3 = 7.
    Then another credit valued on the 3rd: everything through the 4th is posted, but b may not
    close, its interest not caught up. The job later recomputes the first credit's days to no
    difference (the settlement left the watermark) and catches the second up."""
    with Clock(utc("2027-03-01T09:00:00")) as clock:
        world = accruing_world(api_v2)
        b = world["b"]
        clock.set(utc("2027-03-05T01:00:00"))
        interest_accrue()  # the 1st to the 4th
        funding = internal_account(institution=institution, code="funding", currency="EUR")

        def back_valued(amount, value_at):
            journal = journal_new(institution_id=institution.pk, kind=Journal.Kind.ADJUSTMENT)
            journal.value_at = utc(value_at)
            post(
                institution_id=institution.pk,
                currency="EUR",
                moves=[credit(b, amount), Move(funding.pk, "", -amount)],
                journal=journal,
            )

        clock.set(utc("2027-03-05T12:00:00"))
        back_valued(10_000, "2027-03-02T10:00:00")
        clock.set(utc("2027-03-05T12:01:00"))
        settled = api_v2.post(f"/accounts/{b}/interest/settlements", {})
        breaches = ledger_breaches()
        back_valued(1_000, "2027-03-03T10:00:00")
        clock.set(utc("2027-03-05T12:02:00"))
        refused = api_v2.patch(f"/accounts/{b}", {"status": "closed"})
        clock.set(utc("2027-03-06T01:00:00"))
        report = interest_accrue()  # the 5th, then the second credit's 3rd and 4th

    assert settled.status_code == 201, settled.json()
    assert [
        (p["firstDay"], p["lastDay"], p["trigger"], p["accrued"], p["amount"])
        for p in created(settled, "v2")["postings"]
    ] == [("2027-03-01", "2027-03-04", "settlement", "7.000000000000", 7)]
    assert sorted(
        InterestAdjustment.objects.filter(found_on=date(2027, 3, 4)).values_list(
            "account_id", "day", "difference"
        )
    ) == [(b, date(2027, 3, day), Decimal("1")) for day in (2, 3, 4)]
    assert breaches == []
    assert refused.status_code == 422
    assert error_of(refused, "v2")["code"] == "interest_not_posted"
    # 1,000 more from the 3rd: 0.1 a day on the 3rd and 4th, found on the 6th.
    assert report.adjustments == 2
    assert sorted(
        InterestAdjustment.objects.filter(found_on=date(2027, 3, 6)).values_list(
            "day", "difference"
        )
    ) == [(date(2027, 3, 3), Decimal("0.1")), (date(2027, 3, 4), Decimal("0.1"))]
    assert ledger_breaches() == []
