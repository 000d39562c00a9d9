"""The cut-off and the bank's files at the same moment in two places (docs/payments.md, "Exactly
once"): two payments jobs in two real processes at the same instant, two cut-offs of one window
and of two windows in threads with their own connections, one return file uploaded twice at
once, and a customer's refund of a direct debit claimed twice at once, and its refusal of one.
Each time: one file per window, every order in exactly one file, no trace number twice, the
money moved once, the ledger whole."""

from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.verification import ledger_breaches
from events.models import Event
from payments.iso20022.pain001 import read_initiation as read_pain001
from payments.iso20022.pain008 import read_initiation as read_pain008
from payments.models import DebtorRefund, DebtorRefusal, PaymentOrder, Rail, RailFile, RailNotice
from payments.nacha.file import parse
from payments.services.cutoff import cutoff_run
from tests.accounts.api.helpers import created
from tests.accounts.ledger.helpers import run_threads
from tests.conftest import Api
from tests.payments.helpers import (
    ach_bank,
    applied_collection,
    bank_answers,
    cutoff,
    local,
    rails_at,
    sepa_bank,
    upload_body,
)
from tests.payments.processes import RailsProcess
from tests.payments.test_mandates import collection, first_cutoff, mandate_body
from tests.payments.test_orders import business_day, internal
from tests.payments.test_sepa_interbank import LOADED, interbank_bank

pytestmark = pytest.mark.django_db(transaction=True)


def orders_of(bank, count: int, **fields) -> list[str]:
    """`count` orders, credits and debits in turn, of 100, 200... to one external account."""
    external = bank.external()["externalAccountId"]
    return [
        bank.ordered(external, 100 * (n + 1), "credit" if n % 2 else "debit", **fields)[
            "paymentOrderId"
        ]
        for n in range(count)
    ]


def assert_each_in_one_file(order_ids: list[str]) -> list[RailFile]:
    """Every order in a file, once: each file's entries are its orders' trace numbers, and no
    trace number is in two entries, of one file or of two. Returns the outbound files."""
    files = list(RailFile.objects.filter(direction="outbound").order_by("pk"))
    orders = PaymentOrder.objects.filter(pk__in=order_ids)
    assert all(order.file_id is not None for order in orders)
    entries = Counter(
        entry.detail.trace_number
        for rail_file in files
        for _header, entry in parse(bytes(rail_file.content)).entries()
    )
    assert set(entries.values()) == {1}
    assert set(entries) == {order.trace_number for order in orders}
    assert len(entries) == len(order_ids)
    return files


def test_two_payments_jobs_in_two_processes_at_once_write_the_window_once(rails_dir):
    """Two processes, each connected and waiting, run the job at the same instant: one file,
    delivered once into the outbox, each order scheduled and sent once, each credit's money
    taken once."""
    bank = ach_bank(load_amount=10_000)
    order_ids = orders_of(bank, 6)
    instant = local(business_day(), 17)
    jobs = [RailsProcess(rails_dir, instant) for _ in range(2)]
    try:
        for job in jobs:
            job.go()
        assert [job.finish() for job in jobs] == [0, 0], [job.err for job in jobs]
    finally:
        for job in jobs:
            job.kill()

    [rail_file] = assert_each_in_one_file(order_ids)
    assert rail_file.pk in [pk for job in jobs for pk in job.result()["files_written"]]
    assert rail_file.status == "delivered"
    outbox = rails_dir / bank.institution.pk / "ach" / "outbox"
    assert [path.name for path in outbox.iterdir()] == [rail_file.name]
    assert set(PaymentOrder.objects.values_list("status", flat=True)) == {"sent"}
    for event in ("payment_order.scheduled", "payment_order.sent"):
        emitted = Event.objects.filter(type=event).values_list("object_id", flat=True)
        assert sorted(emitted) == sorted(order_ids), event
    credits = 200 + 400 + 600
    assert bank.balances() == (10_000 - credits, 0, 10_000 - credits)
    assert internal(bank, "rail_clearing") == credits
    assert ledger_breaches() == []


def test_two_cutoffs_of_one_window_at_once_write_one_file():
    bank = ach_bank(load_amount=10_000)
    order_ids = orders_of(bank, 6)
    day = business_day()

    written = run_threads(2, lambda _: cutoff(bank, day))

    [rail_file] = assert_each_in_one_file(order_ids)
    # The second waited for the first (the institution's cut-offs are serialized) and found
    # the window's file.
    assert [each.pk for each in written] == [rail_file.pk, rail_file.pk]
    assert rail_file.entry_count == 6
    assert internal(bank, "rail_clearing") == 200 + 400 + 600
    assert ledger_breaches() == []


def test_two_windows_of_one_institution_at_once_never_draw_the_same_trace_or_modifier():
    """A same-day and the next-day window's cut-offs at once: two files, each its own file id
    modifier, their trace numbers following one another."""
    bank = ach_bank(load_amount=10_000, same_day_cutoffs=["10:00"])
    day = business_day()
    same_day = orders_of(bank, 4, rail=Rail.ACH_SAME_DAY)
    next_day = orders_of(bank, 4)
    windows = [("10:00", Rail.ACH_SAME_DAY), ("16:45", Rail.ACH)]

    written = run_threads(2, lambda index: cutoff(bank, day, *windows[index]))

    files = assert_each_in_one_file(same_day + next_day)
    assert len(files) == 2 and all(written)
    assert sorted(rail_file.file_id_modifier for rail_file in files) == ["A", "B"]
    traces = PaymentOrder.objects.values_list("trace_number", flat=True)
    assert sorted(int(trace[-7:]) for trace in traces) == list(range(1, 9))
    assert ledger_breaches() == []


def test_a_sepa_windows_cutoffs_twice_at_once_write_one_pain001_and_one_pain008():
    """SEPA's cut-offs take the same lock as ACH's: the credit transfers' and the direct
    debits' cut-offs of one window, each run twice at once, write one pain.001 and one pain.008,
    each order in one of them once, each credit's money taken once."""
    bank = sepa_bank(load_amount=10_000, creditor_identifier="DE98ZZZ09999999999")
    external = bank.external()["externalAccountId"]
    credits = [bank.ordered(external, 100 * n)["paymentOrderId"] for n in (1, 2, 3)]
    mandate = created(bank.api.post("/mandates", mandate_body(external)), "v2")["mandateId"]
    debits = [
        created(collection(bank, external, mandate, 50 * n), "v2")["paymentOrderId"] for n in (1, 2)
    ]
    day = first_cutoff(bank)
    rails = [Rail.SEPA_CT, Rail.SEPA_DD, Rail.SEPA_CT, Rail.SEPA_DD]

    written = run_threads(
        4,
        lambda index: cutoff_run(
            profile=bank.profile, rail=rails[index], window_date=day, window="15:00"
        ),
    )

    transfers, collections = RailFile.objects.filter(direction="outbound").order_by("rail")
    assert (transfers.rail, collections.rail) == (Rail.SEPA_CT, Rail.SEPA_DD)
    assert [each.pk for each in written] == [transfers.pk, collections.pk] * 2
    orders = PaymentOrder.objects.in_bulk(credits + debits)
    (payment,) = read_pain001(bytes(transfers.content)).payments
    assert sorted(each.end_to_end_id for each in payment.transfers) == sorted(
        orders[pk].end_to_end_id for pk in credits
    )
    # The mandate's first collection FRST, the second RCUR: one instruction each.
    payments = read_pain008(bytes(collections.content)).payments
    assert sorted(payment.sequence_type for payment in payments) == ["FRST", "RCUR"]
    assert sorted(each.end_to_end_id for payment in payments for each in payment.debits) == (
        sorted(orders[pk].end_to_end_id for pk in debits)
    )
    assert {orders[pk].file_id for pk in credits} == {transfers.pk}
    assert {orders[pk].file_id for pk in debits} == {collections.pk}
    assert bank.balances() == (10_000 - 600, 0, 10_000 - 600)
    assert ledger_breaches() == []


def test_the_same_return_file_uploaded_twice_at_once_applies_once(rails_dir):
    """The bank's R01 of a settled debit, its bytes uploaded by two clients at once: both are
    answered the one file, the return booked once."""
    bank = ach_bank(load_amount=0)
    made = bank.ordered(bank.external("1111000001")["externalAccountId"], 5_000, "debit")
    rails_at(local(business_day(), 17))
    effective = PaymentOrder.objects.get(pk=made["paymentOrderId"]).effective_date
    rails_at(local(effective, 9))
    [name] = bank_answers(bank, effective + timedelta(days=1))  # the R01, the day after
    body = upload_body((rails_dir / bank.institution.pk / "ach" / "inbox" / name).read_bytes())
    clients = [Api("v2", bank.api.key) for _ in range(2)]  # a test client each

    answers = run_threads(2, lambda index: created(clients[index].post("/rail-files", body), "v2"))

    [inbound] = RailFile.objects.filter(direction="inbound")
    assert [answer["fileId"] for answer in answers] == [inbound.pk, inbound.pk]
    assert RailNotice.objects.count() == 1
    assert bank.get(made["paymentOrderId"])["status"] == "returned"
    assert Event.objects.filter(type="payment_order.returned").count() == 1
    assert Event.objects.filter(type="rail_file.received").count() == 1
    assert bank.balances() == (0, 0, 0)
    assert internal(bank, "rail_settlement") == 0
    assert ledger_breaches() == []


def test_a_collection_refunded_twice_at_once_is_refunded_once():
    """The customer's refund of an inbound direct debit claimed by two clients at once: one
    refund (the entry's lock, and the unique index `debtor_refund_once` behind it), the other
    409, the money back once, one pacs.004."""
    bank = interbank_bank()
    inbound = applied_collection(bank.institution, bank.account_id)
    clients = [Api("v2", bank.api.key) for _ in range(2)]  # a test client each
    path = f"/inbound-entries/{inbound.pk}/refunds"

    answers = run_threads(2, lambda index: clients[index].post(path, {}))

    assert sorted(answer.status_code for answer in answers) == [201, 409]
    assert DebtorRefund.objects.count() == 1
    assert RailFile.objects.filter(name__contains="pacs004").count() == 1
    assert Event.objects.filter(type="inbound_entry.refunded").count() == 1
    assert bank.balances()[0] == LOADED
    assert ledger_breaches() == []


def test_a_collection_refused_twice_at_once_is_refused_once():
    """The customer's refusal of a presented direct debit sent by two clients at once: one
    refusal (the entry's lock, and the unique index `debtor_refusal_once` behind it), the other
    409, one pacs.002."""
    bank = interbank_bank()
    due = timezone.localdate() + timedelta(days=5)
    inbound = applied_collection(bank.institution, bank.account_id, settles_on=due, settle=False)
    clients = [Api("v2", bank.api.key) for _ in range(2)]  # a test client each
    path = f"/inbound-entries/{inbound.pk}/refusals"

    answers = run_threads(2, lambda index: clients[index].post(path, {}))

    assert sorted(answer.status_code for answer in answers) == [201, 409]
    assert DebtorRefusal.objects.count() == 1
    assert RailFile.objects.filter(name__contains="pacs002").count() == 1
    assert Event.objects.filter(type="inbound_entry.rejected").count() == 1
